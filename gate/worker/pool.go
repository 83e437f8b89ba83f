//go:build linux

// Package worker runs Python graders: a pool of interpreter processes that
// implements gate.StreamRunner (and so gate.Runner).
//
// Each process runs worker.py (embedded) and loads the grader from the exact
// bytes whose digest was checked, compiled under the grader's file name so
// tracebacks name its lines. Go and the worker speak JSON lines over two
// extra pipes, fd 3 (requests) and fd 4 (responses), kept apart from the
// grader's stdout and stderr: whatever the grader prints is captured with a
// bound and returned with its case, and can never be read as a result.
//
// Requests are pipelined: each process has a window of cases queued ahead
// (sized by count and bytes, refilled as answers come back), so it never
// waits for the gate, and answers each case as soon as it has graded it.
// Sample and item bytes go through as they were read.
//
// Go owns every judgement a misbehaving process cannot make about itself: a
// watchdog, restarted at every answer, kills the process group from outside
// when the case at the head of the window runs past its time (timeout), and a
// process that dies without answering is a worker_crash for that case, or
// memory_exceeded when the evidence points at memory (see crashError); the
// rest of its window goes to a fresh process, so no other case loses its
// grade. A grader that fails after the sandbox refused it an internet socket
// is a sandbox_violation. Every line read from a process is held to a size
// limit before it is buffered further.
//
// A grader that cannot be loaded at all (syntax error, an exception at import,
// no grade function, a grade that cannot take (sample, item)) makes New fail
// with a *LoadError. It is the grader's fault, not the tool's, but there is no
// case to attach it to, so the caller decides (the gate fails the canaries
// and holds). A load that fails later, when a replaced process reloads the
// grader, becomes the outcome of the case that process was started for.
package worker

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/sandbox"
)

// workerBoot starts a worker from worker.py compiled ahead (Python.Worker):
// it reads the code, its length first, from the request pipe, where the
// pool writes it before the init request, and runs it as if it were the
// source given to -c.
//
// A length of 0 is an interpreter that could not compile it: the source
// follows, its length first, and is compiled as -c would compile it.
const workerBoot = `import marshal, os
def _boot():
    def read(n):
        parts = []
        while n > 0:
            chunk = os.read(3, min(n, 1 << 20))
            if not chunk:
                raise SystemExit(1)
            parts.append(chunk)
            n -= len(chunk)
        return b"".join(parts)
    n = int.from_bytes(read(8), "big")
    if n:
        return marshal.loads(read(n))
    return compile(read(int.from_bytes(read(8), "big")), "<string>", "exec")
exec(_boot())
`

// When a process is replaced without having failed. Starting one costs tens
// of milliseconds (a sandboxed interpreter and the grader's imports), so
// these keep replacements far under 5% of the grading time: a process is
// replaced when its CPU time reaches cpuBudget (at least 300 s of grading
// per start), or when its peak resident memory grew by more than
// growLimitMB past its size once loaded (a leak that would otherwise reach
// memory_mb; the peak, since graders cannot read /proc for the current
// size, so one large spike also costs a replacement).
const (
	minCPUBudget = 300
	growLimitMB  = 512
)

// Pool grades tasks with a bounded set of worker processes. It is safe for
// concurrent use; concurrent Grade calls share the processes.
type Pool struct {
	cfg  Config
	argv []string
	init []byte // the init request line, the same for every process
	// pristine is the init line of a process that loads no grader, for
	// Fork to fork variants from.
	pristine []byte

	// commands is the folder first on the graders' PATH, holding python
	// (pathbin.go); "" for a forked pool, whose processes are its parent's.
	commands string

	slots[*slot, *proc]

	stopWatch func() bool

	// parent is the pool whose processes this one forks from (Fork); init
	// is then the fork request.
	parent *Pool

	// starts counts the processes started, for tests and benchmarks.
	starts atomic.Int64
}

// slot is one concurrency unit: the process currently serving it and, near
// the end of that process's life, the one warming up to replace it.
//
// A slot owns one sandbox slot (uid, scratch), or two when the sandbox has
// enough: the replacement then loads under the second while the current
// process still serves cases under the first, so recycling a process does
// not stall the slot for an interpreter start and a grader load. Each
// process of a slot has a sandbox slot of its own, so two live processes
// never share a uid's RLIMIT_NPROC budget or a scratch owner, and a sandbox
// slot is reused only after its previous process was stopped (process group
// reaped, scratch removed).
type slot struct {
	id     int // the pool's index, and the first sandbox slot
	alt    int // the second sandbox slot; -1: none, processes start on demand
	proc   *proc
	served int
	spare  *spare // the replacement warming up; nil when none

	// Estimates that decide when to warm the replacement up (dueSpare).
	loadTime time.Duration // the last process's start and grader load
	caseTime time.Duration // moving average of one exchange
}

