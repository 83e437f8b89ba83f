package gate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/gradegate/gradegate/canary/hosted"
	"github.com/gradegate/gradegate/gate/blind"
	"github.com/gradegate/gradegate/gate/digest"
	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/judge"
	"github.com/gradegate/gradegate/gate/lint"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/gate/verdict"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
	"github.com/gradegate/gradegate/manifest/input"
)

// GraderOptions say how the graders of a suite are started.
type GraderOptions struct {
	// Python names the interpreter the graders run with (a path, or a
	// name looked up in PATH).
	Python string
	// Workers is how many grader processes each pool runs.
	Workers int
	// Unsandboxed grades without the sandbox; every output says so.
	Unsandboxed bool
	// Judge says how model graders are asked.
	Judge JudgeOptions
}

// JudgeOptions say how a model grader's calls are made.
type JudgeOptions struct {
	// Cache is the folder that records and replays model calls; "" for
	// none. Mode is read, write or readwrite ("" is readwrite).
	Cache, Mode string
	// Concurrency is how many calls are in flight at once.
	Concurrency int
	// Repeats is gate.repeats for the run's own grading (set from the
	// manifest); the determinism check and shadow ask once.
	Repeats int
}

// GradeOptions are the options of one gate run (the run and canary
// commands).
type GradeOptions struct {
	GraderOptions
	// CanariesOnly runs the canaries and nothing else (the canary command).
	CanariesOnly bool
	// Shard, CanarySeed, Version and Progress are as in Options.
	Shard      shard.Shard
	CanarySeed uint64
	Version    string
	Progress   Progress
	// SpoolDir is where a Python grader's case rows are spooled (see
	// Options.SpoolDir).
	SpoolDir string
	// Image is the Action image gradegate runs in (GRADEGATE_IMAGE), for
	// the grader lint.
	Image string
	// Hosted, when set, also runs the canaries on OpenAI's hosted grader at
	// this base URL and compares (canary --hosted).
	Hosted string
	// BaselineFile is the base branch's results (run --baseline); "" for
	// none. Limits bound the files read.
	BaselineFile string
	// BaseManifest is the base branch's manifest (run --base-manifest): the
	// run names, and holds on, every way its manifest and dataset weaken
	// the base's. "" for none.
	BaseManifest string
	Limits       input.Limits
	// Output bounds the case rows the run writes (--max-output).
	Output results.OutputLimits
}

// Grade is one gate run of the suite, the same stages for every grader
// type (Python, model, multi), each a function of its own, in this order:
//
//  1. verifyInputs: the baseline's header, the dataset opened (a model
//     grader's read whole), the hosted grader's key;
//  2. startGraders: the sandbox, the interpreter and the pool (a model
//     grader's judge and its call budget), with the grader lint beside it;
//  3. mutationScore: gate.min_mutation_score's mutation test;
//  4. grade: the digests, the canaries among the cases, the cases (Run);
//  5. determinism: every canary and a sample of the cases graded again;
//  6. hostedParity: the canaries on OpenAI's hosted grader (canary --hosted);
//  7. verdict: Decide over the evidence of every stage, then the baseline.
//
// The results are complete when Grade returns. The error is for the tool
// failing; when the hosted grader could not be asked, the results are
// complete (they hold) and the error says why, and the caller reports both.
func (a *Host) Grade(ctx context.Context, s *Suite, o GradeOptions) (*results.Results, error) {
	g := &gateRun{h: a, s: s, o: o}
	defer g.close()
	for _, stage := range []func(context.Context) error{
		g.verifyInputs,
		g.startGraders,
		g.mutationScore,
		g.grade,
		g.determinism,
		g.hostedParity,
	} {
		if err := stage(ctx); err != nil {
			return nil, err
		}
	}
	res, err := g.verdict()
	if err != nil {
		return nil, err
	}
	res.Integrity = &results.Integrity{Run: a.runIdentity()}
	return res, g.hostedErr
}

// gateRun is the state of one Grade call, stage by stage.
type gateRun struct {
	h *Host
	s *Suite
	o GradeOptions

	baseline *baselineInput
	policy   *policyInput
	src      *dataset.Reader // a Python grader's streamed dataset
	set      *dataset.Set    // a model grader's dataset, read whole

	env      *graderEnv     // nil for a model grader
	runner   grading.Runner // the run's grader
	judge    *judge.Judge   // a model grader's runner
	stopPool func()
	findings []manifest.Finding
	sample   *DeterminismSample
	early    *earlyPools // the determinism check's pools, started ahead
	// runBlock is the run pool's block of sandbox slots, of three
	// (earlySlots; -1 when the check's pools start after the run).
	runBlock int

	mutation          *float64
	mutationExcluded  []results.MutationExclusion
	mutationSurvivors []results.SurvivingMutant

	ev        *evidence
	hostedErr error
	cleanup   []func()
}

