package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/sandbox"
	"github.com/gradegate/gradegate/manifest"
)

// PortablePool grades with worker processes controlled through os/exec and
// pipes alone: the pool of every system but Linux, where it grades only
// unsandboxed (the sandbox is Linux's seccomp, Landlock and per-grader
// uids). It builds and runs on Linux too, where tests drive it.
//
// It speaks worker.py's protocol and gives the same outcome classes as the
// Linux pool: a case past timeout_seconds has its process killed and is a
// timeout (on Unix with the grader line, from a stack dump asked for just
// before); a process that dies without answering is a worker_crash of the
// case it was grading, or memory_exceeded when its output names a failed
// allocation; the rest of the stream goes to a fresh process. Every
// response line is held to its size limit before it is buffered further,
// and the grader's own output to OutputLimit per case.
//
// What it does not do, and says so through Sandbox (Unsandboxed): no
// memory limit is put in force (memory_mb is not enforced; a grader's
// MemoryError is still memory_exceeded), graders keep gradegate's user, and
// nothing stops their network or file access. Each process has one request
// in flight; isolation "case" starts a fresh process for every case instead
// of forking one. On Windows a kill reaches the worker but not processes
// the grader started, and a timed-out case names no line.
type PortablePool struct {
	cfg  Config
	argv []string
	boot []byte // the bootstrap's input: worker.py, then the init request

	slots[*portableSlot, *portableProc]

	stopWatch func() bool

	// starts counts the processes started, for tests.
	starts atomic.Int64
}

// portableSlot is one concurrency unit and the process serving it.
type portableSlot struct {
	id     int // the sandbox slot its processes run in
	proc   *portableProc
	served int
}

var _ grading.StreamRunner = (*PortablePool)(nil)

// ms is d in milliseconds, as outcomes carry it.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// NewPortable validates cfg, starts one worker process and loads the grader
// in it, so a grader that cannot load is reported before any case runs (as
// a *LoadError). It needs an unsandboxed cfg.Sandbox: the portable pool
// puts no isolation layer in force, and must not run under a Sandbox whose
// status says it does. Cancelling ctx kills every process of the pool.
func NewPortable(ctx context.Context, cfg Config) (*PortablePool, error) {
	if err := cfg.checkPortable(); err != nil {
		return nil, err
	}
	code, err := portableWorkerSource(workerPy)
	if err != nil {
		return nil, err
	}
	fields := map[string]any{
		"op":       "init",
		"source":   cfg.Source, // base64: the bytes may be in any encoding a coding cookie declares
		"name":     cfg.SourceName,
		"contract": cfg.Contract,
		"metric":   cfg.Metric,
		// The pool starts a process per case itself: forking is Unix's.
		"isolation":    IsolationWorker,
		"memory_mb":    cfg.MemoryMB, // only named in a MemoryError's message
		"output_limit": cfg.OutputLimit,
		"grow_mb":      growLimitMBPortable,
		"cpu_seconds":  max(minCPUBudgetPortable, 4*cfg.TimeoutSeconds),
		// No RLIMIT_AS: it is not portable (macOS does not enforce it,
		// Windows has no rlimits), and the pool does not pretend to a limit.
		"set_rlimit_as":  false,
		"network_denied": false,
	}
	if cfg.MKA1 != nil {
		fields["mka1"] = cfg.MKA1
	}
	initMsg, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("worker: init request: %w", err)
	}
	boot := fmt.Appendf(nil, "%016d", len(code))
	boot = append(boot, code...)
	boot = append(boot, initMsg...)
	boot = append(boot, '\n')
	p := &PortablePool{
		cfg: cfg,
		// -I: isolated mode (see portableFlags for a HashSeed); -B: no .pyc
		// writes; -X utf8: UTF-8 streams and file defaults whatever the
		// locale. The -c program reads worker.py from stdin: passed as an
		// argument it would not fit Windows' 32 KiB command line.
		argv: append(append([]string{cfg.Python.Executable}, portableFlags(cfg)...), "-B", "-X", "utf8", "-c", portableBootstrap),
		boot: boot,
	}
	p.slots.init(cfg.Workers, portableWarmth)
	for i := range cfg.Workers {
		p.release(&portableSlot{id: i})
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

// When a process asks to be replaced without having failed (see the Linux
// pool's cpuBudget): its CPU time reached the budget, or its resident
// memory grew this much since it loaded (measured where /proc exists).
const (
	minCPUBudgetPortable = 300
	growLimitMBPortable  = 512
)

// checkPortable validates cfg for the portable pool and fills its defaults.
func (cfg *Config) checkPortable() error {
	var errs []error
	switch {
	case cfg.Sandbox == nil:
		errs = append(errs, errors.New("no sandbox"))
	case !cfg.Sandbox.Status().Unsandboxed:
		errs = append(errs, errors.New("the portable pool runs graders only unsandboxed: it puts no isolation layer in force"))
	}
	if cfg.Preprocess != nil {
		errs = append(errs, errors.New("the portable pool does not run preprocessors: grade on Linux, where the sandboxed pool runs them"))
	}
	errs = cfg.fillShared(errs)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("worker: config: %w", err)
	}
	return nil
}