// spare is a replacement process loading in the background. Its fields are
// set before done is closed and read only after.
type spare struct {
	done    chan struct{}
	proc    *proc
	loadErr *LoadError
	err     error
	took    time.Duration
}

var _ grading.Runner = (*Pool)(nil)

// New validates cfg, starts one worker process and loads the grader in it,
// so a grader that cannot load is reported before any case runs (as a
// *LoadError). Further processes start when Grade needs them. Cancelling ctx
// kills every process of the pool and makes it unusable.
func New(ctx context.Context, cfg Config) (*Pool, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	fields := map[string]any{
		"op":           "init",
		"source":       cfg.Source, // base64: the bytes may be in any encoding a coding cookie declares
		"name":         cfg.SourceName,
		"contract":     cfg.Contract,
		"metric":       cfg.Metric,
		"isolation":    cfg.Isolation,
		"memory_mb":    cfg.MemoryMB,
		"output_limit": cfg.OutputLimit,
		"grow_mb":      growLimitMB,
		"cpu_seconds":  cfg.cpuBudget(),
		// Only when the sandbox did not put rlimits in force (see worker.py).
		"set_rlimit_as": !cfg.Sandbox.Status().Rlimits,
		// Whether a refused internet socket can be the sandbox's doing.
		"network_denied": cfg.Sandbox.Status().Seccomp,
		// Whether fd 5 and 6 carry model calls (calls.go).
		"broker": cfg.Broker != nil,
	}
	if cfg.Preprocess != nil {
		fields["preprocess"] = cfg.Preprocess.initField()
	}
	if cfg.MKA1 != nil {
		fields["mka1"] = cfg.MKA1
	}
	initMsg, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("worker: init request: %w", err)
	}
	// The processes Fork forks from start like every other and load no
	// grader: a variant's child begins where the grader's own process
	// began, not from what loading (and grading) did to it.
	fields["source"], fields["pristine"] = []byte{}, true
	fields["preload"] = preloads(cfg.Source)
	pristineMsg, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("worker: init request: %w", err)
	}
	p := &Pool{
		cfg: cfg,
		// isolationFlags: no user site and no working directory on
		// sys.path, the same for grading and the determinism check;
		// -B: no .pyc writes; -X utf8: UTF-8 streams and file defaults
		// whatever the locale.
		argv:     append(append([]string{cfg.Python.Executable}, isolationFlags(cfg)...), "-B", "-X", "utf8", "-c", workerPy),
		init:     append(initMsg, '\n'),
		pristine: append(pristineMsg, '\n'),
	}
	p.slots.init(cfg.Workers, warmth)
	if p.commands, err = newCommandDir(cfg.Python.Executable); err != nil {
		return nil, err
	}
	if cfg.Python.compiledAhead() {
		// launch puts the code ahead of the init line.
		p.argv[len(p.argv)-1] = workerBoot
	}
	for i := range cfg.Workers {
		p.release(&slot{id: cfg.FirstSlot + i, alt: p.altSlot(i)})
	}
	p.stopWatch = context.AfterFunc(ctx, func() { p.shut(fmt.Errorf("worker: pool context: %w", context.Cause(ctx))) })

	s, err := p.acquire(ctx)
	if err != nil {
		p.Close()
		return nil, err
	}
	loadErr, err := p.startSlot(ctx, s)
	p.release(s)
	if err != nil {
		p.Close()
		return nil, err
	}
	if loadErr != nil {
		p.Close()
		return nil, loadErr
	}
	if cfg.StartAll {
		p.mu.Lock()
		for _, s := range p.free {
			if s.proc == nil {
				p.warmSpare(s)
			}
		}
		p.mu.Unlock()
	}
	return p, nil
}

// framed puts the worker's code ahead of an init line, for the boot script;
// without code (an interpreter that could not compile it), the source.
func framed(code, init []byte) []byte {
	if len(code) == 0 {
		frame := binary.BigEndian.AppendUint64(make([]byte, 0, 16+len(workerPy)+len(init)), 0)
		frame = append(binary.BigEndian.AppendUint64(frame, uint64(len(workerPy))), workerPy...)
		return append(frame, init...)
	}
	frame := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(code)+len(init)), uint64(len(code)))
	return append(append(frame, code...), init...)
}

