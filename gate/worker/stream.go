//go:build linux

package worker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/manifest"
)

var _ grading.StreamRunner = (*Pool)(nil)

// Window bounds: how much one process has queued ahead of the case it is
// grading. The count adapts to the grader's speed (windowTime of work), so a
// fast grader never waits for the gate and a slow one does not hoard cases
// another process could take. A window of 1,024 fast cases, and as many
// prepared ahead of the windows, keep both sides busy through the moments
// either is not scheduled: with 256 of each, a million-row run left a core
// idle about a tenth of the time, each side waiting on the other, and
// switched contexts a third more often.
const (
	windowMaxCount = 1024
	windowMaxBytes = 1 << 20
	windowTime     = 16 * time.Millisecond
	// streamAhead is how many requests Stream prepares ahead of the windows
	// (at most aheadBytes of them).
	streamAhead = 1024
)

// gatherFor is how long pump lets the results of a fast grader gather
// before it reads them (proc.gather), and gatherAhead how much work its
// process must have queued for that: the worker goes on with it meanwhile,
// so it never waits for gradegate. A pool of two workers grades 100,000
// fast cases about 1.3 times faster for it (docs/performance.md); a result
// is read at most gatherFor after it was written, which moves the start of
// the next case's timeout by as much.
const (
	gatherFor   = 200 * time.Microsecond
	gatherAhead = 4 * gatherFor
)

// gatherWait is how long pump may let results gather for a process with
// queued requests in its window whose cases take caseTime each (0: not yet
// known): gatherFor when they hold gatherAhead of work, else 0.
func gatherWait(caseTime time.Duration, queued int) time.Duration {
	if caseTime <= 0 || time.Duration(queued)*caseTime < gatherAhead {
		return 0
	}
	return gatherFor
}

// diskCheckAfter is how long a case runs before its end is followed by a
// measure of the scratch directory (sandbox.Guard.CheckDisk): writing a
// disk budget takes far longer, and faster cases pay nothing.
const diskCheckAfter = 50 * time.Millisecond

// Stream grades tasks as next produces them, each process keeping a window
// of requests queued ahead so it never waits for the gate. See
// gate.StreamRunner for the contract. next runs in a goroutine of its own,
// a little ahead of the graders; when Stream stops early (an error, ctx
// ending) it does not wait for a call of next in progress, and calls it no
// more.
func (p *Pool) Stream(ctx context.Context, next func() (grading.Task, bool, error), emit func(seq int, o grading.Outcome) error) error {
	batch := p.cfg.BatchSize
	if batch <= 0 {
		batch = DefaultStreamBatch
	}
	// The feeder keeps requests ready for the windows: enough that a
	// window is refilled at once, few enough that a stream of large tasks
	// does not pile up in memory.
	return streamOn(ctx, p, p.cfg.shape(), p.cfg.Workers, streamAhead, batch, next, emit)
}

// Grade grades tasks and returns one Outcome per task, in order. The error is
// set only when gradegate itself failed (a process could not be started, the
// pool was closed, ctx ended); a grader's misbehaviour is an Outcome. Under
// the batch contract the tasks of one call go into batches of BatchSize, or
// one batch when it is 0.
func (p *Pool) Grade(ctx context.Context, tasks []grading.Task) ([]grading.Outcome, error) {
	return gradeTasks(tasks, p.cfg.BatchSize, func(next func() (grading.Task, bool, error), emit func(int, grading.Outcome) error, batch int) error {
		return streamOn(ctx, p, p.cfg.shape(), p.cfg.Workers, streamAhead, batch, next, emit)
	})
}

// window is what one process has been sent and not yet answered, oldest
// first. The oldest is the case the process is running (or about to run).
type window struct {
	q        queue[*request]
	bytes    int
	answered time.Time // the last answer, or the process becoming ready
}

// n is how many requests wait for their answer.
func (w *window) n() int { return w.q.len() }

// first is the oldest unanswered request.
func (w *window) first() *request { return w.q.live()[0] }

func (w *window) push(r *request) {
	w.q.push(r)
	w.bytes += len(r.line)
}

func (w *window) pop() *request {
	r := w.first()
	w.q.drop(1)
	w.bytes -= len(r.line)
	return r
}

// unanswered is a copy of the requests not yet answered, then more.
func (w *window) unanswered(more []*request) []*request {
	return append(append(make([]*request, 0, w.n()+len(more)), w.q.live()...), more...)
}

// started is when the oldest request's case started: not before the
// previous answer, nor before it was handed over.
func (w *window) started() time.Time {
	h := w.first()
	if h.queued.After(w.answered) {
		return h.queued
	}
	return w.answered
}