// portableBootstrap is the -c program of every portable worker. It reads a
// 16-digit length and that many bytes of Python from stdin (exactly, so the
// requests behind them stay in the pipe) and runs them: worker.py as
// portableWorkerSource prepares it. It holds no double quote or backslash,
// which Windows' command line would have to escape.
const portableBootstrap = `import os
def _gradegate_read(n):
    b = b''
    while len(b) < n:
        c = os.read(0, n - len(b))
        if not c:
            os._exit(70)
        b += c
    return b
exec(compile(_gradegate_read(int(_gradegate_read(16))), '<gradegate worker>', 'exec'))
`

// portablePrologue moves the pipes where worker.py expects them: requests
// (stdin) to fd 3, responses (stdout) to fd 4. Then stdin reads nothing (a
// grader calling input() gets EOFError, not the requests) and fd 1 joins fd
// 2 in the output pipe.
const portablePrologue = `import os as _gradegate_os
_gradegate_os.dup2(0, 3)
_gradegate_os.dup2(1, 4)
_gradegate_null = _gradegate_os.open(_gradegate_os.devnull, _gradegate_os.O_RDONLY)
_gradegate_os.dup2(_gradegate_null, 0)
_gradegate_os.close(_gradegate_null)
_gradegate_os.dup2(2, 1)
if _gradegate_os.name == 'nt':
    import msvcrt as _gradegate_msvcrt
    for _gradegate_fd in (1, 3, 4):
        _gradegate_msvcrt.setmode(_gradegate_fd, _gradegate_os.O_BINARY)
`

// portableEpilogue runs after worker.py's definitions and before its main():
// on a system without SIGUSR1 and waitpid(-1) (Windows) there is no stack
// to ask for before a timeout kill and no child process to look for.
const portableEpilogue = `if not hasattr(signal, 'SIGUSR1'):
    signal.SIGUSR1 = None
    def dump_stack_on(signum):
        pass
    def leftover_children(grace=0.5):
        return False
`

// portableWorkerSource is worker.py with the prologue before it and the
// epilogue before its closing main() call.
func portableWorkerSource(src string) (string, error) {
	body, ok := strings.CutSuffix(src, "\nmain()\n")
	if !ok {
		return "", errors.New("worker: worker.py does not end with its main() call, which the portable pool runs after its own setup")
	}
	return portablePrologue + body + "\n\n" + portableEpilogue + "\nmain()\n", nil
}

// portableFlags are -I, or with a HashSeed what -I does except ignoring
// PYTHON* variables, which would ignore PYTHONHASHSEED too: -s (no user
// site) and, from Python 3.11, -P (no working directory on sys.path). The
// environment is built from nothing either way.
func portableFlags(cfg Config) []string {
	if cfg.HashSeed == "" {
		return []string{"-I"}
	}
	var major, minor int
	if _, err := fmt.Sscanf(cfg.Python.Version, "%d.%d", &major, &minor); err == nil && (major > 3 || major == 3 && minor >= 11) {
		return []string{"-s", "-P"}
	}
	return []string{"-s"}
}

// portableEnvironment is the grader's whole environment, built from nothing:
// no variable of gradegate's own environment (GITHUB_TOKEN, OPENAI_API_KEY)
// reaches a grader. PATH is the interpreter's directory, then the usual
// Unix ones; Windows also gets TEMP and TMP (os/exec adds SYSTEMROOT, which
// Python needs there).
func portableEnvironment(goos, python, scratch, hashSeed string) []string {
	if hashSeed == "" {
		hashSeed = "0"
	}
	path := filepath.Dir(python)
	if goos != "windows" {
		path += ":/usr/local/bin:/usr/bin:/bin"
	}
	env := []string{
		"PATH=" + path,
		"LANG=C.UTF-8",
		"LC_ALL=C.UTF-8",
		"HOME=" + scratch,
		"TMPDIR=" + scratch,
		"PYTHONIOENCODING=utf-8",
		"PYTHONHASHSEED=" + hashSeed,
		"PYTHONDONTWRITEBYTECODE=1",
	}
	if goos == "windows" {
		env = append(env, "TEMP="+scratch, "TMP="+scratch, "USERPROFILE="+scratch)
	}
	return env
}

