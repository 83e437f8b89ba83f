package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/gradegate/gradegate/canary/hosted"
	"github.com/gradegate/gradegate/gate"
	"github.com/gradegate/gradegate/gate/digest"
	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/lint"
	"github.com/gradegate/gradegate/gate/multi"
	"github.com/gradegate/gradegate/gate/render"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/sandbox"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/gate/verdict"
	"github.com/gradegate/gradegate/gate/worker"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
	"github.com/gradegate/gradegate/manifest/input"
)

// gradeFlags are the options of the commands that run the grader.
type gradeFlags struct {
	format      format
	results     string
	shard       shardFlag
	workers     int
	unsandboxed bool
	python      string
	judge       judgeFlags // model graders
	limits      input.Limits
	canarySeed  uint64
	baseline    baselineInput // run --baseline
}

func (g *gradeFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	g.format = formatHuman
	fs.Var(&g.format, "format", "stdout format: human, json or markdown")
	fs.StringVar(&g.results, "results", "", "write the results JSON to this file")
	g.workers = min(runtime.NumCPU(), maxWorkers)
	fs.Var(positive{&g.workers, maxWorkers}, "workers", fmt.Sprintf("grader processes, 1 to %d; default: the number of CPUs", maxWorkers))
	fs.BoolVar(&g.unsandboxed, "unsandboxed", false, "grade without the sandbox (every output says so)")
	fs.StringVar(&g.python, "python", defaultPython(getenv), "Python interpreter for the grader (env GRADEGATE_PYTHON)")
	g.judge.register(fs)
	registerLimits(fs, &g.limits)
	fs.Uint64Var(&g.canarySeed, "canary-seed", 0, "place the canaries among the cases as a past run did (its canaries[].placement.seed); default: a fresh seed")
}

// suite is a loaded manifest with the bytes its digests were checked against.
type suite struct {
	m      *manifest.Manifest
	fsys   hostFS
	source []byte
	// partSources are a multi grader's further python sub-graders' bytes,
	// by sub-grader name, read once as source is; partsMu guards them, as
	// the lint reads them while the pools start.
	partsMu     sync.Mutex
	partSources map[string][]byte
	python      worker.Python // resolved by runner
	// models asks a multi grader's model sub-graders; every runner of the
	// suite shares it, so each request is asked once.
	models *multi.Models
}

func loadSuite(path string, limits input.Limits) (*suite, error) {
	fsys := hostFS{}
	m, err := manifest.Load(fsys, filepath.ToSlash(path), manifest.WithLimits(limits))
	if err != nil {
		return nil, err
	}
	return &suite{m: m, fsys: fsys}, nil
}

// loadCases reads the dataset and the samples whole and checks the dataset
// contract. The grader and the rubric, which are read later, are checked to
// be readable now, so every file problem of the run is reported at once.
func (s *suite) loadCases() (*dataset.Set, error) {
	set, err := dataset.Load(s.fsys, s.m)
	if ferr := s.laterFiles(); ferr != nil {
		return nil, errors.Join(err, ferr)
	}
	return set, err
}

// largeDatasetBytes is the dataset size from which a run starts every
// grader process with its pool (about 5,000 rows of typical size): below
// it, the processes beyond the first start only when cases wait for them,
// and a small suite of a fast grader is done before a second could load.
const largeDatasetBytes = 1 << 20

// largeDataset says whether the dataset file is at least largeDatasetBytes.
func (s *suite) largeDataset() bool {
	fi, err := fs.Stat(s.fsys, s.m.Path(s.m.Dataset.Path))
	return err == nil && fi.Size() >= largeDatasetBytes
}

// laterFiles checks that the files read after the dataset, the rubric and
// the grader, can be read, without reading them: with the dataset's own
// problems they make every file problem of a run one report.
func (s *suite) laterFiles() error {
	return s.m.CheckFiles(s.fsys, "rubric.path", "grader.source")
}

// graderSource reads the grader once: these exact bytes are both the ones
// whose digest the gate checks and the ones the worker loads.
func (s *suite) graderSource() ([]byte, error) {
	if s.source != nil {
		return s.source, nil
	}
	name := s.m.Path(s.m.Grader.Source)
	b, err := input.ReadFile(s.fsys, name, input.Grader, s.m.Limits.Of(input.Grader))
	if err != nil {
		return nil, manifest.ReadError(s.m.File, s.m.Line("grader.source"), "grader.source", "cannot read "+name, err)
	}
	s.source = b
	return b, nil
}

// part is one Python source of the grader: the grader's own (for a multi
// grader its first python sub-grader), or a further python sub-grader of a
// multi grader.
type part struct {
	// name is the sub-grader's name; "" for a python grader.
	name string
	// g is the grader the part runs as: its source, digest, image tag and
	// limits.
	g manifest.Grader
	// path is the source's path as the suite reads it; key the manifest
	// key that names it.
	path, key string
	src       []byte
}

