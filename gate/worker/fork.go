//go:build linux

package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gradegate/gradegate/gate/sandbox"
)

// endWait bounds how long a variant's child may take to finish the request
// it is running and exit when its runner no longer needs it; past that the
// pair is killed and the zygote started afresh.
const endWait = 2 * time.Second

// Fork returns a runner that grades with src instead of p's grader, for
// mutation testing: its processes are children forked from pristine
// processes of p, started in p's sandbox slots exactly like its grading
// processes but without loading p's grader, so src loads as the first
// grader of a fresh interpreter and inherits nothing the loaded grader did
// (module state, a flag that refuses a second load, a digest of its own
// source). A fork costs about a millisecond plus src's own load, where
// starting a sandboxed interpreter costs tens.
//
// The returned pool has one process, which borrows one of p's processes
// (the zygote) until the child is stopped: it never holds one zygote while
// waiting for another, so up to Workers forks of p graded at once each own
// their zygote and never wait on each other's. A zygote that served a fork
// serves only forks after it, so p's own grading starts fresh processes. A
// child that dies, times out or is killed takes its zygote with it. Close
// the returned pool before p. A src that does not load gives a *LoadError.
func (p *Pool) Fork(ctx context.Context, src []byte) (*Pool, error) {
	if p.parent != nil {
		return nil, errors.New("worker: Fork of a forked pool")
	}
	line, err := json.Marshal(map[string]any{"op": "fork", "source": src})
	if err != nil {
		return nil, fmt.Errorf("worker: fork request: %w", err)
	}
	cfg := p.cfg
	cfg.Source = src
	cfg.Workers = 1
	v := &Pool{
		cfg:    cfg,
		argv:   p.argv,
		init:   append(line, '\n'),
		parent: p,
	}
	v.slots.init(cfg.Workers, warmth)
	for i := range cfg.Workers {
		v.release(&slot{id: i, alt: -1})
	}
	v.stopWatch = context.AfterFunc(ctx, func() { v.shut(fmt.Errorf("worker: pool context: %w", context.Cause(ctx))) })
	s, err := v.acquire(ctx)
	if err != nil {
		v.Close()
		return nil, err
	}
	loadErr, err := v.startSlot(ctx, s)
	v.release(s)
	if err == nil && loadErr != nil {
		err = loadErr
	}
	if err != nil {
		v.Close()
		return nil, err
	}
	return v, nil
}

// Workers is how many processes p grades on at once: for a pool that is
// forked from, how many forks of it can each own a zygote.
func (p *Pool) Workers() int { return p.cfg.Workers }