// cpuBudget is the CPU time after which the worker asks to be replaced.
func (cfg *Config) cpuBudget() int {
	return max(minCPUBudget, 4*cfg.TimeoutSeconds)
}

func (cfg *Config) fill() error {
	var errs []error
	if cfg.Sandbox == nil {
		errs = append(errs, errors.New("no sandbox"))
	}
	errs = cfg.fillShared(errs)
	switch {
	case cfg.FirstSlot < 0:
		errs = append(errs, fmt.Errorf("first slot %d is negative", cfg.FirstSlot))
	case cfg.Sandbox != nil && !cfg.Sandbox.Status().Unsandboxed && cfg.FirstSlot+cfg.Workers > cfg.Sandbox.Slots():
		errs = append(errs, fmt.Errorf("slots %d to %d: the sandbox serves slots 0 to %d", cfg.FirstSlot, cfg.FirstSlot+cfg.Workers-1, cfg.Sandbox.Slots()-1))
	}
	if err := cfg.Preprocess.fill(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("worker: config: %w", err)
	}
	return nil
}

// Sandbox reports which isolation layers are in force for the graders.
func (p *Pool) Sandbox() grading.Sandbox { return p.cfg.Sandbox.Status() }

// Close kills every worker process, waits for them and removes their scratch
// directories. Grade calls in flight return an error. A forked pool (Fork)
// instead waits for calls in flight, then ends its children and hands their
// zygotes back to the parent pool.
func (p *Pool) Close() error {
	p.stopWatch()
	if p.parent != nil {
		p.markClosed(errors.New("worker: pool closed"))
	} else {
		p.shut(errors.New("worker: pool closed"))
	}
	// Wait for in-flight Grade calls to hand their slots back, then reap.
	var errs []error
	var held []*slot
	for range p.cfg.Workers {
		s, _ := p.acquire(context.Background())
		if s.proc != nil {
			errs = append(errs, p.retire(s))
		}
		if sp := s.spare; sp != nil {
			// shut killed it if it was still loading, so this is short.
			<-sp.done
			s.spare = nil
			if sp.proc != nil {
				errs = append(errs, p.stopProc(sp.proc))
			}
			if sp.err != nil && !p.closedBy(sp.err) {
				errs = append(errs, sp.err)
			}
		}
		held = append(held, s)
	}
	// Hand the slots back so a late Close or Grade does not block.
	for _, s := range held {
		p.release(s)
	}
	if p.commands != "" && p.parent == nil {
		if err := os.RemoveAll(p.commands); err != nil {
			errs = append(errs, fmt.Errorf("worker: %w", err))
		}
	}
	return errors.Join(errs...)
}

// loading is the done channel of the process started ahead for s, which
// has none yet (Config.StartAll).
func (p *Pool) loading(s *slot) <-chan struct{} {
	if s.proc == nil && s.spare != nil {
		return s.spare.done
	}
	return nil
}

// cold says that s has no process and none is loading.
func (p *Pool) cold(s *slot) bool { return s.proc == nil && s.spare == nil }

// warmth ranks s for slots.acquire: its process runs, or one is loading
// for it (Config.StartAll), or neither.
func warmth(s *slot) int {
	switch {
	case s.proc != nil:
		return 2
	case s.spare != nil:
		return 1
	}
	return 0
}

// altSlot returns the second sandbox slot of pool slot i, or -1 when the
// replacement cannot load beside the current process: the sandbox serves
// too few slots, or its slots share one uid under a process limit, where a
// second interpreter (and the threads its imports start) would eat into the
// budget of the grader still serving cases.
func (p *Pool) altSlot(i int) int {
	sb := p.cfg.Sandbox
	alt := p.cfg.FirstSlot + i + p.cfg.Workers
	if alt >= sb.Slots() {
		return -1
	}
	if sb.Status().Unsandboxed || sb.SlotUID(alt) >= 0 {
		return alt
	}
	return -1
}

// startSlot starts a process for s, which has none and no spare, and loads
// the grader. A grader that fails to load gives a *LoadError (the process is
// already stopped); err is a tool failure.
func (p *Pool) startSlot(ctx context.Context, s *slot) (*LoadError, error) {
	start := time.Now()
	pr, loadErr, err := p.startProcess(ctx, s.id)
	s.loadTime = time.Since(start)
	if pr != nil {
		s.proc, s.served = pr, 0
	}
	return loadErr, err
}