// serve grades requests on slot s until reqs closes or ctx ends, starting
// with first. It returns an error only for a tool failure.
func (p *Pool) serve(ctx context.Context, s *slot, first *request, reqs <-chan *request, deliver func(int, grading.Outcome)) error {
	retry := []*request{first}
	closed := false
	for {
		if len(retry) == 0 {
			if closed {
				return nil
			}
			select {
			case r, ok := <-reqs:
				if !ok {
					return nil
				}
				retry = append(retry, r)
			case <-ctx.Done():
				return nil
			}
		}
		if s.proc != nil && s.proc.forked && p.parent == nil {
			// It lent itself to forks and serves nothing else now.
			if err := p.retire(s); err != nil {
				return err
			}
		}
		if s.proc == nil {
			loadErr, err := p.startFor(ctx, s)
			if err != nil {
				return err
			}
			if loadErr != nil {
				// The load failure is the outcome of the request the process
				// was started for.
				r := retry[0]
				retry = retry[1:]
				ce := loadErr.Err
				ce.Message = "loading the grader: " + ce.Message
				o := grading.Outcome{Class: ce.Class, Error: &ce, Output: loadErr.Output, DurationMS: ms(s.loadTime)}
				for _, seq := range r.seqs {
					deliver(seq, o)
				}
				continue
			}
		}
		var err error
		retry, closed, err = p.session(ctx, s, retry, reqs, closed, deliver)
		if err != nil {
			return err
		}
	}
}

// startFor gives s a process: its warm spare, or a fresh one.
func (p *Pool) startFor(ctx context.Context, s *slot) (*LoadError, error) {
	if s.spare != nil {
		return p.takeSpare(ctx, s)
	}
	return p.startSlot(ctx, s)
}

// windowCount is how many requests s's process may have queued: about
// windowTime of work, at least 2 so the next case is always there, and no
// more than the process may still serve before it is replaced.
func (p *Pool) windowCount(s *slot) int {
	n := windowMaxCount
	if s.caseTime > 0 {
		n = min(n, max(2, int(windowTime/s.caseTime)))
	} else {
		n = 2
	}
	if p.cfg.RecycleAfter > 0 {
		n = min(n, p.cfg.RecycleAfter-s.served)
	}
	return max(n, 1)
}