// parts reads every Python source of the grader, the grader's own first;
// these exact bytes are the ones whose digests the gate checks and the ones
// the workers load.
func (s *suite) parts() ([]part, error) {
	s.partsMu.Lock()
	defer s.partsMu.Unlock()
	src, err := s.graderSource()
	if err != nil {
		return nil, err
	}
	g := s.m.Grader
	subs := g.Multi.PythonParts()
	first := part{g: g, path: s.m.Path(g.Source), key: "grader.source", src: src}
	if len(subs) == 0 {
		return []part{first}, nil
	}
	first.name = subs[0].Name
	out := []part{first}
	for _, sg := range subs[1:] {
		p := part{name: sg.Name, g: g.Part(sg), path: s.m.Path(sg.Source), key: manifest.PartKey(sg.Name) + ".source"}
		if p.src = s.partSources[sg.Name]; p.src == nil {
			b, err := input.ReadFile(s.fsys, p.path, input.Grader, s.m.Limits.Of(input.Grader))
			if err != nil {
				return nil, manifest.ReadError(s.m.File, s.m.Line(p.key), p.key, "cannot read "+p.path, err)
			}
			if s.partSources == nil {
				s.partSources = map[string][]byte{}
			}
			s.partSources[sg.Name], p.src = b, b
		}
		out = append(out, p)
	}
	return out, nil
}

// lint reads every Python source of the grader without running it (grade
// signature, size, imports outside the image tag, broad excepts returning
// credit, …). image is the Action image gradegate runs in
// (GRADEGATE_IMAGE).
func (s *suite) lint(ctx context.Context, image string, opts ...lint.Option) ([]manifest.Finding, error) {
	parts, err := s.parts()
	if err != nil {
		return nil, err
	}
	opts = append(opts, lint.InImage(lint.ActionImage(image)))
	var all []manifest.Finding
	for _, p := range parts {
		fs, err := lint.Grader(ctx, s.python.Executable, p.src, p.path, p.g, opts...)
		if err != nil {
			return nil, fmt.Errorf("linting the grader %s: %w", p.path, err)
		}
		all = append(all, fs...)
	}
	return append(all, lint.Scale(s.m)...), nil
}

