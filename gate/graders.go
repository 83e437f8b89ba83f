package gate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/judge"
	"github.com/gradegate/gradegate/gate/lint"
	"github.com/gradegate/gradegate/gate/multi"
	"github.com/gradegate/gradegate/gate/sandbox"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/gate/worker"
	"github.com/gradegate/gradegate/manifest"
)

// runner starts the grader pool. A grader that cannot even be loaded is not
// a tool failure: every task then errors with the load failure, so canaries
// fail and cases count as unevaluable, and the gate holds with the reason.
//
// starting, when not nil, is called once the sandbox and Python are settled
// (s.python is set) and the grader read, just before the grader processes
// start: what it starts in the background overlaps with their start. It is
// not called when settling them fails.
func (a *Host) runner(ctx context.Context, s *Suite, env *graderEnv, starting func()) (grading.Runner, func(), error) {
	parts, err := s.parts()
	if err != nil {
		return nil, nil, err
	}
	src := parts[0].src
	if starting != nil {
		starting()
	}
	r, stop, err := env.newRunner(ctx, src)
	var le *worker.LoadError
	if errors.As(err, &le) {
		fmt.Fprintf(a.stderr, "gradegate: %s: %v\n", env.failedPath(le), le)
		return loadFailed{err: le, sandbox: env.sb.Status()}, func() {}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return r, stop, nil
}

// graderEnv starts grader pools for one suite: the sandbox and the
// interpreter are settled once, and every pool (one per mutant, or base and
// head for shadow) uses them.
type graderEnv struct {
	a       *Host
	s       *Suite
	sb      *sandbox.Sandbox
	py      worker.Python
	workers int
	// hashSeed is the grader processes' PYTHONHASHSEED; "" leaves Python's
	// random seed per process.
	hashSeed string
	// firstSlot is the first sandbox slot of the pools it starts
	// (worker.Config.FirstSlot).
	firstSlot int
	// models asks the model sub-graders of a multi grader; nil without.
	models *multi.Models
	// portable: grade with worker.PortablePool (os/exec and pipes, no
	// sandbox), the pool of every system but Linux.
	portable bool
	// startAll starts every process of a pool with the pool
	// (worker.Config.StartAll): set for the run's own pool, whose stream
	// needs them all, and not for the pools of a few cases each.
	startAll bool
	// broker makes the ctx model calls of the Python graders it starts;
	// nil for a model grader.
	broker *judge.Broker
	// meteor holds the pools of a multi grader's meteor text_similarity
	// sub-graders, started once and shared by every runner of the
	// environment (they run gradegate's own source, which no mutant or
	// base changes); close stops them.
	meteor *meteorPools
}

// meteorPools are the shared meteor pools of a graderEnv, by sub-grader
// name.
type meteorPools struct {
	mu    sync.Mutex
	pools map[string]graderPool
}

// meteorPool returns the pool of a meteor sub-grader, starting it the
// first time.
func (e *graderEnv) meteorPool(ctx context.Context, p part, i int) (graderPool, error) {
	e.meteor.mu.Lock()
	defer e.meteor.mu.Unlock()
	if pool, ok := e.meteor.pools[p.name]; ok {
		return pool, nil
	}
	pool, err := e.startPool(ctx, p, i)
	if err != nil {
		return nil, err
	}
	e.meteor.pools[p.name] = pool
	return pool, nil
}

// close stops the shared pools of the environment.
func (e *graderEnv) close() {
	e.meteor.mu.Lock()
	defer e.meteor.mu.Unlock()
	for name, p := range e.meteor.pools {
		if err := p.Close(); err != nil {
			fmt.Fprintf(e.a.stderr, "gradegate: stopping the grader processes: %v\n", err)
		}
		delete(e.meteor.pools, name)
	}
}

// graders establishes the sandbox (or refuses, exit 3) and resolves Python.
func (a *Host) graders(ctx context.Context, s *Suite, f GraderOptions) (*graderEnv, error) {
	// The interpreter is asked for its version while the sandbox probes its
	// layers: two process starts at once instead of one after the other.
	// An interpreter the graders' uids will not reach is not asked: the
	// default one then falls back to a system interpreter, and that is the
	// one to ask (reachablePython), here already.
	var resolved worker.Python
	var resolveErr error
	var skipped bool
	var pre probed
	var resolving sync.WaitGroup
	opts := a.resolveOptions(true)
	resolving.Go(func() {
		path, err := worker.LocatePython(f.Python, opts)
		if err != nil {
			resolveErr = err
			return
		}
		if fallback, unreachable := a.fallbackFor(f, path); unreachable {
			resolved, skipped = worker.Python{Executable: path}, true
			if fallback != "" {
				pre.path = fallback
				pre.py, pre.err = worker.ProbePython(ctx, fallback, opts)
			}
			return
		}
		resolved, resolveErr = worker.ProbePython(ctx, path, opts)
	})
	sb, err := sandbox.New(sandbox.WithUnsandboxed(f.Unsandboxed))
	resolving.Wait()
	if err != nil {
		return nil, SandboxRefusal(err)
	}
	if skipped && sb.CheckInterpreter(resolved.Executable) == nil {
		// This sandbox keeps gradegate's uid after all.
		resolved, resolveErr = worker.ProbePython(ctx, resolved.Executable, opts)
	}
	py, err := a.reachablePython(ctx, sb, f.Python, resolved, resolveErr, pre)
	if err != nil {
		return nil, err
	}
	s.python = py
	if err := a.multiModels(s, f, false, shard.Shard{}); err != nil {
		return nil, err
	}
	broker, err := a.runBroker(s, f.Judge)
	if err != nil {
		return nil, err
	}
	portable := f.Unsandboxed && (runtime.GOOS != "linux" || a.getenv(workerPoolEnv) == "portable")
	if mb := s.Manifest.Grader.MemoryMB; portable && mb > 0 && !a.memoryNoted {
		a.memoryNoted = true
		fmt.Fprintf(a.stderr, "gradegate: memory_mb=%d is not enforced: this system's worker pool has no memory limit (the gradegate Action enforces it)\n", mb)
	}
	return &graderEnv{a: a, s: s, sb: sb, py: py, workers: f.Workers, models: s.models, broker: broker, portable: portable,
		meteor: &meteorPools{pools: map[string]graderPool{}}}, nil
}

// SandboxRefusal is the error a grading command fails with when the
// sandbox cannot be established (exit 3).
func SandboxRefusal(err error) error {
	switch {
	case errors.Is(err, sandbox.ErrNotAvailable):
		// Not Linux: the error says why and what to do, in one line.
		return err
	case errors.Is(err, sandbox.ErrNoNetworkBoundary) || errors.Is(err, sandbox.ErrNoFilesystemBoundary) || errors.Is(err, sandbox.ErrSecretsExposed) || errors.Is(err, sandbox.ErrProcessBoundary):
		return fmt.Errorf("%w\n(run `gradegate doctor` to see which layers this machine allows; --unsandboxed grades without them and says so in every output)", err)
	}
	return fmt.Errorf("starting the sandbox: %w", err)
}

// workerPoolEnv set to "portable" makes an --unsandboxed command on Linux
// grade with the portable worker pool, the one macOS and Windows grade
// with, so that path can be run and tested on Linux.
const workerPoolEnv = "GRADEGATE_WORKER_POOL"

// newRunner starts a pool grading with src (for a multi grader, pools for
// its python sub-graders, the first grading src and the others their
// pinned sources). A grader that cannot load is returned as a
// *worker.LoadError.
func (e *graderEnv) newRunner(ctx context.Context, src []byte) (grading.Runner, func(), error) {
	return e.newRunnerPart(ctx, 0, src)
}

// runnerFor is the runner factory for part k of the grader: the runners it
// starts grade src in place of that part's pinned source.
func (e *graderEnv) runnerFor(k int) func(ctx context.Context, src []byte) (grading.Runner, func(), error) {
	return func(ctx context.Context, src []byte) (grading.Runner, func(), error) {
		return e.newRunnerPart(ctx, k, src)
	}
}

// newRunnerPart starts one pool per Python part of the grader, part k
// grading src and every other its pinned source, and wraps them into the
// grader's runner. A part that cannot load is a *worker.LoadError naming
// the part.
func (e *graderEnv) newRunnerPart(ctx context.Context, k int, src []byte) (grading.Runner, func(), error) {
	parts, err := e.s.parts()
	if err != nil {
		return nil, nil, err
	}
	if k < 0 || k >= len(parts) {
		return nil, nil, fmt.Errorf("the grader has no python part %d", k)
	}
	parts[k].src = src
	// A meteor text_similarity runs gradegate's own meteor source in a
	// pool of its own, after the python parts.
	var meteors []manifest.SubGrader
	var subs []manifest.SubGrader
	if mg := e.s.Manifest.Grader.Multi; mg != nil {
		subs = mg.Graders
	}
	for _, sg := range subs {
		if multi.Meteor(sg) {
			meteors = append(meteors, sg)
			parts = append(parts, part{name: sg.Name, g: e.s.Manifest.Grader.Part(manifest.SubGrader{
				Source: multi.MeteorFile, TimeoutSeconds: e.s.Manifest.Grader.TimeoutSeconds, MemoryMB: e.s.Manifest.Grader.MemoryMB, Isolation: worker.IsolationWorker,
			}), src: multi.MeteorSource})
		}
	}
	python := len(parts) - len(meteors)
	pools := make([]graderPool, len(parts))
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i, p := range parts {
		if i >= python {
			wg.Go(func() { pools[i], errs[i] = e.meteorPool(ctx, p, i) })
			continue
		}
		wg.Go(func() { pools[i], errs[i] = e.startPool(ctx, p, i) })
	}
	wg.Wait()
	stop := func() {
		for _, p := range pools[:python] {
			if p == nil {
				continue
			}
			if err := p.Close(); err != nil {
				fmt.Fprintf(e.a.stderr, "gradegate: stopping the grader processes: %v\n", err)
			}
		}
	}
	for i, err := range errs {
		if err == nil {
			continue
		}
		stop()
		var le *worker.LoadError
		switch {
		case errors.As(err, &le) && i >= python:
			return nil, nil, meteorMissing(e.s.Manifest, meteors[i-python], e.py, le)
		case errors.As(err, &le):
			return nil, nil, partLoadError(parts[:python], i, le)
		}
		return nil, nil, fmt.Errorf("starting the grader: %w", err)
	}
	g := e.s.Manifest.Grader
	runners := make([]grading.Runner, python)
	for i, p := range pools[:python] {
		runners[i] = p
	}
	meteor := map[string]grading.Runner{}
	for i, sg := range meteors {
		meteor[sg.Name] = pools[python+i]
	}
	var broker grading.ModelBroker
	if e.broker != nil {
		broker = e.broker
	}
	return grading.Ranged(multi.WrapParts(runners, meteor, g.Multi, e.models, broker), g.Range), stop, nil
}

// meteorMissing is the refusal of a meteor text_similarity whose grader
// cannot load: nltk or its WordNet data cannot be imported by the
// interpreter the graders run with.
func meteorMissing(m *manifest.Manifest, sg manifest.SubGrader, py worker.Python, le *worker.LoadError) error {
	key := manifest.PartKey(sg.Name) + ".evaluation_metric"
	return &manifest.Error{File: m.File, Line: m.Line(key), Key: key, Msg: fmt.Sprintf(
		"meteor needs nltk and its WordNet data, which %s cannot import in the sandbox (%s); install them there (pip install nltk && python -m nltk.downloader wordnet) or choose another metric",
		py.Executable, oneLine(le.Err.Message))}
}

// oneLine is the first line of s.
func oneLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// graderPool is a started worker pool: the sandboxed one, or the portable
// one of --unsandboxed on every system but Linux.
type graderPool interface {
	grading.StreamRunner
	Close() error
}

// workerCount is how many processes each of the environment's pools runs.
func (e *graderEnv) workerCount() int {
	if e.workers > 0 {
		return e.workers
	}
	return runtime.NumCPU()
}

// slotsPerRunner is how many sandbox slots one runner of the environment
// takes: each pool of a part (python or meteor) its workers' slots and as
// many again for replacements loading beside them. Runners that run at the
// same time on one sandbox start firstSlot this far apart.
func (e *graderEnv) slotsPerRunner() int {
	parts := 1
	if mg := e.s.Manifest.Grader.Multi; mg != nil {
		parts = 0
		for _, sg := range mg.Graders {
			if sg.Type == "python" || multi.Meteor(sg) {
				parts++
			}
		}
		parts = max(parts, 1)
	}
	return parts * 2 * e.workerCount()
}

// startPool starts the worker pool of part i of the grader (python parts
// first, then meteor parts), on sandbox slots of its own.
func (e *graderEnv) startPool(ctx context.Context, p part, i int) (graderPool, error) {
	cfg := worker.Config{
		Source:         p.src,
		SourceName:     filepath.Base(p.g.Source),
		Contract:       p.g.Contract,
		Metric:         p.g.Metric,
		TimeoutSeconds: p.g.TimeoutSeconds,
		MemoryMB:       p.g.MemoryMB,
		Isolation:      p.g.Isolation,
		Workers:        e.workerCount(),
		Python:         e.py,
		Sandbox:        e.sb,
		HashSeed:       e.hashSeed,
		FirstSlot:      e.firstSlot + i*2*e.workerCount(),
		StartAll:       e.startAll,

		LoadTimeoutSeconds: p.g.LoadTimeoutSeconds,
		MKA1:               mka1Worker(e.s.Manifest, p.g),
		BatchSize:          aggregateBatch(p.g),
		MaxModelCalls:      p.g.MaxModelCalls,
	}
	if e.broker != nil && i < e.pythonParts() {
		cfg.Broker = e.broker
	}
	pre, err := e.s.preprocessor()
	if err != nil {
		return nil, err
	}
	cfg.Preprocess = pre
	// A failed start returns a nil interface, never a nil pool in one.
	if e.portable {
		pool, err := worker.NewPortable(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return pool, nil
	}
	pool, err := worker.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return pool, nil
}

// partLoadError names the part that did not load when the grader has more
// than one: its lines are its own file's, so for every part but the first
// (grader.source) the line moves into the message.
func partLoadError(parts []part, i int, le *worker.LoadError) *worker.LoadError {
	if len(parts) < 2 {
		return le
	}
	out := *le
	// The load message may start with the exception type, which every
	// rendering puts in front again.
	msg := strings.TrimPrefix(le.Err.Message, le.Err.Type+": ")
	out.Err.Message = fmt.Sprintf("sub-grader %s: %s", parts[i].name, msg)
	if i > 0 && le.Err.Line > 0 {
		out.Err.Message = fmt.Sprintf("sub-grader %s (%s line %d): %s", parts[i].name, filepath.Base(parts[i].path), le.Err.Line, msg)
		out.Err.Line = 0
	}
	return &out
}

// failedPath is the grader file a load error is about, for messages.
func (e *graderEnv) failedPath(le *worker.LoadError) string {
	parts, err := e.s.parts()
	if err != nil || len(parts) < 2 {
		return e.s.Manifest.Path(e.s.Manifest.Grader.Source)
	}
	for _, p := range parts[1:] {
		if strings.HasPrefix(le.Err.Message, "sub-grader "+p.name+" ") || strings.HasPrefix(le.Err.Message, "sub-grader "+p.name+":") {
			return p.path
		}
	}
	return parts[0].path
}

// loadFailed is the runner of a grader that failed to load.
type loadFailed struct {
	err     *worker.LoadError
	sandbox grading.Sandbox
}

func (l loadFailed) Grade(ctx context.Context, tasks []grading.Task) ([]grading.Outcome, error) {
	out := make([]grading.Outcome, len(tasks))
	for i := range tasks {
		e := l.err.Err
		// The load message may already start with the exception type, which
		// every rendering puts in front again.
		e.Message = strings.TrimPrefix(e.Message, e.Type+": ")
		out[i] = grading.Outcome{Class: e.Class, Error: &e, Output: l.err.Output, LoadFailed: true}
	}
	return out, nil
}

func (l loadFailed) Sandbox() grading.Sandbox { return l.sandbox }

// Python resolves the grader interpreter once. An interpreter named with
// --python or GRADEGATE_PYTHON is used or refused as it is; the default
// python3 falls back to a system interpreter the graders can execute, and
// says so.
func (a *Host) Python(ctx context.Context, sb *sandbox.Sandbox, name string) (worker.Python, error) {
	py, err := worker.Resolve(ctx, name, a.resolveOptions(false))
	return a.reachablePython(ctx, sb, name, py, err, probed{})
}

// resolveOptions are how the host finds and asks interpreters: a shim
// reads the host's environment, and the answers are kept in the user's
// cache folder.
func (a *Host) resolveOptions(withWorker bool) worker.ResolveOptions {
	return worker.ResolveOptions{Getenv: a.getenv, CacheDir: worker.CacheDir(a.getenv, "python"), Worker: withWorker, Ahead: withWorker}
}

// fallbackPythons are the system interpreters the default python3 falls
// back to, in order.
func fallbackPythons() []string { return []string{"/usr/local/bin/python3", "/usr/bin/python3"} }

// likelyPython is the interpreter file graders() will most likely settle on,
// known without starting a process, or "" when it cannot be told: the
// located interpreter, or when the grader uids will not reach it, the
// system interpreter the default falls back to.
func (a *Host) likelyPython(f GraderOptions) string {
	path, err := worker.LocatePython(f.Python, a.resolveOptions(false))
	if err != nil {
		return ""
	}
	if fallback, unreachable := a.fallbackFor(f, path); unreachable {
		return fallback
	}
	return path
}

// fallbackFor says whether path, the located interpreter, is the default
// one and out of the grader uids' reach (as root, under /root, say), and
// if so the first system interpreter they can reach ("" for none), which
// the default then falls back to.
func (a *Host) fallbackFor(f GraderOptions, path string) (fallback string, unreachable bool) {
	if !a.mayFallBack(f.Python) || f.Unsandboxed || os.Geteuid() != 0 || sandbox.OthersCanRun(path) == nil {
		return "", false
	}
	for _, cand := range fallbackPythons() {
		if sandbox.OthersCanRun(cand) == nil {
			return cand, true
		}
	}
	return "", true
}

// lintCache keeps the grader lint's answers in the user's cache folder.
func (a *Host) lintCache() lint.Option {
	return lint.CacheIn(worker.CacheDir(a.getenv, "scripts"))
}

// mayFallBack reports whether the interpreter name is the default one,
// which falls back to a system interpreter the graders can reach.
func (a *Host) mayFallBack(name string) bool {
	return name == "python3" && a.getenv("GRADEGATE_PYTHON") == ""
}

// GradingPython is the interpreter a grading command would grade with,
// for the commands that only check the grader (validate): the same one, so
// that what validate lints and imports is what run grades with.
func (a *Host) GradingPython(ctx context.Context, name string) (worker.Python, error) {
	sb, err := sandbox.New()
	if err != nil {
		// No network boundary here: the grading commands refuse to grade,
		// and the interpreter is checked as --unsandboxed would use it.
		if sb, err = sandbox.New(sandbox.WithUnsandboxed(true)); err != nil {
			return worker.Python{}, fmt.Errorf("the sandbox: %w", err)
		}
	}
	defer sb.Close()
	return a.Python(ctx, sb, name)
}

// probed is a fallback interpreter already asked (path "" for none).
type probed struct {
	path string
	py   worker.Python
	err  error
}

// reachablePython is python for an interpreter already resolved (py, or
// the error resolving it); pre is a fallback already asked.
func (a *Host) reachablePython(ctx context.Context, sb *sandbox.Sandbox, name string, py worker.Python, err error, pre probed) (worker.Python, error) {
	if err != nil {
		return worker.Python{}, fmt.Errorf("resolving the Python interpreter (--python, GRADEGATE_PYTHON): %w", err)
	}
	reach := sb.CheckInterpreter(py.Executable)
	if reach == nil {
		return py, nil
	}
	if !a.mayFallBack(name) {
		return worker.Python{}, fmt.Errorf("the Python interpreter: %w", reach)
	}
	// A version manager under /root (mode 0700) is common on CI machines where
	// gradegate runs as root, and the grader uids cannot search /root.
	for _, cand := range fallbackPythons() {
		if sb.CheckInterpreter(cand) != nil {
			continue
		}
		alt, err := pre.py, pre.err
		if cand != pre.path {
			alt, err = worker.ProbePython(ctx, cand, a.resolveOptions(true))
		}
		if err != nil {
			continue
		}
		if !a.pythonNoted {
			fmt.Fprintf(a.stderr, "gradegate: Python %s (%s): the grader uids cannot reach %s (--python names another)\n", alt.Version, alt.Executable, py.Executable)
			a.pythonNoted = true
		}
		return alt, nil
	}
	return worker.Python{}, fmt.Errorf("the Python interpreter: %w (name a reachable one with --python or GRADEGATE_PYTHON)", reach)
}

// DefaultPython is the interpreter a command uses unless --python names one.
func DefaultPython(getenv func(string) string) string {
	if p := getenv("GRADEGATE_PYTHON"); p != "" {
		return p
	}
	return "python3"
}

// pythonParts counts the grader's python parts: the pools before them are
// the grader's own code, the meteor pools after them gradegate's.
func (e *graderEnv) pythonParts() int {
	mg := e.s.Manifest.Grader.Multi
	if mg == nil {
		return 1
	}
	n := 0
	for _, sg := range mg.Graders {
		if sg.Type == "python" {
			n++
		}
	}
	return n
}