// session runs s's process until it must be replaced, reqs is drained, or
// ctx ends. It returns the requests that still need a process (the rest of
// the window of a process that died or was replaced, in order) and whether
// reqs is closed.
func (p *Pool) session(ctx context.Context, s *slot, retry []*request, reqs <-chan *request, closed bool, deliver func(int, grading.Outcome)) ([]*request, bool, error) {
	pr := s.proc
	stopAfter := context.AfterFunc(ctx, pr.kill)
	defer stopAfter()
	pr.resetOutput()

	var w window
	w.answered = time.Now()
	// pending: request bytes not yet written, in one buffer for the
	// session (a window of a megabyte goes into the 64 KiB pipe a piece at
	// a time).
	pending := queue[byte]{keep: maxKeptSend}

	// fill tops the window up, first from retry, then from reqs without
	// blocking. What it takes is handed over at the same moment, one clock
	// reading for all (a reading a request was a tenth of a microsecond).
	fill := func() {
		limit := p.windowCount(s)
		var handed time.Time
		for w.n() < limit && (w.n() == 0 || w.bytes < windowMaxBytes) {
			var r *request
			if len(retry) > 0 {
				r = retry[0]
				retry = retry[1:]
			} else if !closed {
				select {
				case rr, ok := <-reqs:
					if !ok {
						closed = true
						return
					}
					r = rr
				default:
					return
				}
			} else {
				return
			}
			if handed.IsZero() {
				handed = time.Now()
			}
			r.queued = handed
			if pr.calls != nil && pr.takesCtx {
				pr.calls.open(r.id)
			}
			w.push(r)
			pending.push(r.line...)
		}
	}
	// giveBack returns the unanswered requests for another process.
	giveBack := func() []*request {
		return w.unanswered(retry)
	}

	for {
		if ctx.Err() != nil {
			return nil, closed, errors.Join(fmt.Errorf("worker: %w", context.Cause(ctx)), p.retire(s))
		}
		fill()
		if w.n() == 0 {
			if closed {
				return nil, true, nil
			}
			// Idle: wait for work with the process loaded.
			select {
			case r, ok := <-reqs:
				if !ok {
					return nil, true, nil
				}
				retry = append(retry, r)
				continue
			case <-ctx.Done():
				continue
			}
		}
		if p.dueSpare(s, w.n()) {
			p.warmSpare(s)
		}

		var report *response // a zygote's account of its child's end
		deadline := w.started().Add(p.timeout())
		ev := pr.pump(&pending, deadline, w.first().limit(p.cfg.OutputLimit), gatherWait(s.caseTime, w.n()))
		// Answers first: whatever the process managed to write counts.
		for {
			line, tooLong := pr.nextLine(w.first().limit(p.cfg.OutputLimit))
			if line == nil && !tooLong {
				break
			}
			head := w.first()
			var r *response
			var err error
			if !tooLong {
				r, err = parseResponse(line, head.id)
			}
			if tooLong || err != nil {
				ev = garbled
				break
			}
			if r.Op == "ended" {
				// A forked child died (or exited) in the middle of its
				// requests; its zygote says how, and is still the
				// pristine process it was: it goes back to its pool
				// (stale requests are skipped before the next fork).
				report = r
				ev = died
				pr.childEnded = true
				break
			}
			if r.Op == "bad_request" {
				// The dataset reader refuses what Python would (invalid
				// UTF-8, nesting past its limit), so this is a row that
				// slipped through: an input error naming the case, never a
				// worker_crash.
				return nil, closed, errors.Join(fmt.Errorf("%w: worker: the grader process could not read the request of %s: %s; Python cannot decode this case's item or sample (fix the dataset row); gradegate sent input its own worker cannot decode",
					manifest.ErrInput, caseNames(head.ids), r.Message), p.retire(s))
			}
			now := time.Now()
			elapsed := now.Sub(w.started())
			if pr.guard.CheckDisk(elapsed >= diskCheckAfter) != nil {
				// The case filled its scratch directory past the budget
				// and answered before the guard's own measure: the guard
				// killed the group, and the case is the one that did it.
				ev = died
				break
			}
			w.pop()
			w.answered = now
			if r.T > 0 {
				elapsed = time.Duration(r.T * float64(time.Millisecond))
			}
			s.served += len(head.seqs)
			per := elapsed / time.Duration(len(head.seqs))
			if s.caseTime == 0 {
				s.caseTime = per
			} else {
				s.caseTime += (per - s.caseTime) / 8
			}
			pr.takeOutput(head.id)
			outs := p.outcomes(pr, r, head, elapsed)
			if err := takeCalls(pr, head.id, outs); err != nil {
				return nil, closed, errors.Join(err, p.retire(s))
			}
			for k, seq := range head.seqs {
				deliver(seq, outs[k])
			}
			if r.recycle() || p.cfg.RecycleAfter > 0 && s.served >= p.cfg.RecycleAfter {
				return giveBack(), closed, p.retire(s)
			}
			if w.n() == 0 {
				break
			}
		}
		if ev == alive {
			continue
		}
		if ev == died && w.n() == 0 {
			// It died between cases, having answered everything it was
			// sent: nothing to blame it on.
			return giveBack(), closed, p.retire(s)
		}
		// The oldest unanswered request is the one the process was running.
		elapsed := time.Since(w.started())
		head := w.pop()
		if ev == cancelled || ctx.Err() != nil {
			return nil, closed, errors.Join(fmt.Errorf("worker: %w", context.Cause(ctx)), p.retire(s))
		}
		if reason := p.closedReason(); reason != nil {
			// Close or New's context killed the process: not the grader's doing.
			return nil, closed, errors.Join(reason, p.retire(s))
		}
		if ev == timedOut {
			pr.dumpStack()
			pr.kill()
			pr.drainOutput()
		}
		pr.takeOutput(head.id)
		var o grading.Outcome
		if report != nil {
			// The zygote may serve another pool as soon as it is retired:
			// what its child printed is read first.
			o = p.deadOutcome(pr, ev, elapsed, report)
		}
		stopErr := p.retire(s)
		if report == nil {
			o = p.deadOutcome(pr, ev, elapsed, report)
		}
		dead := []grading.Outcome{o}
		if err := takeCalls(pr, head.id, dead); err != nil {
			return nil, closed, errors.Join(err, stopErr)
		}
		o = dead[0]
		for _, seq := range head.seqs {
			deliver(seq, o)
		}
		return giveBack(), closed, stopErr
	}
}

func caseNames(ids []string) string {
	if len(ids) == 1 {
		return "case " + strconv.Quote(ids[0])
	}
	return fmt.Sprintf("the batch of %d cases from %q", len(ids), ids[0])
}

// takeCalls gives the outcomes of request id the model calls it made; the
// error is the gate failing to make one.
func takeCalls(pr *proc, id int64, outs []grading.Outcome) error {
	if pr.calls == nil || !pr.takesCtx {
		return nil
	}
	calls, err := pr.calls.take(id)
	if err != nil {
		return err
	}
	if len(calls) == 0 {
		return nil
	}
	for k := range outs {
		outs[k].ModelCalls = calls
	}
	return nil
}
