//go:build linux

// Package worker runs Python graders: a pool of interpreter processes that
// implements gate.Runner.
//
// Each process runs worker.py (embedded) and loads the grader from the exact
// bytes whose digest was checked, compiled under the grader's file name so
// tracebacks name its lines. Go and the worker speak JSON lines over two
// extra pipes, fd 3 (requests) and fd 4 (responses), kept apart from the
// grader's stdout and stderr: whatever the grader prints is captured with a
// bound and returned with its case, and can never be read as a result.
//
// Go owns every judgement a misbehaving process cannot make about itself: a
// per-case timer kills the process group from outside (timeout), and a
// process that dies without answering is a worker_crash, or memory_exceeded
// when the evidence points at memory (see crashError). A grader that fails
// after the sandbox refused it an internet socket is a sandbox_violation.
//
// A grader that cannot be loaded at all (syntax error, an exception at import,
// no grade function, a grade that cannot take (sample, item)) makes New fail
// with a *LoadError. It is the grader's fault, not the tool's, but there is no
// case to attach it to, so the caller decides (SPEC: canaries fail, the gate
// holds). A load that fails later, when a recycled process reloads the
// grader, becomes the outcome of the case that process was started for.
package worker

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gradegate/gradegate/gate"
	"github.com/gradegate/gradegate/gate/sandbox"
)

//go:embed worker.py
var workerSource string

// Isolation modes (manifest grader.isolation).
const (
	IsolationWorker = "worker" // one process serves many cases, recycled
	IsolationCase   = "case"   // the loaded process forks a fresh child per case
)

// Contracts (manifest grader.contract).
const (
	ContractSample = "sample"
	ContractBatch  = "batch"
)

// Defaults for zero Config fields.
const (
	DefaultOutputLimit  = 8 << 10
	DefaultRecycleAfter = 500
	DefaultTimeout      = 120
	DefaultMetric       = "score"
)

// Config is what a Pool needs to run one grader.
type Config struct {
	Source         []byte // the exact grader bytes whose digest was checked
	SourceName     string // the file name tracebacks show, e.g. "grader.py"
	Contract       string // ContractSample (default) or ContractBatch
	Metric         string // gating score name in {"scores": {...}}; default "score"
	TimeoutSeconds int    // per case (sample) or per batch; default 120
	MemoryMB       int    // per grader process; 0: no limit
	Isolation      string // IsolationWorker (default) or IsolationCase
	Workers        int    // concurrent grader processes; default runtime.NumCPU()
	Python         Python // resolved interpreter (ResolvePython)
	Sandbox        *sandbox.Sandbox
	OutputLimit    int // bytes of grader output kept per case; default 8 KiB
	// RecycleAfter is how many cases one process serves before a fresh one
	// replaces it (isolation worker); default 500. Any outcome other than ok
	// or grader_exception also replaces it. When the sandbox has a second
	// slot (uid) for every worker, the replacement starts loading shortly
	// before the process is due, so recycling does not stall grading.
	RecycleAfter int
	// LoadTimeoutSeconds bounds starting the interpreter and running the
	// grader's module code (imports of large packages take seconds, and are
	// not a case's time); default max(TimeoutSeconds, 60).
	LoadTimeoutSeconds int
	// BatchSize is how many tasks go into one grade_batch call (contract
	// batch); 0 puts all tasks of one Grade call into one batch, so a caller
	// that wants batches of one (canaries) calls Grade once per task.
	BatchSize int
	// HashSeed, when set, is the PYTHONHASHSEED of every grader process (a
	// decimal in 0..4294967295): str and bytes hashes, and with them the
	// order of sets, are then alike in every process. Empty leaves Python's
	// own random seed per process (isolated mode ignores PYTHONHASHSEED).
	HashSeed string
}

// LoadError is returned by New when the grader cannot be loaded. Err says
// why, with the grader line where known; Output is what the grader printed
// while loading.
type LoadError struct {
	Err    gate.CaseError
	Output string
}

func (e *LoadError) Error() string {
	msg := fmt.Sprintf("grader failed to load (%s): %s", e.Err.Class, e.Err.Message)
	if e.Err.Line > 0 {
		msg += fmt.Sprintf(" (line %d)", e.Err.Line)
	}
	return msg
}