// Sandbox reports the layers in force: none.
func (p *PortablePool) Sandbox() grading.Sandbox { return p.cfg.Sandbox.Status() }

// Close kills every worker process, waits for them and removes their
// scratch directories. Grade calls in flight return an error.
func (p *PortablePool) Close() error {
	p.stopWatch()
	p.shut(errors.New("worker: pool closed"))
	var errs []error
	var held []*portableSlot
	for range p.cfg.Workers {
		s, _ := p.acquire(context.Background())
		if s.proc != nil {
			errs = append(errs, p.retire(s))
		}
		held = append(held, s)
	}
	for _, s := range held {
		p.release(s)
	}
	return errors.Join(errs...)
}

// loading is always nil: a portable slot starts its process on demand.
func (p *PortablePool) loading(*portableSlot) <-chan struct{} { return nil }

// cold says that s has no process.
func (p *PortablePool) cold(s *portableSlot) bool { return s.proc == nil }

// portableWarmth ranks s for slots.acquire: its process runs, or not (a
// portable slot loads none ahead).
func portableWarmth(s *portableSlot) int {
	if s.proc != nil {
		return 2
	}
	return 0
}

// retire stops the slot's process and forgets it.
func (p *PortablePool) retire(s *portableSlot) error {
	pr := s.proc
	s.proc = nil
	return p.stopProc(pr)
}

func (p *PortablePool) stopProc(pr *portableProc) error {
	err := pr.stop()
	p.forget(pr, pr.peak.Load())
	if err != nil {
		return fmt.Errorf("worker: slot %d: %w", pr.box, err)
	}
	return nil
}