// forkProcess borrows a zygote from the parent pool and forks a child that
// loads v's source. The returned proc is the zygote's, talking to the child.
func (v *Pool) forkProcess(ctx context.Context) (*proc, *LoadError, error) {
	p := v.parent
	zs, err := p.acquire(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := p.pristineZygote(ctx, zs); err != nil {
		p.release(zs)
		return nil, nil, err
	}
	pr := zs.proc
	zs.proc = nil
	pr.lender = zs
	pr.forked = true
	v.mu.Lock()
	v.live[pr] = true
	closed := v.closed
	v.mu.Unlock()
	if closed != nil {
		return nil, nil, errors.Join(closed, v.stopProc(pr))
	}
	pr.resetOutput()
	pr.exitedAlone = false
	start := time.Now()
	init := v.init
	if pr.resync {
		init = append([]byte{'\n'}, init...)
		pr.resync = false
	}
	line, res := pr.exchange(ctx, init, v.loadTimeout())
	pr.takeOutput(-1)
	if res == gotLine {
		var r response
		if err := json.Unmarshal(line, &r); err == nil && r.Op == "ready" {
			pr.takesCtx = r.Ctx
			return pr, nil, nil
		} else if err == nil && r.Op == "load_error" {
			// The child exits by itself after a load error: nothing to end.
			pr.childGone = true
			return nil, r.loadError(r.output(pr.output, v.cfg.OutputLimit)), v.stopProc(pr)
		}
		res = garbled
	}
	if res == cancelled {
		return nil, nil, errors.Join(fmt.Errorf("worker: %w", ctx.Err()), v.stopProc(pr))
	}
	if reason := v.closedReason(); reason != nil {
		return nil, nil, errors.Join(reason, v.stopProc(pr))
	}
	pr.kill()
	stopErr := v.stopProc(pr)
	o := v.deadOutcome(pr, res, time.Since(start), nil)
	if res == timedOut {
		o.Error.Message = fmt.Sprintf("the grader took longer than load_timeout_seconds=%d to load; its process was killed", v.cfg.LoadTimeoutSeconds)
	}
	return nil, &LoadError{Err: *o.Error, Output: o.Output}, stopErr
}

// pristineZygote makes s's process one that loaded no grader: a process
// that loaded p's grader, and a spare loading it, are stopped first.
func (p *Pool) pristineZygote(ctx context.Context, s *slot) error {
	if s.proc != nil && s.proc.pristine {
		return nil
	}
	var errs []error
	if s.proc != nil {
		errs = append(errs, p.retire(s))
	}
	if sp := s.spare; sp != nil {
		<-sp.done
		s.spare = nil
		if sp.proc != nil {
			errs = append(errs, p.stopProc(sp.proc))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	pr, loadErr, err := p.launch(ctx, s.id, p.pristine)
	if err == nil && loadErr != nil {
		// No grader loads there: a failure is the worker's, not src's.
		err = fmt.Errorf("worker: starting the process to fork from: %w", loadErr)
	}
	if err != nil {
		return err
	}
	pr.pristine, pr.forked = true, true
	s.proc, s.served = pr, 0
	return nil
}

// returnZygote ends the child pr talks to and hands the zygote back to the
// parent pool, or stops the pair when the child cannot be ended cleanly.
func (v *Pool) returnZygote(pr *proc) error {
	p := v.parent
	zs := pr.lender
	pr.lender = nil
	v.mu.Lock()
	delete(v.live, pr)
	v.mu.Unlock()
	// childGone is the child's, not the zygote's: it is cleared before the
	// zygote goes back, when another pool may take it at once.
	ended := pr.childEnded
	pr.childEnded = false
	if !pr.wasKilled() && (ended || pr.endChild(!pr.childGone)) && groupEmpties(pr.pid) {
		// Reused only when nothing the child started is left in the
		// group: a leftover (or a zombie not yet reaped) would count
		// against the uid's process limit of the next variant, which
		// would then fail to fork or not depending on timing.
		pr.childGone = false
		pr.resync = pr.resync || ended
		zs.proc = pr
		p.release(zs)
		return nil
	}
	err := p.stopProc(pr)
	pr.childGone = false
	zs.proc = nil
	p.release(zs)
	return err
}

// strayWait bounds how long a zygote waits for what its ended child
// started (a forked grandchild on its way out) to be gone before it is
// reused; past it the pair is stopped, which kills and reaps the group.
const strayWait = 250 * time.Millisecond

// groupEmpties reports whether zygote pid's process group holds nothing
// but the zygote, waiting up to strayWait for it to. Either way the next
// variant starts on a uid with no process of an earlier one: only the
// cost (a reused zygote or a fresh one) depends on timing.
func groupEmpties(pid int) bool {
	for end := time.Now().Add(strayWait); ; time.Sleep(2 * time.Millisecond) {
		if !sandbox.GroupHasOthers(pid) {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}

// endChild asks the child to stop (unless ask is false: it is exiting by
// itself) and waits for the zygote to report it ended cleanly. Requests the
// child was still sent are answered first and dropped.
func (pr *proc) endChild(ask bool) bool {
	deadline := time.Now().Add(endWait)
	var msg []byte
	if ask {
		msg = []byte("{\"op\":\"end\"}\n")
	}
	for time.Now().Before(deadline) {
		line, res := pr.exchange(context.Background(), msg, time.Until(deadline))
		msg = nil
		if res != gotLine {
			return false
		}
		var r response
		if json.Unmarshal(line, &r) != nil {
			return false
		}
		if r.Op == "ended" {
			pr.resetOutput()
			return r.Died != nil && r.Died.Signal == 0 && r.Died.Status == 0
		}
	}
	return false
}