// Pool grades tasks with a bounded set of worker processes. It is safe for
// concurrent use; concurrent Grade calls share the processes.
type Pool struct {
	cfg  Config
	argv []string
	init []byte // the init request line, the same for every process

	// tokens counts free slots; a goroutine grading holds one slot.
	tokens chan struct{}

	mu     sync.Mutex
	free   []*slot        // free slots, warm ones preferred (see acquire)
	live   map[*proc]bool // every running process, for Close and cancellation
	closed error          // set by Close or New's context; no process starts after

	stopWatch func() bool
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

var _ gate.Runner = (*Pool)(nil)

// New validates cfg, starts one worker process and loads the grader in it,
// so a grader that cannot load is reported before any case runs (as a
// *LoadError). Further processes start when Grade needs them. Cancelling ctx
// kills every process of the pool and makes it unusable.
func New(ctx context.Context, cfg Config) (*Pool, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	initMsg, err := json.Marshal(map[string]any{
		"op":           "init",
		"source":       cfg.Source, // base64: the bytes may be in any encoding a coding cookie declares
		"name":         cfg.SourceName,
		"contract":     cfg.Contract,
		"metric":       cfg.Metric,
		"isolation":    cfg.Isolation,
		"memory_mb":    cfg.MemoryMB,
		"output_limit": cfg.OutputLimit,
		// Only when the sandbox did not put rlimits in force (see worker.py).
		"set_rlimit_as": !cfg.Sandbox.Status().Rlimits,
		// Whether a refused internet socket can be the sandbox's doing.
		"network_denied": cfg.Sandbox.Status().Seccomp,
	})
	if err != nil {
		return nil, fmt.Errorf("worker: init request: %w", err)
	}
	p := &Pool{
		cfg: cfg,
		// -I: isolated mode (no PYTHON* variables, no user site, no script or
		// working directory on sys.path; see isolationFlags for a HashSeed);
		// -B: no .pyc writes; -X utf8: UTF-8 streams and file defaults
		// whatever the locale.
		argv:   append(append([]string{cfg.Python.Executable}, isolationFlags(cfg)...), "-B", "-X", "utf8", "-c", workerSource),
		init:   append(initMsg, '\n'),
		tokens: make(chan struct{}, cfg.Workers),
		live:   map[*proc]bool{},
	}
	for i := range cfg.Workers {
		p.release(&slot{id: i, alt: p.altSlot(i)})
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
	return p, nil
}

func (cfg *Config) fill() error {
	var errs []error
	if cfg.Sandbox == nil {
		errs = append(errs, errors.New("no sandbox"))
	}
	if cfg.Python.Executable == "" {
		errs = append(errs, errors.New("no python interpreter"))
	}
	if cfg.SourceName == "" {
		cfg.SourceName = "grader.py"
	}
	if cfg.Contract == "" {
		cfg.Contract = ContractSample
	}
	if cfg.Contract != ContractSample && cfg.Contract != ContractBatch {
		errs = append(errs, fmt.Errorf("contract %q: want sample or batch", cfg.Contract))
	}
	if cfg.Isolation == "" {
		cfg.Isolation = IsolationWorker
	}
	if cfg.Isolation != IsolationWorker && cfg.Isolation != IsolationCase {
		errs = append(errs, fmt.Errorf("isolation %q: want worker or case", cfg.Isolation))
	}
	if cfg.Metric == "" {
		cfg.Metric = DefaultMetric
	}
	if cfg.TimeoutSeconds <= 0 {
		cfg.TimeoutSeconds = DefaultTimeout
	}
	if cfg.LoadTimeoutSeconds <= 0 {
		cfg.LoadTimeoutSeconds = max(cfg.TimeoutSeconds, 60)
	}
	if cfg.MemoryMB < 0 {
		errs = append(errs, fmt.Errorf("memory_mb %d is negative", cfg.MemoryMB))
	}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.NumCPU()
	}
	if cfg.OutputLimit <= 0 {
		cfg.OutputLimit = DefaultOutputLimit
	}
	if cfg.RecycleAfter <= 0 {
		cfg.RecycleAfter = DefaultRecycleAfter
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("worker: config: %w", err)
	}
	return nil
}

// Sandbox reports which isolation layers are in force for the graders.
func (p *Pool) Sandbox() gate.Sandbox { return p.cfg.Sandbox.Status() }

// Close kills every worker process, waits for them and removes their scratch
// directories. Grade calls in flight return an error.
func (p *Pool) Close() error {
	p.stopWatch()
	p.shut(errors.New("worker: pool closed"))
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
	return errors.Join(errs...)
}

// acquire takes a free slot, preferring one whose process is running: a
// Grade call with fewer tasks than workers (a canary) should not start a
// cold interpreter while a loaded one is idle.
func (p *Pool) acquire(ctx context.Context) (*slot, error) {
	select {
	case <-p.tokens:
	case <-ctx.Done():
		return nil, fmt.Errorf("worker: %w", context.Cause(ctx))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	i := len(p.free) - 1
	for j := i; j >= 0; j-- {
		if p.free[j].proc != nil {
			i = j
			break
		}
	}
	s := p.free[i]
	p.free = slices.Delete(p.free, i, i+1)
	return s, nil
}

func (p *Pool) release(s *slot) {
	p.mu.Lock()
	p.free = append(p.free, s)
	p.mu.Unlock()
	p.tokens <- struct{}{}
}

// shut marks the pool closed and kills every live process.
func (p *Pool) shut(reason error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed == nil {
		p.closed = reason
	}
	for pr := range p.live {
		pr.kill()
	}
}

// altSlot returns the second sandbox slot of pool slot i, or -1 when the
// replacement cannot load beside the current process: the sandbox serves
// too few slots, or its slots share one uid under a process limit, where a
// second interpreter (and the threads its imports start) would eat into the
// budget of the grader still serving cases.
func (p *Pool) altSlot(i int) int {
	sb := p.cfg.Sandbox
	alt := i + p.cfg.Workers
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
// current process is expected to reach RecycleAfter within about twice the
// time the last load took, so the replacement is ready in time without
// idling (and holding memory) for long.
func (p *Pool) dueSpare(s *slot) bool {
	if s.alt < 0 || s.spare != nil || s.proc == nil {
		return false
	}
	remaining := p.cfg.RecycleAfter - s.served
	return remaining <= 1 || s.caseTime > 0 && time.Duration(remaining)*s.caseTime <= 2*s.loadTime
}

// warmSpare starts s's replacement in the background, under whichever of
// s's sandbox slots the current process does not use; the other one is free,
// since a process is stopped before its slot lets go of it.
func (p *Pool) warmSpare(s *slot) {
	box := s.alt
	if s.proc.box == s.alt {
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
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed != nil {
		return nil, nil, closed
	}
	dir, cleanup, err := p.cfg.Sandbox.Scratch(box)
	if err != nil {
		return nil, nil, fmt.Errorf("worker: slot %d: %w", box, err)
	}
	spec := sandbox.Spec{
		Slot:       box,
		ScratchDir: dir,
		MemoryMB:   p.cfg.MemoryMB,
		// A backstop only: the wall-clock timer is the real per-case limit,
		// and CPU time adds up over the cases one process serves.
		CPUSeconds: p.cfg.TimeoutSeconds * (p.cfg.RecycleAfter + 1),
		ReadPaths:  p.cfg.Python.readPaths(),
	}
	cmd := p.cfg.Sandbox.Command(spec, p.argv, environment(dir, p.cfg.HashSeed))
	pr, err := startProc(cmd, p.cfg.OutputLimit, cleanup)
	if err != nil {
		if cerr := cleanup(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		return nil, nil, fmt.Errorf("worker: slot %d: %w", box, err)
	}
	pr.box = box
	pr.guard = p.cfg.Sandbox.Guard(spec, pr.pid)
	p.mu.Lock()
	p.live[pr] = true
	closed = p.closed
	p.mu.Unlock()
	if closed != nil {
		return nil, nil, errors.Join(closed, p.stopProc(pr))
	}

	start := time.Now()
	line, res := pr.exchange(ctx, p.init, p.loadTimeout())
	if res == gotLine {
		var r response
		if err := json.Unmarshal(line, &r); err == nil && r.Op == "ready" {
			return pr, nil, nil
		} else if err == nil && r.Op == "load_error" {
			le := &LoadError{Err: gate.CaseError{Class: r.class(), Type: r.Type, Message: r.Message, Line: r.Line}, Output: r.output(pr.output, p.cfg.OutputLimit)}
			return nil, le, p.stopProc(pr)
		}
		res = garbled
	}
	if res == cancelled {
		return nil, nil, errors.Join(fmt.Errorf("worker: %w", ctx.Err()), p.stopProc(pr))
	}
	if res != gotLine {
		// Close or New's context killed the process: that is not the grader's doing.
		p.mu.Lock()
		closed := p.closed
		p.mu.Unlock()
		if closed != nil {
			return nil, nil, errors.Join(closed, p.stopProc(pr))
		}
	}
	stopErr := p.stopProc(pr)
	o := p.deadOutcome(pr, res, time.Since(start), nil)
	return nil, &LoadError{Err: *o.Error, Output: o.Output}, stopErr
}

// closedBy reports whether err carries the reason the pool was closed.
func (p *Pool) closedBy(err error) bool {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	return closed != nil && errors.Is(err, closed)
}

// retire stops the slot's process and forgets it.
func (p *Pool) retire(s *slot) error {
	pr := s.proc
	s.proc = nil
	return p.stopProc(pr)
}

// stopProc stops pr and forgets it.
func (p *Pool) stopProc(pr *proc) error {
	err := pr.stop()
	p.mu.Lock()
	delete(p.live, pr)
	p.mu.Unlock()
	if err != nil {
		return fmt.Errorf("worker: slot %d: %w", pr.box, err)
	}
	return nil
}

func (p *Pool) timeout() time.Duration {
	return time.Duration(p.cfg.TimeoutSeconds) * time.Second
}

func (p *Pool) loadTimeout() time.Duration {
	return time.Duration(p.cfg.LoadTimeoutSeconds) * time.Second
}

// environment is the grader's whole environment, built from nothing: no
// variable of gradegate's own environment (GITHUB_TOKEN, OPENAI_API_KEY,
// ACTIONS_*, INPUT_*) can reach a grader.
func environment(scratch, hashSeed string) []string {
	if hashSeed == "" {
		hashSeed = "0"
	}
	return []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"LANG=C.UTF-8",
		"LC_ALL=C.UTF-8",
		"HOME=" + scratch,
		"TMPDIR=" + scratch,
		// The worker runs with -I, which ignores PYTHON* variables (its flags
		// do the same work); these make a Python subprocess the grader starts
		// behave alike.
		"PYTHONIOENCODING=utf-8",
		"PYTHONHASHSEED=" + hashSeed,
		"PYTHONDONTWRITEBYTECODE=1",
	}
}

// isolationFlags are -I, or with a HashSeed what -I does except ignoring
// PYTHON* variables, which would ignore PYTHONHASHSEED too: -s (no user
// site) and, from Python 3.11, -P (no working directory on sys.path). The
// environment is built from nothing either way.
func isolationFlags(cfg Config) []string {
	if cfg.HashSeed == "" {
		return []string{"-I"}
	}
	var major, minor int
	if _, err := fmt.Sscanf(cfg.Python.Version, "%d.%d", &major, &minor); err == nil && (major > 3 || major == 3 && minor >= 11) {
		return []string{"-s", "-P"}
	}
	return []string{"-s"}
}

// Grade grades tasks and returns one Outcome per task, in order. The error is
// set only when gradegate itself failed (a process could not be started, the
// pool was closed, ctx ended); a grader's misbehaviour is an Outcome.
func (p *Pool) Grade(ctx context.Context, tasks []gate.Task) ([]gate.Outcome, error) {
	outcomes := make([]gate.Outcome, len(tasks))
	if len(tasks) == 0 {
		return outcomes, nil
	}
	// Marshal every request first: a task that is not valid JSON is the
	// caller's bug and fails before any grading.
	jobs, err := p.jobs(tasks)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	// Workers take the next job from a shared counter: cheaper per case than
	// a feeding goroutine and a channel.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(p.cfg.Workers, len(jobs)) {
		wg.Go(func() {
			s, err := p.acquire(ctx)
			if err != nil {
				return // ctx ended; Grade reports its cause
			}
			defer p.release(s)
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(jobs) {
					return
				}
				if err := p.run(ctx, s, jobs[i], outcomes); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return outcomes, nil
}

// job is one request: one task (sample) or a batch of tasks.
type job struct {
	// id is random, and the response must carry it back: a grader that
	// writes a made-up response straight to fd 4 cannot know it (short of
	// reading the worker's own frames), so its line is rejected.
	id    int64
	idx   []int // indices into the Grade call's tasks
	req   []byte
	batch bool
}

func (p *Pool) jobs(tasks []gate.Task) ([]*job, error) {
	raw := func(m json.RawMessage) json.RawMessage {
		if len(m) == 0 {
			return json.RawMessage("null")
		}
		return m
	}
	var jobs []*job
	if p.cfg.Contract == ContractSample {
		for i, t := range tasks {
			id := rand.Int64()
			req, err := json.Marshal(struct {
				ID     int64           `json:"id"`
				Sample json.RawMessage `json:"sample"`
				Item   json.RawMessage `json:"item"`
			}{id, raw(t.Sample), raw(t.Item)})
			if err != nil {
				return nil, fmt.Errorf("worker: task %q: %w", t.ID, err)
			}
			jobs = append(jobs, &job{id: id, idx: []int{i}, req: append(req, '\n')})
		}
		return jobs, nil
	}
	type entry struct {
		CaseID string          `json:"case_id"`
		Sample json.RawMessage `json:"sample"`
		Item   json.RawMessage `json:"item"`
	}
	size := p.cfg.BatchSize
	if size <= 0 {
		size = len(tasks)
	}
	seen := map[string]bool{}
	for start := 0; start < len(tasks); start += size {
		end := min(start+size, len(tasks))
		j := &job{id: rand.Int64(), batch: true}
		var batch []entry
		for i := start; i < end; i++ {
			t := tasks[i]
			// grade_batch answers by case_id, so ids must tell cases apart.
			if seen[t.ID] {
				return nil, fmt.Errorf("worker: task id %q appears twice; grade_batch needs unique case_ids", t.ID)
			}
			seen[t.ID] = true
			batch = append(batch, entry{t.ID, raw(t.Sample), raw(t.Item)})
			j.idx = append(j.idx, i)
		}
		req, err := json.Marshal(struct {
			ID    int64   `json:"id"`
			Batch []entry `json:"batch"`
		}{j.id, batch})
		if err != nil {
			return nil, fmt.Errorf("worker: batch of %q: %w", tasks[start].ID, err)
		}
		j.req = append(req, '\n')
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// run grades one job on slot s and stores its outcomes. It returns an error
// only for a tool failure.
func (p *Pool) run(ctx context.Context, s *slot, j *job, outcomes []gate.Outcome) error {
	set := func(o gate.Outcome) {
		for _, i := range j.idx {
			outcomes[i] = o
		}
	}
	if s.proc == nil {
		var loadErr *LoadError
		var err error
		if s.spare != nil {
			loadErr, err = p.takeSpare(ctx, s)
		} else {
			loadErr, err = p.startSlot(ctx, s)
		}
		if err != nil {
			return err
		}
		if loadErr != nil {
			ce := loadErr.Err
			ce.Message = "loading the grader: " + ce.Message
			set(gate.Outcome{Class: ce.Class, Error: &ce, Output: loadErr.Output, DurationMS: ms(s.loadTime)})
			return nil
		}
	}
	if p.dueSpare(s) {
		p.warmSpare(s)
	}
	pr := s.proc
	pr.output.reset()
	pr.drainOutput() // anything printed between cases (a stray thread) is not this case's
	pr.output.reset()

	start := time.Now()
	line, res := pr.exchange(ctx, j.req, p.timeout())
	elapsed := time.Since(start)
	s.served++
	if s.caseTime == 0 {
		s.caseTime = elapsed
	} else {
		s.caseTime += (elapsed - s.caseTime) / 8
	}

	if res == cancelled {
		return errors.Join(fmt.Errorf("worker: %w", context.Cause(ctx)), p.retire(s))
	}
	if res != gotLine {
		// Close or New's context killed the process: that is not the grader's doing.
		p.mu.Lock()
		closed := p.closed
		p.mu.Unlock()
		if closed != nil {
			return errors.Join(closed, p.retire(s))
		}
	}
	if res == gotLine {
		r, err := parseResponse(line, j.id)
		if err == nil {
			outs := p.outcomes(pr, r, j, elapsed)
			for k, i := range j.idx {
				outcomes[i] = outs[k]
			}
			if r.recycle() || s.served >= p.cfg.RecycleAfter {
				return p.retire(s)
			}
			return nil
		}
		res = garbled
	}
	stopErr := p.retire(s)
	set(p.deadOutcome(pr, res, elapsed, nil))
	return stopErr
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