// dueSpare says whether s's replacement should start loading now: when the
// current process, with queued requests sent and not yet answered, is
// expected to reach RecycleAfter within about twice the time the last load
// took, so the replacement is ready in time without idling (and holding
// memory) for long.
func (p *Pool) dueSpare(s *slot, queued int) bool {
	if p.cfg.RecycleAfter <= 0 || s.alt < 0 || s.spare != nil || s.proc == nil {
		return false
	}
	remaining := p.cfg.RecycleAfter - s.served - queued
	return remaining <= 1 || s.caseTime > 0 && time.Duration(remaining)*s.caseTime <= 2*s.loadTime
}

// warmSpare starts s's replacement in the background, under whichever of
// s's sandbox slots the current process does not use; the other one is free,
// since a process is stopped before its slot lets go of it. A slot without
// a process (Config.StartAll) starts its first one on its own sandbox slot.
func (p *Pool) warmSpare(s *slot) {
	box := s.alt
	if s.proc == nil || s.proc.box == s.alt {
		box = s.id
	}
	sp := &spare{done: make(chan struct{})}
	s.spare = sp
	go func() {
		defer close(sp.done)
		start := time.Now()
		// Not a Grade call's context: the spare may outlive the call that
		// started it. shut kills it with every other live process.
		sp.proc, sp.loadErr, sp.err = p.startProcess(context.Background(), box)
		sp.took = time.Since(start)
	}()
}

// takeSpare makes s's spare its process, waiting for it to finish loading.
func (p *Pool) takeSpare(ctx context.Context, s *slot) (*LoadError, error) {
	sp := s.spare
	select {
	case <-sp.done:
	case <-ctx.Done():
		return nil, fmt.Errorf("worker: %w", context.Cause(ctx))
	}
	s.spare = nil
	s.loadTime = sp.took
	if sp.proc != nil {
		s.proc, s.served = sp.proc, 0
	}
	return sp.loadErr, sp.err
}

// startProcess starts a process in sandbox slot box and loads the grader. A
// grader that fails to load gives a *LoadError (the process is already
// stopped); err is a tool failure.
func (p *Pool) startProcess(ctx context.Context, box int) (*proc, *LoadError, error) {
	if closed := p.closedReason(); closed != nil {
		return nil, nil, closed
	}
	if p.parent != nil {
		return p.forkProcess(ctx)
	}
	return p.launch(ctx, box, p.init)
}