// runner starts the grader pool. A grader that cannot even be loaded is not
// a tool failure: every task then errors with the load failure, so canaries
// fail and cases count as unevaluable, and the gate holds with the reason.
//
// starting, when not nil, is called once the sandbox and Python are settled
// (s.python is set) and the grader read, just before the grader processes
// start: what it starts in the background overlaps with their start. It is
// not called when settling them fails.
func (a *app) runner(ctx context.Context, s *suite, env *graderEnv, starting func()) (grading.Runner, func(), error) {
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
	a       *app
	s       *suite
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
func (a *app) graders(ctx context.Context, s *suite, f gradeFlags) (*graderEnv, error) {
	// The interpreter is asked for its version while the sandbox probes its
	// layers: two process starts at once instead of one after the other.
	var resolved worker.Python
	var resolveErr error
	var resolving sync.WaitGroup
	resolving.Go(func() { resolved, resolveErr = worker.ResolvePythonWorker(ctx, f.python) })
	sb, err := sandbox.New(sandbox.WithUnsandboxed(f.unsandboxed))
	resolving.Wait()
	if err != nil {
		return nil, sandboxRefusal(err)
	}
	py, err := a.reachablePython(ctx, sb, f.python, resolved, resolveErr)
	if err != nil {
		return nil, err
	}
	s.python = py
	if err := a.multiModels(s, f, false, shard.Shard{}); err != nil {
		return nil, err
	}
	portable := f.unsandboxed && (runtime.GOOS != "linux" || a.getenv(workerPoolEnv) == "portable")
	if mb := s.m.Grader.MemoryMB; portable && mb > 0 && !a.memoryNoted {
		a.memoryNoted = true
		fmt.Fprintf(a.stderr, "gradegate: memory_mb=%d is not enforced: this system's worker pool has no memory limit (the gradegate Action enforces it)\n", mb)
	}
	return &graderEnv{a: a, s: s, sb: sb, py: py, workers: f.workers, models: s.models, portable: portable,
		meteor: &meteorPools{pools: map[string]graderPool{}}}, nil
}

// sandboxRefusal is the error a grading command fails with when the
// sandbox cannot be established (exit 3).
func sandboxRefusal(err error) error {
	switch {
	case errors.Is(err, sandbox.ErrNotAvailable):
		// Not Linux: the error says why and what to do, in one line.
		return err
	case errors.Is(err, sandbox.ErrNoNetworkBoundary) || errors.Is(err, sandbox.ErrNoFilesystemBoundary) || errors.Is(err, sandbox.ErrSecretsExposed):
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
	if mg := e.s.m.Grader.Multi; mg != nil {
		subs = mg.Graders
	}
	for _, sg := range subs {
		if multi.Meteor(sg) {
			meteors = append(meteors, sg)
			parts = append(parts, part{name: sg.Name, g: e.s.m.Grader.Part(manifest.SubGrader{
				Source: multi.MeteorFile, TimeoutSeconds: e.s.m.Grader.TimeoutSeconds, MemoryMB: e.s.m.Grader.MemoryMB, Isolation: worker.IsolationWorker,
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
			return nil, nil, meteorMissing(e.s.m, meteors[i-python], e.py, le)
		case errors.As(err, &le):
			return nil, nil, partLoadError(parts[:python], i, le)
		}
		return nil, nil, fmt.Errorf("starting the grader: %w", err)
	}
	g := e.s.m.Grader
	runners := make([]grading.Runner, python)
	for i, p := range pools[:python] {
		runners[i] = p
	}
	meteor := map[string]grading.Runner{}
	for i, sg := range meteors {
		meteor[sg.Name] = pools[python+i]
	}
	return grading.Ranged(multi.WrapParts(runners, meteor, g.Multi, e.models), g.Range), stop, nil
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
	if mg := e.s.m.Grader.Multi; mg != nil {
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
	}
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
		return e.s.m.Path(e.s.m.Grader.Source)
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

func (a *app) cmdRun(ctx context.Context, args []string) outcome {
	return a.grade(ctx, "run", args, false)
}

func (a *app) cmdCanary(ctx context.Context, args []string) outcome {
	return a.grade(ctx, "canary", args, true)
}

// grade is `run` and `canary`: load, grade, decide, write, exit.
func (a *app) grade(ctx context.Context, name string, args []string, canariesOnly bool) outcome {
	fs := newFlagSet(name, a.stderr)
	var f gradeFlags
	f.register(fs, a.getenv)
	var hostedOn bool
	var hostedURL string
	if canariesOnly {
		fs.BoolVar(&hostedOn, "hosted", false, "also run the canaries on OpenAI's hosted grader (OPENAI_API_KEY)")
		fs.StringVar(&hostedURL, "hosted-url", hosted.DefaultBaseURL, "base URL of the hosted grader API")
	} else {
		fs.Var(&f.shard, "shard", "grade only shard K of N (K/N)")
		fs.StringVar(&f.baseline.file, "baseline", "", "compare with the base branch's results file; hold when the cases graded in both did worse")
	}
	pos, done := a.parseFlags(fs, args)
	if done != nil {
		return *done
	}
	path, err := manifestArg(name, pos)
	if err != nil {
		return a.fail(name, err)
	}
	if err := outputFor(a).check(f.results); err != nil {
		return a.fail(name, err)
	}
	s, err := loadSuite(path, f.limits)
	if err != nil {
		return a.fail(name, err)
	}
	if f.baseline.file != "" {
		f.baseline.rule, f.baseline.name = s.m.Gate.Baseline, s.m.Name
		if err := checkBaseline(f.baseline, f.limits); err != nil {
			return a.fail(name, err)
		}
	}
	if s.m.Grader.Judge != nil {
		// A model grader's calls, not memory, bound its suites: its dataset
		// is read whole.
		var set *dataset.Set
		if !canariesOnly {
			if set, err = s.loadCases(); err != nil {
				return a.fail(name, err)
			}
		}
		opts := gate.Options{Version: currentVersion().String(), CanariesOnly: canariesOnly, CanarySeed: f.canarySeed}
		if f.shard.count > 0 {
			opts.Shard = shard.Shard{Index: f.shard.index, Count: f.shard.count}
		}
		return a.gradeJudge(ctx, name, s, set, f, opts, hostedOn)
	}
	var src *dataset.Reader
	if !canariesOnly {
		// The dataset streams while it is graded; files that cannot be
		// opened are reported now, with every other problem of the dataset.
		src = dataset.Open(s.fsys, s.m)
		if src.Err() != nil {
			_, err := src.Close()
			return a.fail(name, errors.Join(err, s.laterFiles()))
		}
		defer src.Close()
	}
	if hostedOn && a.getenv("OPENAI_API_KEY") == "" {
		return a.fail(name, fmt.Errorf("%w: --hosted needs OPENAI_API_KEY in the environment", manifest.ErrInput))
	}
	// A multi grader's model calls are counted against the cache and the
	// budget over what this command grades, before any is sent.
	if err := a.multiModels(s, f, canariesOnly, shard.Shard{Index: f.shard.index, Count: f.shard.count}); err != nil {
		return a.fail(name, err)
	}
	var lintOpts []lint.Option
	if hostedOn {
		lintOpts = append(lintOpts, lint.ForHosted())
	}
	// The grader lint (a Python process of its own) runs while the grader
	// processes start; a failure to start them is reported first.
	var findings []manifest.Finding
	var lintErr error
	var linting sync.WaitGroup
	env, err := a.graders(ctx, s, f)
	if err != nil {
		return a.fail(name, err)
	}
	// The environment's shared pools (a meteor sub-grader's) serve the
	// run, the mutation score and the determinism check.
	defer env.close()
	// A large dataset's pool starts all its processes at once: they load
	// while the lint and the canaries run, instead of when grading begins.
	runEnv := *env
	runEnv.startAll = !canariesOnly && s.largeDataset()
	r, stopPool, err := a.runner(ctx, s, &runEnv, func() {
		linting.Go(func() { findings, lintErr = s.lint(ctx, a.getenv(imageEnv), lintOpts...) })
	})
	linting.Wait()
	if err != nil {
		return a.fail(name, err)
	}
	stop := sync.OnceFunc(stopPool)
	defer stop()
	if lintErr != nil {
		return a.fail(name, lintErr)
	}
	opts := gate.Options{Version: currentVersion().String(), CanariesOnly: canariesOnly, CanarySeed: f.canarySeed}
	if f.shard.count > 0 {
		opts.Shard = shard.Shard{Index: f.shard.index, Count: f.shard.count}
	}
	sample, err := determinismSample(s, !canariesOnly, &opts)
	if err != nil {
		return a.fail(name, err)
	}
	a.noteImageTag(s)
	var mutationExcluded []results.MutationExclusion
	if !canariesOnly {
		mutation, mutFindings, err := a.measureMutation(ctx, s, env, f, opts.Shard)
		if err != nil {
			return a.fail(name, err)
		}
		findings = append(findings, mutFindings...)
		if mutation != nil {
			opts.MutationScore = &mutation.Score
			mutationExcluded = mutation.Excluded
		}
		opts.SpoolDir = os.TempDir()
		if opts.Progress = a.progress(f.format); opts.Progress != nil {
			opts.Rows = digest.CountRows(s.fsys, s.m.Path(s.m.Dataset.Path))
		}
	}
	in := gate.Inputs{Manifest: s.m, FS: loadedFS{s}, Findings: findings}
	if src != nil {
		in.Source = src
	}
	res, err := gate.Run(ctx, in, r, opts)
	// The determinism check starts pools of its own on the same sandbox
	// slots: this one's processes end first.
	stop()
	if err != nil {
		return a.fail(name, err)
	}
	defer res.Close()
	res.MutationExcluded = mutationExcluded
	if s.models != nil {
		verdict.AddJudge(res, s.models.Usage(), subGraderLint(s.m))
	}
	if err := a.checkDeterminism(ctx, s, env, sample, !canariesOnly, f, opts.Shard, res); err != nil {
		return a.fail(name, err)
	}
	var hostedErr error
	if hostedOn {
		// Every attempt is kept in the results; a disagreement, or a hosted
		// run that could not finish, holds as canary_failed.
		parity, perr := a.hostedParity(ctx, s, res, hostedURL)
		if perr != nil && parity == nil {
			return a.fail(name, perr)
		}
		verdict.AddHosted(res, parity, perr)
		hostedErr = perr
	}
	o := a.finish(name, res, f)
	if hostedErr != nil {
		// The hosted grader could not be asked (auth, network, retries
		// exhausted): gradegate could not do its job, whatever was recorded.
		fmt.Fprintf(a.stderr, "gradegate %s: hosted grader: %v\n", name, hostedErr)
		o.code = exitInternal
	}
	if res.Hosted != nil && f.format == formatHuman {
		if err := res.Hosted.WriteText(a.stdout); err != nil {
			return a.failWith(name, o, err)
		}
	}
	return o
}

// finish writes the results file and stdout, and turns the verdict into the
// exit code. A failure to write is a tool failure: never a pass.
func (a *app) finish(name string, res *results.Results, f gradeFlags) outcome {
	if f.baseline.file != "" {
		if err := applyBaseline(res, f.baseline, f.limits); err != nil {
			return a.fail(name, err)
		}
	}
	o := outcome{results: res, code: exitHold}
	if res.Verdict == results.VerdictPass {
		o.code = exitPass
	}
	if f.results != "" {
		if err := outputFor(a).writeJSON(f.results, res); err != nil {
			return a.failWith(name, o, err)
		}
	}
	if err := a.render(res, f.format); err != nil {
		return a.failWith(name, o, err)
	}
	return o
}

// failWith reports a failure after results exist: the action still reports
// them, and the exit code is never a pass.
func (a *app) failWith(name string, o outcome, err error) outcome {
	fmt.Fprintf(a.stderr, "gradegate %s: %v\n", name, err)
	o.code = exitInternal
	return o
}

func (a *app) render(res *results.Results, f format) error {
	switch f {
	case formatJSON:
		return res.WriteJSON(a.stdout)
	case formatMarkdown:
		return render.Markdown(a.stdout, res, render.MarkdownOptions{})
	}
	return render.Human(a.stdout, res, a.colorOptions())
}

// colorOptions turns color on only for a terminal without NO_COLOR.
func (a *app) colorOptions() render.Options {
	file, ok := a.stdout.(*os.File)
	return render.Options{Color: ok && render.ColorEnabled(a.getenv, file)}
}

// hostedParity runs the canaries on OpenAI's hosted grader and compares.
func (a *app) hostedParity(ctx context.Context, s *suite, res *results.Results, baseURL string) (*hosted.Report, error) {
	g, err := s.hostedGrader()
	if err != nil {
		return nil, err
	}
	c := hosted.NewClient(baseURL, a.getenv("OPENAI_API_KEY"))
	local := make([]hosted.Local, 0, len(res.Canaries))
	for _, cr := range res.Canaries {
		local = append(local, hosted.Local{Name: cr.Name, Got: cr.Got, Errored: cr.Class != grading.ClassOK, Class: string(cr.Class)})
	}
	return hosted.Parity(ctx, c, g, s.m.Canaries, local, s.m.Grader.PassThreshold)
}

// hostedGrader is the grader as OpenAI's hosted grader takes it: a Python
// grader with exactly the pinned bytes, or a multi grader in OpenAI's own
// shape, each python sub-grader with its pinned bytes and every other
// sub-grader with its keys as written.
func (s *suite) hostedGrader() (hosted.Grader, error) {
	parts, err := s.parts()
	if err != nil {
		return hosted.Grader{}, err
	}
	g := s.m.Grader
	if g.Multi == nil {
		return hosted.Grader{Type: "python", Name: g.Name, Source: string(parts[0].src), ImageTag: g.ImageTag}, nil
	}
	src := map[string]string{}
	for _, p := range parts {
		src[p.name] = string(p.src)
	}
	out := hosted.Grader{Type: manifest.TypeMulti, Name: g.Name, CalculateOutput: g.Multi.CalculateOutput, Graders: map[string]hosted.Grader{}}
	for _, sg := range g.Multi.Graders {
		sub := hosted.Grader{Type: sg.Type, Name: sg.Name}
		switch {
		case sg.Type == manifest.SubPython:
			sub.Source, sub.ImageTag = src[sg.Name], sg.ImageTag
		case sg.Model != nil:
			sub.Fields = hostedModelFields(sg.Model)
		default:
			sub.Fields = map[string]any{"input": sg.Input, "reference": sg.Reference}
			if sg.Type == manifest.SubStringCheck {
				sub.Fields["operation"] = sg.Operation
			} else {
				sub.Fields["evaluation_metric"] = sg.Metric
			}
		}
		out.Graders[sg.Name] = sub
	}
	return out, nil
}

// hostedModelFields are a score_model or label_model sub-grader's keys in
// OpenAI's shape: model, input, sampling_params, and range or labels and
// passing_labels. The endpoint, timeout and budget are gradegate's own and
// stay here.
func hostedModelFields(g *manifest.Grader) map[string]any {
	j := g.Judge
	input := make([]map[string]string, len(j.Input))
	for i, m := range j.Input {
		input[i] = map[string]string{"role": m.Role, "content": m.Content}
	}
	f := map[string]any{"model": j.Model, "input": input, "sampling_params": j.SamplingParams}
	if g.Type == manifest.TypeLabelModel {
		f["labels"], f["passing_labels"] = j.Labels, j.PassingLabels
	} else {
		f["range"] = j.Range
	}
	return f
}

// cmdValidate checks the manifest, the digests and the dataset contract
// without grading: exit 0 when clean, 1 when something would hold.
func (a *app) cmdValidate(ctx context.Context, args []string) outcome {
	fs := newFlagSet("validate", a.stderr)
	f := formatHuman
	fs.Var(&f, "format", "stdout format: human, json or markdown")
	python := defaultPython(a.getenv)
	fs.StringVar(&python, "python", python, "Python interpreter for the grader lint (env GRADEGATE_PYTHON)")
	var limits input.Limits
	registerLimits(fs, &limits)
	pos, done := a.parseFlags(fs, args)
	if done != nil {
		return *done
	}
	path, err := manifestArg("validate", pos)
	if err != nil {
		return a.fail("validate", err)
	}
	s, err := loadSuite(path, limits)
	if err != nil {
		return a.fail("validate", err)
	}
	// The grader's Python checks (its own processes) run while the dataset
	// is read; a dataset that cannot be used is still reported first, and
	// the checks are then stopped.
	pyCtx, stopPython := context.WithCancel(ctx)
	var pyChecks sync.WaitGroup
	defer func() {
		stopPython()
		pyChecks.Wait()
	}()
	var lintFindings []manifest.Finding
	var lintErr error
	if s.m.Grader.Judge == nil {
		pyChecks.Go(func() { lintFindings, lintErr = s.pythonChecks(pyCtx, python, a.getenv(imageEnv)) })
	}
	// One pass over the dataset: the contract checks and what a run would
	// omit, without keeping the rows.
	src := dataset.Open(s.fsys, s.m)
	cov := newCoverage(s.m)
	for {
		c, ok := src.Next()
		if !ok {
			break
		}
		cov.add(c)
	}
	sum, err := src.Close()
	if err := errors.Join(err, s.laterFiles()); err != nil {
		return a.fail("validate", err)
	}
	_, mismatches, err := digest.CheckDigests(s.fsys, s.m, true)
	if err != nil {
		return a.fail("validate", err)
	}
	v := &render.Validation{Schema: render.ValidationSchema, Findings: []manifest.Finding{}, Warnings: []manifest.Finding{}}
	for _, mm := range mismatches {
		v.Findings = append(v.Findings, manifest.Finding{
			Code: results.ReasonDigestMismatch, Severity: manifest.SeverityHold,
			File: s.m.File, Line: s.m.Line(mm.Key), Message: digestMessage(mm),
		})
	}
	pyChecks.Wait()
	if lintErr != nil {
		return a.fail("validate", lintErr)
	}
	if s.m.Grader.Judge == nil {
		a.noteImageTag(s)
	} else {
		lintFindings = lint.ModelGrader(s.m)
	}
	for _, fd := range append(append(sum.Findings, lintFindings...), cov.findings(sum)...) {
		if fd.Severity == manifest.SeverityHold {
			v.Findings = append(v.Findings, fd)
		} else {
			v.Warnings = append(v.Warnings, fd)
		}
	}
	if err := a.renderValidation(v, f); err != nil {
		return a.fail("validate", err)
	}
	if len(v.Findings) > 0 {
		return outcome{code: exitHold}
	}
	return outcome{code: exitPass}
}

// pythonChecks are validate's checks of a Python grader: the lint, and
// whether the interpreter can import the image tag's packages. The two run
// at once, each in a process of its own.
func (s *suite) pythonChecks(ctx context.Context, python, image string) ([]manifest.Finding, error) {
	py, err := worker.ResolvePython(ctx, python)
	if err != nil {
		return nil, fmt.Errorf("the grader lint needs Python (--python, GRADEGATE_PYTHON): %w", err)
	}
	s.python = py
	var pkgs *manifest.Finding
	var pkgErr error
	var checking sync.WaitGroup
	checking.Go(func() { pkgs, pkgErr = lint.ImagePackagesFinding(ctx, py.Executable, s.m) })
	findings, err := s.lint(ctx, image)
	checking.Wait()
	if err != nil {
		return nil, err
	}
	if pkgErr != nil {
		return nil, pkgErr
	}
	if pkgs != nil {
		findings = append(findings, *pkgs)
	}
	return findings, nil
}

func (a *app) renderValidation(v *render.Validation, f format) error {
	switch f {
	case formatJSON:
		return render.JSON(a.stdout, v)
	case formatMarkdown:
		return render.ValidationMarkdown(a.stdout, v, render.MarkdownOptions{})
	}
	return render.ValidationHuman(a.stdout, v, a.colorOptions())
}

// cmdDoctor tries every sandbox layer on this machine.
func (a *app) cmdDoctor(ctx context.Context, args []string) outcome {
	fs := newFlagSet("doctor", a.stderr)
	f := formatHuman
	fs.Var(&f, "format", "stdout format: human, json or markdown")
	python := defaultPython(a.getenv)
	fs.StringVar(&python, "python", python, "Python interpreter to try the checks with")
	if _, done := a.parseFlags(fs, args); done != nil {
		return *done
	}
	// Doctor applies every layer the machine allows whatever New decides;
	// when New refuses (no network boundary), an unsandboxed Sandbox still
	// carries the launcher, and the report says what failed.
	sb, err := sandbox.New()
	if err != nil {
		fmt.Fprintf(a.stderr, "gradegate doctor: %v\n", err)
		if sb, err = sandbox.New(sandbox.WithUnsandboxed(true)); err != nil {
			return a.fail("doctor", err)
		}
	}
	exe := ""
	if py, err := a.python(ctx, sb, python); err == nil {
		exe = py.Executable
	} else {
		fmt.Fprintf(a.stderr, "gradegate doctor: %v (Python checks skipped)\n", err)
	}
	rep := sandbox.Doctor(ctx, sb, exe)
	defer a.doctorImage(ctx, exe, f)
	var werr error
	switch f {
	case formatJSON:
		werr = render.JSON(a.stdout, rep)
	case formatMarkdown:
		werr = writeDoctorMarkdown(a.stdout, rep)
	default:
		werr = rep.WriteText(a.stdout)
	}
	if werr != nil {
		return a.fail("doctor", werr)
	}
	if !rep.NetworkBoundary {
		fmt.Fprintln(a.stderr, "gradegate doctor: the network boundary cannot be established here: `gradegate run` refuses to grade (exit 3) unless --unsandboxed")
	}
	if !rep.FilesystemBoundary {
		fmt.Fprintln(a.stderr, "gradegate doctor: the filesystem boundary (Landlock) cannot be established here: `gradegate run` refuses to grade (exit 3) unless --unsandboxed")
	}
	if !rep.NetworkBoundary || !rep.FilesystemBoundary {
		return outcome{code: exitInternal}
	}
	return outcome{code: exitPass}
}

func writeDoctorMarkdown(w io.Writer, rep sandbox.Report) error {
	if _, err := fmt.Fprintf(w, "**%s**\n\n| layer | check | status | detail |\n|---|---|---|---|\n", render.SandboxLine(rep.Sandbox)); err != nil {
		return err
	}
	for _, c := range rep.Checks {
		if _, err := fmt.Fprintf(w, "| %s | %s | %s | %s |\n", c.Layer, c.Name, c.Status, c.Detail); err != nil {
			return err
		}
	}
	return nil
}

// digestMessage says which file changed and both digests.
func digestMessage(mm digest.DigestMismatch) string {
	if mm.Want == "" {
		return fmt.Sprintf("%s %s is not pinned: add %s (gradegate pin writes %s)", mm.Name, mm.File, mm.Key, mm.Got)
	}
	return fmt.Sprintf("%s %s has %s but %s pins %s (gradegate pin records the new digest after an intended change)", mm.Name, mm.File, mm.Got, mm.Key, mm.Want)
}

// cmdMerge combines shard results into one verdict.
func (a *app) cmdMerge(ctx context.Context, args []string) outcome {
	fs := newFlagSet("merge", a.stderr)
	f := gradeFlags{format: formatHuman}
	fs.Var(&f.format, "format", "stdout format: human, json or markdown")
	fs.StringVar(&f.results, "results", "", "write the merged results JSON to this file")
	path := "gradegate.yaml"
	fs.StringVar(&path, "manifest", path, "the manifest the shards ran")
	registerLimits(fs, &f.limits)
	files, done := a.parseFlags(fs, args)
	if done != nil {
		return *done
	}
	if len(files) == 0 {
		return a.fail("merge", fmt.Errorf("%w: gradegate merge needs the shard results files", manifest.ErrInput))
	}
	if err := outputFor(a).check(f.results); err != nil {
		return a.fail("merge", err)
	}
	s, err := loadSuite(path, f.limits)
	if err != nil {
		return a.fail("merge", err)
	}
	// Each shard is read twice as a stream: once for its header, once for
	// its rows, which the merge takes one at a time.
	var parts []gate.ShardPart
	var errs []error
	for _, name := range files {
		p, closeFile, err := openShard(name, f.limits, func(head *results.Results) *results.ShardCheck {
			return results.NewShardCheck(name, head, s.m.Grader.PassThreshold)
		})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		defer closeFile()
		parts = append(parts, p)
	}
	if err := errors.Join(errs...); err != nil {
		return a.fail("merge", err)
	}
	res, err := gate.MergeStream(s.m, parts, gate.MergeOptions{SpoolDir: os.TempDir()})
	if err != nil {
		return a.fail("merge", err)
	}
	defer res.Close()
	return a.finish("merge", res, f)
}

// openShard opens a results file as a stream: its header now, its rows one
// at a time as the caller asks. Both reads go through the input layer.
// check, when set, checks every row as it passes and the header's counts
// against them at the end (merge); compare reads without it.
func openShard(name string, limits input.Limits, check func(*results.Results) *results.ShardCheck) (gate.ShardPart, func(), error) {
	open := func() (*input.File, error) {
		f, err := input.Open(hostFS{}, filepath.ToSlash(name), input.Results, limits.Of(input.Results))
		if err != nil {
			return nil, manifest.ReadError(name, 0, "", "cannot read results", err)
		}
		return f, nil
	}
	hf, err := open()
	if err != nil {
		return gate.ShardPart{}, nil, err
	}
	r, err := results.ReadResultsHeader(hf)
	hf.Close()
	if err != nil {
		return gate.ShardPart{}, nil, &manifest.Error{File: name, Msg: "not a results JSON document", Err: err}
	}
	if r.Schema != results.ResultsSchema {
		return gate.ShardPart{}, nil, &manifest.Error{File: name, Key: "schema", Msg: fmt.Sprintf("want %q, got %q", results.ResultsSchema, r.Schema)}
	}
	cf, err := open()
	if err != nil {
		return gate.ShardPart{}, nil, err
	}
	rows := &shardRows{name: name, r: results.NewCaseReader(cf)}
	if check != nil {
		rows.check = check(r)
	}
	return gate.ShardPart{Results: r, Cases: rows}, func() { cf.Close() }, nil
}

// shardRows names the shard file in a row's decoding error, and refuses a
// row no run could have written: both are input errors.
type shardRows struct {
	name  string
	r     *results.CaseReader
	check *results.ShardCheck
}

func (s *shardRows) Next() (results.CaseResult, bool, error) {
	c, ok, err := s.r.Next()
	if err != nil {
		return c, ok, &manifest.Error{File: s.name, Msg: "not a results JSON document", Err: err}
	}
	if s.check == nil {
		return c, ok, nil
	}
	if !ok {
		return c, ok, s.check.Done()
	}
	return c, ok, s.check.Row(c)
}

// python resolves the grader interpreter once. An interpreter named with
// --python or GRADEGATE_PYTHON is used or refused as it is; the default
// python3 falls back to a system interpreter the graders can execute, and
// says so.
func (a *app) python(ctx context.Context, sb *sandbox.Sandbox, name string) (worker.Python, error) {
	py, err := worker.ResolvePython(ctx, name)
	return a.reachablePython(ctx, sb, name, py, err)
}

// reachablePython is python for an interpreter already resolved (py, or
// the error resolving it).
func (a *app) reachablePython(ctx context.Context, sb *sandbox.Sandbox, name string, py worker.Python, err error) (worker.Python, error) {
	if err != nil {
		return worker.Python{}, fmt.Errorf("resolving the Python interpreter (--python, GRADEGATE_PYTHON): %w", err)
	}
	reach := sb.CheckInterpreter(py.Executable)
	if reach == nil {
		return py, nil
	}
	if name != "python3" || a.getenv("GRADEGATE_PYTHON") != "" {
		return worker.Python{}, fmt.Errorf("the Python interpreter: %w", reach)
	}
	// A version manager under /root (mode 0700) is common on CI machines where
	// gradegate runs as root, and the grader uids cannot search /root.
	for _, cand := range []string{"/usr/local/bin/python3", "/usr/bin/python3"} {
		if sb.CheckInterpreter(cand) != nil {
			continue
		}
		alt, err := worker.ResolvePythonWorker(ctx, cand)
		if err != nil {
			continue
		}
		if !a.pythonNoted {
			fmt.Fprintf(a.stderr, "gradegate: grading with %s (Python %s): %v\n", alt.Executable, alt.Version, reach)
			a.pythonNoted = true
		}
		return alt, nil
	}
	return worker.Python{}, fmt.Errorf("the Python interpreter: %w (name a reachable one with --python or GRADEGATE_PYTHON)", reach)
}

// defaultPython is the interpreter a command uses unless --python names one.
func defaultPython(getenv func(string) string) string {
	if p := getenv("GRADEGATE_PYTHON"); p != "" {
		return p
	}
	return "python3"
}

// coverage is what validate can tell, without grading, about the cases a
// run would omit or the mandatory slices it could not fill: a case without
// a sample, intended cases missing from the file, a mandatory slice with
// fewer rows than min_cases (or none). Each holds when the run would hold
// for it (omitted_cases, slice_too_small). It folds the rows one at a time.
type coverage struct {
	m         *manifest.Manifest
	mandatory map[string]bool
	missing   []dataset.Case  // rows without a sample, their bytes dropped
	rows      map[string]int  // mandatory slice -> rows with a sample
	inData    map[string]bool // every slice some row is in, for "did you mean"
}

// codeUnknownSlice is the warning for a slice rule in gate.slices that
// names no slice of the dataset (a mandatory one holds as slice_too_small).
const codeUnknownSlice = "unknown_slice"

func newCoverage(m *manifest.Manifest) *coverage {
	c := &coverage{m: m, mandatory: map[string]bool{}, rows: map[string]int{}, inData: map[string]bool{}}
	for _, r := range m.Gate.Slices {
		if r.Mandatory {
			c.mandatory[r.Name] = true
		}
	}
	return c
}

func (cv *coverage) add(c dataset.Case) {
	for _, sl := range c.Slices {
		cv.inData[sl] = true
	}
	if c.Sample == nil {
		cv.missing = append(cv.missing, dataset.Case{ID: c.ID, Slices: c.Slices, File: c.File, Line: c.Line})
		return
	}
	for _, sl := range c.Slices {
		if cv.mandatory[sl] {
			cv.rows[sl]++
		}
	}
}

func (cv *coverage) findings(sum *dataset.Summary) []manifest.Finding {
	m := cv.m
	var out []manifest.Finding
	notInDataset := max(sum.Intended-sum.Rows, 0)
	omitted := len(cv.missing) + notInDataset
	over := omitted > m.Gate.MaxOmitted
	for _, c := range cv.missing {
		sev := manifest.SeverityWarn
		inMandatory := false
		for _, sl := range c.Slices {
			inMandatory = inMandatory || cv.mandatory[sl]
		}
		if over || inMandatory {
			sev = manifest.SeverityHold
		}
		out = append(out, manifest.Finding{Code: results.OmittedMissingSample, Severity: sev, File: c.File, Line: c.Line, CaseID: c.ID,
			Message: fmt.Sprintf("case %s has no sample (inline or in the samples file): a run omits it", c.ID)})
	}
	if notInDataset > 0 {
		sev := manifest.SeverityWarn
		if over {
			sev = manifest.SeverityHold
		}
		out = append(out, manifest.Finding{Code: results.OmittedNotInDataset, Severity: sev, File: m.File, Line: m.Line("dataset.intended_cases"),
			Message: fmt.Sprintf("dataset.intended_cases is %d but %s has %d rows: %d intended cases are missing", sum.Intended, m.Dataset.Path, sum.Rows, notInDataset)})
	}
	names := make([]string, 0, len(cv.inData))
	for sl := range cv.inData {
		names = append(names, sl)
	}
	sort.Strings(names)
	for _, r := range m.Gate.Slices {
		if !r.Mandatory && !cv.inData[r.Name] {
			// A rule for a slice no row has never applies: most likely a typo.
			out = append(out, manifest.Finding{Code: codeUnknownSlice, Severity: manifest.SeverityWarn, File: m.File, Line: m.Line("gate.slices." + r.Name),
				Message: fmt.Sprintf("gate.slices.%s: no case of the dataset is in slice %s, so its rule never applies%s", r.Name, r.Name, manifest.Suggest(r.Name, names))})
			continue
		}
		if !r.Mandatory || cv.rows[r.Name] >= max(r.MinCases, 1) {
			continue
		}
		msg := fmt.Sprintf("mandatory slice %s has %d cases with a sample, fewer than min_cases %d", r.Name, cv.rows[r.Name], r.MinCases)
		if cv.rows[r.Name] == 0 {
			msg = fmt.Sprintf("mandatory slice %s has no case with a sample in the dataset (it may have vanished in a join or a rename)", r.Name)
			if !cv.inData[r.Name] {
				msg += manifest.Suggest(r.Name, names)
			}
		}
		out = append(out, manifest.Finding{Code: results.ReasonSliceTooSmall, Severity: manifest.SeverityHold, File: m.File, Line: m.Line("gate.slices." + r.Name), Message: msg})
	}
	return out
}