func (g *gateRun) close() {
	for i := len(g.cleanup) - 1; i >= 0; i-- {
		g.cleanup[i]()
	}
	if g.ev != nil && g.ev.spool != nil {
		// A stage after grading failed: no results hold the rows.
		g.ev.spool.Close()
	}
}

func (g *gateRun) model() bool { return g.s.Manifest.Grader.Judge != nil }

// verifyInputs reads what must be readable before anything is graded: the
// baseline's header, the dataset (files that cannot be opened are
// reported with every other problem of the dataset) and the hosted
// grader's key.
func (g *gateRun) verifyInputs(ctx context.Context) error {
	s, o := g.s, g.o
	if o.BaseManifest != "" {
		p, err := checkPolicy(s, o.BaseManifest, o.Limits)
		if err != nil {
			return err
		}
		g.policy = p
	}
	if o.BaselineFile != "" {
		g.baseline = &baselineInput{file: o.BaselineFile, rule: s.Manifest.Gate.Baseline, name: s.Manifest.Name,
			level: s.Manifest.Gate.Confidence.Level}
		if err := checkBaseline(*g.baseline, o.Limits); err != nil {
			return err
		}
	}
	if g.model() {
		// A model grader's calls, not memory, bound its suites: its dataset
		// is read whole.
		if !o.CanariesOnly {
			set, err := s.loadCases()
			if err != nil {
				return err
			}
			g.set = set
		}
		if o.Hosted != "" {
			return notForModelGraders(s.Manifest, "--hosted (parity with OpenAI's hosted Python grader)")
		}
		return nil
	}
	if !o.CanariesOnly {
		// The dataset streams while it is graded.
		g.src = dataset.Open(s.FS, s.Manifest)
		if g.src.Err() != nil {
			_, err := g.src.Close()
			return errors.Join(err, s.LaterFiles())
		}
		g.cleanup = append(g.cleanup, func() { g.src.Close() })
	}
	if o.Hosted != "" && s.Manifest.Preprocess != nil {
		return hostedPreprocessError(s.Manifest)
	}
	if o.Hosted != "" && g.h.getenv("OPENAI_API_KEY") == "" {
		return fmt.Errorf("%w: --hosted needs OPENAI_API_KEY in the environment", manifest.ErrInput)
	}
	return nil
}