// launch starts a process in sandbox slot box and sends it init.
func (p *Pool) launch(ctx context.Context, box int, init []byte) (*proc, *LoadError, error) {
	if reason := p.closedReason(); reason != nil {
		return nil, nil, reason
	}
	dir, cleanup, err := p.cfg.Sandbox.Scratch(box)
	if err != nil {
		return nil, nil, fmt.Errorf("worker: slot %d: %w", box, err)
	}
	spec := sandbox.Spec{
		Slot:       box,
		ScratchDir: dir,
		MemoryMB:   p.cfg.MemoryMB,
		// A backstop only: the wall-clock timer is the real per-case limit.
		// CPU time adds up over the cases one process serves; the worker
		// asks to be replaced at cpuBudget, checked at least every
		// second, so the limit sits a few cases' worth above it.
		CPUSeconds:   p.cfg.cpuBudget() + 4*(p.cfg.TimeoutSeconds+1) + 60,
		ReadPaths:    append(p.cfg.Python.readPaths(), p.commands),
		ScratchBytes: p.cfg.ScratchBytes,
	}
	cmd := p.cfg.Sandbox.Command(spec, p.argv, environment(dir, p.cfg.HashSeed, p.commands))
	var calls *callPipes
	if p.cfg.Broker != nil {
		if calls, err = newCallPipes(); err != nil {
			return nil, nil, errors.Join(fmt.Errorf("worker: slot %d: %w", box, err), cleanup())
		}
	}
	pr, err := startProc(cmd, p.cfg.OutputLimit, cleanup, calls)
	if calls != nil {
		calls.closeChild()
		if err != nil {
			calls.closeAll()
		} else {
			pr.calls = serveCalls(calls, p.cfg.Broker, p.cfg.MaxModelCalls)
		}
	}
	if err != nil {
		if cerr := cleanup(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		return nil, nil, fmt.Errorf("worker: slot %d: %w", box, err)
	}
	pr.box = box
	pr.guard = p.cfg.Sandbox.Guard(spec, pr.pid)
	p.starts.Add(1)
	if closed := p.track(pr); closed != nil {
		return nil, nil, errors.Join(closed, p.stopProc(pr))
	}

	if p.cfg.Python.compiledAhead() {
		// argv is workerBoot. The interpreter starts while the probe may
		// still be compiling the worker; it waits for the code on its
		// request pipe.
		code, err := p.cfg.Python.workerCode(ctx)
		if err != nil {
			return nil, nil, errors.Join(fmt.Errorf("worker: the compiled worker: %w", err), p.stopProc(pr))
		}
		init = framed(code, init)
	}
	start := time.Now()
	line, res := pr.exchange(ctx, init, p.loadTimeout())
	pr.takeOutput(-1)
	if res == gotLine {
		var r response
		if err := json.Unmarshal(line, &r); err == nil && r.Op == "ready" {
			pr.takesCtx = r.Ctx
			return pr, nil, nil
		} else if err == nil && r.Op == "load_error" {
			return nil, r.loadError(r.output(pr.output, p.cfg.OutputLimit)), p.stopProc(pr)
		}
		res = garbled
	}
	if res == cancelled {
		return nil, nil, errors.Join(fmt.Errorf("worker: %w", ctx.Err()), p.stopProc(pr))
	}
	if res != gotLine {
		// Close or New's context killed the process: that is not the grader's doing.
		if closed := p.closedReason(); closed != nil {
			return nil, nil, errors.Join(closed, p.stopProc(pr))
		}
	}
	stopErr := p.stopProc(pr)
	o := p.deadOutcome(pr, res, time.Since(start), nil)
	if res == timedOut {
		o.Error.Message = fmt.Sprintf("the grader took longer than load_timeout_seconds=%d to load; its process was killed", p.cfg.LoadTimeoutSeconds)
	}
	return nil, &LoadError{Err: *o.Error, Output: o.Output}, stopErr
}

// retire stops the slot's process and forgets it.
func (p *Pool) retire(s *slot) error {
	pr := s.proc
	s.proc = nil
	return p.stopProc(pr)
}

// stopProc stops pr and forgets it.
func (p *Pool) stopProc(pr *proc) error {
	if pr.lender != nil {
		return p.returnZygote(pr)
	}
	err := pr.stop()
	p.forget(pr, int64(pr.peak))
	if err != nil {
		return fmt.Errorf("worker: slot %d: %w", pr.box, err)
	}
	return nil
}

func (p *Pool) timeout() time.Duration {
	return time.Duration(p.cfg.TimeoutSeconds+p.cfg.Preprocess.extraSeconds()) * time.Second
}

func (p *Pool) loadTimeout() time.Duration {
	return time.Duration(p.cfg.LoadTimeoutSeconds) * time.Second
}

// environment is the grader's whole environment, built from nothing: no
// variable of gradegate's own environment (GITHUB_TOKEN, OPENAI_API_KEY,
// ACTIONS_*, INPUT_*) can reach a grader.
//
// commands, when set, goes first on PATH: it holds python (pathbin.go).
func environment(scratch, hashSeed, commands string) []string {
	if hashSeed == "" {
		// A seed of its own for each process, as Python would pick, but in
		// the form a fixed seed takes: a grader cannot tell its process
		// from one of the determinism check's by its environment.
		hashSeed = strconv.FormatUint(uint64(1+rand.Uint32N(1<<32-2)), 10)
	}
	path := "PATH=/usr/local/bin:/usr/bin:/bin"
	if commands != "" {
		path = "PATH=" + commands + ":/usr/local/bin:/usr/bin:/bin"
	}
	return []string{
		path,
		"LANG=C.UTF-8",
		"LC_ALL=C.UTF-8",
		"HOME=" + scratch,
		"TMPDIR=" + scratch,
		// The worker's flags do the work of the other variables; these make
		// a Python subprocess the grader starts behave alike.
		"PYTHONIOENCODING=utf-8",
		"PYTHONHASHSEED=" + hashSeed,
		"PYTHONDONTWRITEBYTECODE=1",
	}
}

// isolationFlags are what -I does except ignoring PYTHON* variables, which
// would ignore PYTHONHASHSEED too: -s (no user site) and -P (no working
// directory on sys.path), the same for every pool, so the determinism
// check's processes (a HashSeed) start exactly like the grading's. The
// environment is built from nothing, so -I's -E has nothing to ignore.
// Before Python 3.11 there is no -P: every pool starts with -s, and the
// worker takes the working directory off sys.path itself.
func isolationFlags(cfg Config) []string {
	var major, minor int
	if _, err := fmt.Sscanf(cfg.Python.Version, "%d.%d", &major, &minor); err == nil && (major > 3 || major == 3 && minor >= 11) {
		return []string{"-s", "-P"}
	}
	return []string{"-s"}
}