// startSlot starts a process for s, which has none, and loads the grader.
// A grader that fails to load gives a *LoadError (the process is already
// stopped); err is a tool failure.
func (p *PortablePool) startSlot(ctx context.Context, s *portableSlot) (*LoadError, error) {
	if reason := p.closedReason(); reason != nil {
		return nil, reason
	}
	dir, cleanup, err := p.cfg.Sandbox.Scratch(s.id)
	if err != nil {
		return nil, fmt.Errorf("worker: slot %d: %w", s.id, err)
	}
	spec := sandbox.Spec{Slot: s.id, ScratchDir: dir, MemoryMB: p.cfg.MemoryMB, ReadPaths: p.cfg.Python.readPaths()}
	cmd := p.cfg.Sandbox.Command(spec, p.argv, portableEnvironment(runtime.GOOS, p.cfg.Python.Executable, dir, p.cfg.HashSeed))
	pr, err := startPortableProc(cmd, p.cfg.OutputLimit, cleanup)
	if err != nil {
		if cerr := cleanup(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		return nil, fmt.Errorf("worker: slot %d: %w", s.id, err)
	}
	pr.box = s.id
	p.starts.Add(1)
	if closed := p.track(pr); closed != nil {
		return nil, errors.Join(closed, p.stopProc(pr))
	}

	start := time.Now()
	line, res := pr.exchange(ctx, p.boot, portableInitLimit, time.Duration(p.cfg.LoadTimeoutSeconds)*time.Second)
	if res == portableLine {
		var r response
		if err := json.Unmarshal(line, &r); err == nil && r.Op == "ready" {
			pr.out.forget()
			s.proc, s.served = pr, 0
			return nil, nil
		} else if err == nil && r.Op == "load_error" {
			stopErr := p.stopProc(pr)
			return r.loadError(r.output(pr.out.take(-1, 0), p.cfg.OutputLimit)), stopErr
		}
		pr.kill()
		res = portableGarbled
	}
	if res == portableCancelled {
		return nil, errors.Join(fmt.Errorf("worker: %w", context.Cause(ctx)), p.stopProc(pr))
	}
	if reason := p.closedReason(); reason != nil {
		// Close or New's context killed the process: not the grader's doing.
		return nil, errors.Join(reason, p.stopProc(pr))
	}
	if res == portableTimedOut {
		pr.dumpStack()
	}
	stopErr := p.stopProc(pr)
	o := portableDeadOutcome(&p.cfg, pr, res, pr.out.take(-1, 0), ms(time.Since(start)))
	if res == portableTimedOut {
		o.Error.Message = fmt.Sprintf("the grader took longer than load_timeout_seconds=%d to load; its process was killed", p.cfg.LoadTimeoutSeconds)
	}
	return &LoadError{Err: *o.Error, Output: o.Output}, stopErr
}

// Grade grades tasks and returns one Outcome per task, in order. The error
// is set only when gradegate itself failed; a grader's misbehaviour is an
// Outcome. Under the batch contract the tasks of one call go into batches
// of BatchSize, or one batch when it is 0.
func (p *PortablePool) Grade(ctx context.Context, tasks []grading.Task) ([]grading.Outcome, error) {
	return gradeTasks(tasks, p.cfg.BatchSize, func(next func() (grading.Task, bool, error), emit func(int, grading.Outcome) error, batch int) error {
		return streamOn(ctx, p, p.cfg.shape(), p.cfg.Workers, p.cfg.Workers, batch, next, emit)
	})
}

// Stream grades tasks as next produces them; see gate.StreamRunner. Under
// the batch contract, tasks go into batches of BatchSize (64 when 0).
func (p *PortablePool) Stream(ctx context.Context, next func() (grading.Task, bool, error), emit func(seq int, o grading.Outcome) error) error {
	batch := p.cfg.BatchSize
	if batch <= 0 {
		batch = DefaultStreamBatch
	}
	// One request in flight per process: the feeder keeps one ready each.
	return streamOn(ctx, p, p.cfg.shape(), p.cfg.Workers, p.cfg.Workers, batch, next, emit)
}

// serve grades requests on slot s until reqs closes or ctx ends, starting
// with first. It returns an error only for a tool failure.
func (p *PortablePool) serve(ctx context.Context, s *portableSlot, first *request, reqs <-chan *request, deliver func(int, grading.Outcome)) error {
	r := first
	for {
		if r == nil {
			select {
			case rr, ok := <-reqs:
				if !ok {
					return nil
				}
				r = rr
			case <-ctx.Done():
				return nil
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		if s.proc == nil {
			start := time.Now()
			loadErr, err := p.startSlot(ctx, s)
			if err != nil {
				return err
			}
			if loadErr != nil {
				// The load failure is the outcome of the request the
				// process was started for.
				ce := loadErr.Err
				ce.Message = "loading the grader: " + ce.Message
				o := grading.Outcome{Class: ce.Class, Error: &ce, Output: loadErr.Output, DurationMS: ms(time.Since(start))}
				for _, seq := range r.seqs {
					deliver(seq, o)
				}
				r = nil
				continue
			}
		}
		outs, err := p.grade(ctx, s, r)
		if err != nil {
			return err
		}
		for k, seq := range r.seqs {
			deliver(seq, outs[k])
		}
		r = nil
	}
}

// grade runs one request on s's process and returns its outcomes, replacing
// the process when it died, ran out of time, or must not serve another case.
func (p *PortablePool) grade(ctx context.Context, s *portableSlot, r *request) ([]grading.Outcome, error) {
	pr := s.proc
	start := time.Now()
	line, res := pr.exchange(ctx, r.line, r.limit(p.cfg.OutputLimit), time.Duration(p.cfg.TimeoutSeconds)*time.Second)
	elapsed := time.Since(start)
	if res == portableLine {
		rep, err := parseResponse(line, r.id)
		switch {
		case err != nil:
			pr.kill()
			res = portableGarbled
		case rep.Op == "bad_request":
			// The dataset reader refuses what Python would, so this is a
			// row that slipped through: an input error naming the case.
			return nil, errors.Join(fmt.Errorf("%w: worker: the grader process could not read the request of %s: %s; Python cannot decode this case's item or sample (fix the dataset row); gradegate sent input its own worker cannot decode",
				manifest.ErrInput, portableCaseNames(r.ids), rep.Message), p.retire(s))
		default:
			if rep.T > 0 {
				elapsed = time.Duration(rep.T * float64(time.Millisecond))
			}
			s.served += len(r.seqs)
			out := rep.output(pr.out.take(r.id, markerGrace), p.cfg.OutputLimit)
			outs := portableOutcomes(&p.cfg, rep, r, out, ms(elapsed))
			if rep.recycle() || p.cfg.Isolation == IsolationCase || p.cfg.RecycleAfter > 0 && s.served >= p.cfg.RecycleAfter {
				return outs, p.retire(s)
			}
			return outs, nil
		}
	}
	if res == portableCancelled || ctx.Err() != nil {
		return nil, errors.Join(fmt.Errorf("worker: %w", context.Cause(ctx)), p.retire(s))
	}
	if reason := p.closedReason(); reason != nil {
		// Close or New's context killed the process: not the grader's doing.
		return nil, errors.Join(reason, p.retire(s))
	}
	if res == portableTimedOut {
		pr.dumpStack()
	}
	stopErr := p.retire(s)
	o := portableDeadOutcome(&p.cfg, pr, res, pr.out.take(-1, 0), ms(elapsed))
	outs := make([]grading.Outcome, len(r.seqs))
	for i := range outs {
		outs[i] = o
	}
	return outs, stopErr
}

func portableCaseNames(ids []string) string {
	if len(ids) == 1 {
		return fmt.Sprintf("case %q", ids[0])
	}
	return fmt.Sprintf("the batch of %d cases from %q", len(ids), ids[0])
}