// startGraders starts the run's grader. A model grader's judge counts the
// calls the run needs beyond the cache first. A Python or multi grader's
// model sub-graders are counted the same way; then the sandbox and the
// interpreter are settled and the pool starts, while the grader lint (a
// Python process of its own) reads the sources; a failure to start is
// reported first.
func (g *gateRun) startGraders(ctx context.Context) error {
	s, o := g.s, g.o
	if g.model() {
		jo := o.Judge
		jo.Repeats = s.Manifest.Gate.Repeats
		j, err := g.h.newJudge(s.Manifest.Grader, jo)
		if err != nil {
			return err
		}
		tasks := judgeTasks(s.Manifest, g.set, o.Shard)
		if !o.CanariesOnly {
			derived := blind.PlanDerived(s.Manifest, g.set, o.Shard)
			if err := g.h.noteDerivedCalls(derived, j); err != nil {
				return err
			}
			tasks = append(tasks, derived...)
		}
		if err := planJudge(j, tasks); err != nil {
			return err
		}
		g.judge, g.runner = j, j
		g.findings = lint.ModelGrader(s.Manifest)
		return nil
	}
	// A multi grader's model calls are counted against the cache and the
	// budget over what this command grades, before any is sent.
	if err := g.h.multiModels(s, o.GraderOptions, o.CanariesOnly, o.Shard); err != nil {
		return err
	}
	if s.noPython() {
		// Nothing of the grader runs in Python: the gate grades every
		// sub-grader itself, and no sandbox or interpreter is needed.
		if o.Hosted != "" {
			return notForManifestGraders(s.Manifest, "--hosted (parity with OpenAI's hosted Python grader)")
		}
		broker, err := g.h.runBroker(s, o.Judge)
		if err != nil {
			return err
		}
		g.runner = s.manifestRunner(broker)
		g.stopPool = func() {}
		return nil
	}
	lintOpts := []lint.Option{g.h.lintCache()}
	if o.Hosted != "" {
		lintOpts = append(lintOpts, lint.ForHosted())
	}
	// The lint needs only the interpreter's file: it starts at once with
	// the one the run will grade with when that is known without starting
	// a process (likelyPython), beside the sandbox's probe, and runs again
	// only when the interpreter settled on is another.
	var lintErr error
	var early, linting sync.WaitGroup // the lint with linted, the lint
	lintCtx, cancelLint := context.WithCancel(ctx)
	// Whatever returns early, the lint's goroutine ends first.
	defer func() {
		cancelLint()
		early.Wait()
	}()
	linted := g.h.likelyPython(o.GraderOptions)
	if linted != "" {
		early.Go(func() { g.findings, lintErr = s.lintWith(lintCtx, linted, o.Image, lintOpts...) })
	}
	env, err := g.h.graders(ctx, s, o.GraderOptions)
	if err != nil {
		return err
	}
	// The environment's shared pools (a meteor sub-grader's) serve the
	// run, the mutation score and the determinism check.
	g.env = env
	g.cleanup = append(g.cleanup, env.close)
	// A large dataset's pool starts all its processes at once: they load
	// while the lint and the canaries run, instead of when grading begins.
	runEnv := *env
	runEnv.startAll = !o.CanariesOnly && s.largeDataset()
	// The determinism check's pools of a small suite start with the run's
	// (startEarlyDeterminism), so that their processes load while the run's
	// grade.
	sample, err := determinismSample(s, o.Shard)
	if err != nil {
		return err
	}
	g.sample = sample
	runEnv.firstSlot, g.runBlock = earlySlots(s, env, sample, rand.IntN)
	r, stopPool, err := g.h.runner(ctx, s, &runEnv, func() {
		if linted != s.python.Executable {
			cancelLint()
			linting.Go(func() {
				early.Wait()
				g.findings, lintErr = s.lint(ctx, o.Image, lintOpts...)
			})
		}
		g.early = g.h.startEarlyDeterminism(ctx, s, env, o.GraderOptions, sample, g.runBlock)
		g.cleanup = append(g.cleanup, g.early.close)
	})
	linting.Wait()
	early.Wait()
	if err != nil {
		return err
	}
	g.stopPool = sync.OnceFunc(stopPool)
	g.cleanup = append(g.cleanup, g.stopPool)
	g.runner = r
	if lintErr != nil {
		return lintErr
	}
	g.h.NoteImageTag(s)
	return nil
}

// mutationScore measures the grader's mutation score when the manifest
// asks for it (gate.min_mutation_score).
func (g *gateRun) mutationScore(ctx context.Context) error {
	if g.model() || g.o.CanariesOnly || g.s.noPython() {
		return nil
	}
	mutation, findings, err := g.h.measureMutation(ctx, g.s, g.env, g.mutantSlot(), g.o.GraderOptions, g.o.Shard)
	if err != nil {
		return err
	}
	g.findings = append(g.findings, findings...)
	if mutation != nil {
		g.mutation = &mutation.Score
		g.mutationExcluded = mutation.Excluded
		g.mutationSurvivors = mutation.Survivors(g.s.Manifest.Path(g.s.Manifest.Grader.Source))
	}
	return nil
}

// mutantSlot is the first sandbox slot of the mutants' pools. The run's
// pools hold a block of slots (a replacement loads beside each process):
// when the run keeps the first block, the mutants take the second; when
// its block was drawn from three (earlySlots), the determinism check's
// pools hold the other two from the start, and the mutants take a fourth.
func (g *gateRun) mutantSlot() int {
	size := g.env.slotsPerRunner()
	if g.runBlock < 0 {
		return g.env.firstSlot + size
	}
	return g.env.firstSlot + 3*size
}

// grade checks the digests and grades the canaries and the cases (Run),
// drawing the determinism check's sample from the same pass.
func (g *gateRun) grade(ctx context.Context) error {
	s, o := g.s, g.o
	opts := Options{Version: o.Version, CanariesOnly: o.CanariesOnly, CanarySeed: o.CanarySeed, Shard: o.Shard, Output: o.Output}
	if g.model() {
		ev, err := gradeRun(ctx, Inputs{Manifest: s.Manifest, FS: s.FS, Dataset: g.set, Inside: s.tree.inside}, g.runner, opts)
		if err != nil {
			return err
		}
		ev.ev.Judge = g.judge.Usage()
		ev.ev.JudgeLint = g.findings
		g.ev = ev
		return nil
	}
	if g.sample == nil {
		sample, err := determinismSample(s, o.Shard)
		if err != nil {
			return err
		}
		g.sample = sample
	}
	g.sample.observeRun(s, !o.CanariesOnly, &opts)
	if !o.CanariesOnly {
		opts.MutationScore = g.mutation
		opts.MutationSurvivors = g.mutationSurvivors
		opts.SpoolDir = o.SpoolDir
		if opts.Progress = o.Progress; opts.Progress != nil {
			opts.Rows = digest.CountRows(s.FS, s.Manifest.Path(s.Manifest.Dataset.Path))
		}
	}
	in := Inputs{Manifest: s.Manifest, FS: loadedFS{s}, Findings: g.findings, Inside: s.tree.inside}
	if g.src != nil {
		in.Source = g.src
	}
	ev, err := gradeRun(ctx, in, g.runner, opts)
	if g.early != nil {
		// The determinism check's pools started with this one, on slots
		// of their own: its processes end while the check grades, and
		// the run's cleanup (the same once-only stop) waits for them.
		go g.stopPool()
	} else {
		// The determinism check starts pools of its own on the same
		// sandbox slots: this one's processes end first.
		g.stopPool()
	}
	if err != nil {
		return err
	}
	ev.mutationExcluded = g.mutationExcluded
	if s.models != nil {
		ev.ev.Judge = s.models.Usage()
		ev.ev.JudgeLint = subGraderLint(s.Manifest)
	}
	addBrokerUsage(&ev.ev.Judge, s.broker)
	g.ev = ev
	return nil
}

// determinism grades every canary and a sample of the cases again.
func (g *gateRun) determinism(ctx context.Context) error {
	if g.model() {
		return g.h.checkJudgeDeterminism(ctx, g.s, g.set, !g.o.CanariesOnly, g.o.GraderOptions, g.o.Shard, &g.ev.ev, g.judge.HasKey())
	}
	if g.s.noPython() {
		return g.h.checkManifestDeterminism(ctx, g.s, g.sample, g.o.GraderOptions, &g.ev.ev)
	}
	return g.h.checkDeterminism(ctx, g.s, g.env, g.sample, g.early, !g.o.CanariesOnly, g.o.GraderOptions, g.o.Shard, &g.ev.ev)
}

// hostedParity runs the canaries on OpenAI's hosted grader (canary
// --hosted). Every attempt is kept in the results; a disagreement, or a
// hosted run that could not finish, holds as canary_failed.
func (g *gateRun) hostedParity(ctx context.Context) error {
	if g.o.Hosted == "" {
		return nil
	}
	parity, err := g.h.hostedParity(ctx, g.s, g.ev.ev.Canaries, g.o.Hosted)
	if err != nil && parity == nil {
		return err
	}
	g.ev.ev.Hosted, g.ev.ev.HostedErr = parity, err
	// The hosted grader could not be asked (auth, network, retries
	// exhausted): gradegate could not do its job, whatever was recorded.
	g.hostedErr = err
	return nil
}

// verdict decides over the evidence of every stage and sets the run
// beside the baseline's results.
func (g *gateRun) verdict() (*results.Results, error) {
	res := g.ev.document()
	g.ev = nil // the results hold the spooled rows now
	var removed []manifest.Weakening
	var baseReason string
	if g.baseline != nil {
		var err error
		if removed, baseReason, err = applyBaseline(res, *g.baseline, g.o.Limits); err != nil {
			res.Close()
			return nil, err
		}
	}
	m := g.s.Manifest
	switch p := g.policy; {
	case p != nil:
		verdict.ApplyPolicy(res, p.file, append(p.weak, removed...), m.Gate.WeakeningReason, p.baseReason, p.notes...)
	case len(removed) > 0 || m.Gate.WeakeningReason != "":
		verdict.ApplyPolicy(res, "", removed, m.Gate.WeakeningReason, baseReason)
	}
	return res, nil
}

// hostedLocal is how the canaries' local outcomes are compared with the
// hosted grader's.
func hostedLocal(canaries []results.CanaryResult) []hosted.Local {
	local := make([]hosted.Local, 0, len(canaries))
	for _, cr := range canaries {
		local = append(local, hosted.Local{Name: cr.Name, Got: cr.Got, Errored: cr.Class != grading.ClassOK, Class: string(cr.Class)})
	}
	return local
}
