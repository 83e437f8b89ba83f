package gate

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/judge"
	"github.com/gradegate/gradegate/gate/multi"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/gate/verdict"
	"github.com/gradegate/gradegate/gate/worker"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// CodeDeterminismSkipped is the warning of a determinism check that was
// asked for and could not ask the model again.
const CodeDeterminismSkipped = "determinism_skipped"

// determinismSample starts the determinism check of a run: its seed, from
// the system's random source (recorded in the results), which also draws
// the two hash seeds.
func determinismSample(s *Suite, shard shard.Shard) (*DeterminismSample, error) {
	seed, err := determinismSeed()
	if err != nil {
		return nil, err
	}
	return NewDeterminismSample(s.Manifest, shard, seed)
}

// observeRun makes the sample draw its cases from the run's own pass over
// the dataset (opts.Observe), so the dataset is read once. The canary
// command passes no cases.
func (ds *DeterminismSample) observeRun(s *Suite, withCases bool, opts *Options) {
	if withCases && s.Manifest.Gate.Determinism.Sample > 0 {
		opts.Observe = ds.Observe
		opts.ObserveOutcome = ds.Graded
	}
	opts.ObserveCanaries = ds.SentCanaries
}

// determinismWorkers bounds each determinism pool: it grades the canaries
// and a sample of a few hundred cases.
const determinismWorkers = 4

// checkDeterminism grades every canary and the sample of the cases twice,
// each time in a fresh pool with its own PYTHONHASHSEED and the second time
// in another order, and records the check in ev: a difference holds with
// nondeterministic_grader. It grades after the main grading, with pools
// that share no process with it.
//
// A multi grader's model sub-graders are asked again, with the judge cache
// off, only when the manifest writes gate.determinism (each ask costs
// calls), a key is set and grader.max_calls leaves room for both
// gradings; otherwise their answers from the run are reused, and when
// gate.determinism is written the results say why.
//
// A grader that does not load is not checked: the gate already holds on it.
//
// The two gradings run at once on the run's sandbox and interpreter, each
// pool with half the run's workers (at most determinismWorkers) on sandbox
// slots of its own.
//
// early, when not nil, holds the two pools started with the run's
// (startEarlyDeterminism) on the slots after the run's; the check grades
// with them. Whichever slots a grader sees, each sampled case is compared
// with the run's grading too, so behaving otherwise where it believes the
// check runs is a difference either way.
func (a *Host) checkDeterminism(ctx context.Context, s *Suite, env *graderEnv, sample *DeterminismSample, early *earlyPools, withCases bool, f GraderOptions, shard shard.Shard, ev *verdict.Evidence) error {
	src, err := s.graderSource()
	if err != nil {
		return err
	}
	askModels := false
	if subs := s.Manifest.Grader.Multi.Models(); len(subs) > 0 {
		why, err := modelDeterminismSkip(s.Manifest, s.models.HasKey(), usedCalls(ev.Judge), len(subs), func() (int, error) {
			return multiSampleSize(s, withCases, shard)
		})
		if err != nil {
			return err
		}
		a.noteDeterminismSkipped(s.Manifest, ev, why)
		askModels = why == "" && s.Manifest.Line("gate.determinism") > 0
	}
	// A ctx grader's calls: asked again with the cache off under the
	// same rule as model sub-graders, otherwise replayed from the run.
	var brokers []*judge.Broker
	brokerMode := determinismBrokerMode(s)
	var asked []*multi.Models
	var mu sync.Mutex
	pools := 0
	workers := max(1, min(env.workerCount()/2, determinismWorkers))
	start := time.Now()
	d, err := sample.Check(ctx, func(ctx context.Context, hashSeed uint32) (grading.Runner, func(), error) {
		if r, stop, err, ok := early.take(hashSeed); ok {
			return r, stop, err
		}
		e := *env
		e.hashSeed = strconv.FormatUint(uint64(hashSeed), 10)
		e.workers = workers
		mu.Lock()
		e.firstSlot = determinismSlot(s, env, &e, pools)
		pools++
		mu.Unlock()
		if need := e.firstSlot + e.slotsPerRunner(); need > e.sb.Slots() && !e.sb.Status().Unsandboxed {
			return nil, nil, fmt.Errorf("the determinism check needs %d sandbox slots and the sandbox has %d: grade with fewer --workers", need, e.sb.Slots())
		}
		if askModels {
			m, err := multi.NewModels(s.Manifest.Grader.Multi, func(g manifest.Grader) (*judge.Judge, error) {
				return a.newJudge(g, JudgeOptions{Concurrency: f.Judge.Concurrency})
			})
			if err != nil {
				return nil, nil, err
			}
			mu.Lock()
			asked = append(asked, m)
			mu.Unlock()
			e.models = m
		}
		if e.broker != nil {
			b, err := a.newBroker(s, f.Judge, brokerMode)
			if err != nil {
				return nil, nil, err
			}
			mu.Lock()
			brokers = append(brokers, b)
			mu.Unlock()
			e.broker = b
		}
		return e.newRunner(ctx, src)
	})
	var le *worker.LoadError
	if errors.As(err, &le) {
		fmt.Fprintf(a.stderr, "gradegate: determinism check skipped: %v\n", le)
		return nil
	}
	if err != nil {
		return err
	}
	d.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	if brokerMode == brokerCacheOff {
		for _, b := range brokers {
			addBrokerUsage(&ev.Judge, b)
		}
	}
	if askModels {
		d.Asked = results.DeterminismPythonModel
		for _, m := range asked {
			addCalls(ev.Judge, m.Usage())
		}
	}
	ev.Determinism = d
	return nil
}

// determinismBrokerMode is how the determinism check's pools make a ctx
// grader's calls: asked again with the cache off when the manifest writes
// gate.determinism and a key is set, otherwise replayed from the run.
func determinismBrokerMode(s *Suite) brokerMode {
	if s.broker != nil && s.broker.HasKey() && s.Manifest.Line("gate.determinism") > 0 {
		return brokerCacheOff
	}
	return brokerReplay
}

// determinismSlot is the first sandbox slot of the determinism check's
// pools'th runner e. The run's own pools have stopped by then, so the
// check's pools take their slots, from the run's first: a grader sees the
// same uids and scratch directory names in both, and cannot tell the check
// from the run by them. A multi grader's meteor pools are shared and stay
// up on the run's slots, so with one the check's pools go after the run's.
func determinismSlot(s *Suite, env, e *graderEnv, pools int) int {
	if mg := s.Manifest.Grader.Multi; mg != nil && slices.ContainsFunc(mg.Graders, multi.Meteor) {
		return env.firstSlot + env.slotsPerRunner() + pools*e.slotsPerRunner()
	}
	return env.firstSlot + pools*e.slotsPerRunner()
}

// checkJudgeDeterminism is the determinism check of a model grader: every
// canary and a sample of the cases asked twice with the judge cache off
// (neither read nor written), the second time in another order. It costs
// calls, so it runs only when the manifest writes gate.determinism; without
// a key, or when grader.max_calls leaves too few calls, it is skipped and
// the results and the error stream say why.
func (a *Host) checkJudgeDeterminism(ctx context.Context, s *Suite, set *dataset.Set, withCases bool, f GraderOptions, shard shard.Shard, ev *verdict.Evidence, hasKey bool) error {
	if s.Manifest.Line("gate.determinism") == 0 {
		return nil
	}
	var cases []dataset.Case
	if withCases && set != nil && s.Manifest.Gate.Determinism.Sample > 0 {
		cases = set.Cases
	}
	why, err := modelDeterminismSkip(s.Manifest, hasKey, usedCalls(ev.Judge), 1, func() (int, error) {
		return len(s.Manifest.Canaries) + min(s.Manifest.Gate.Determinism.Sample, countSampled(cases, shard)), nil
	})
	if err != nil || why != "" {
		a.noteDeterminismSkipped(s.Manifest, ev, why)
		return err
	}
	seed, err := determinismSeed()
	if err != nil {
		return err
	}
	i := 0
	next := func() (dataset.Case, bool) {
		if i >= len(cases) {
			return dataset.Case{}, false
		}
		i++
		return cases[i-1], true
	}
	// CheckDeterminism starts its two runners from two goroutines.
	var mu sync.Mutex
	var asked []*judge.Judge
	start := time.Now()
	d, err := CheckDeterminism(ctx, s.Manifest, next, shard, seed, func(ctx context.Context, _ uint32) (grading.Runner, func(), error) {
		j, err := a.newJudge(s.Manifest.Grader, JudgeOptions{Concurrency: f.Judge.Concurrency})
		if err != nil {
			return nil, nil, err
		}
		mu.Lock()
		asked = append(asked, j)
		mu.Unlock()
		return j, func() {}, nil
	})
	if err != nil {
		return err
	}
	d.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	d.Asked = results.DeterminismModel
	for _, j := range asked {
		addCalls(ev.Judge, j.Usage())
	}
	ev.Determinism = d
	return nil
}

// modelDeterminismSkip says why the determinism check cannot ask the
// model graders again ("" when it can, or when gate.determinism is not
// written and so it is not asked to): no key, or too few calls left of
// grader.max_calls after the run's own. tasks counts the canaries and
// sampled cases each model grader would be asked about, twice.
func modelDeterminismSkip(m *manifest.Manifest, hasKey bool, used, graders int, tasks func() (int, error)) (string, error) {
	if m.Line("gate.determinism") == 0 {
		return "", nil
	}
	if !hasKey {
		return "OPENAI_API_KEY is not set (a replay-only run): the determinism check of a model grader asks the model twice with the judge cache off", nil
	}
	maxCalls := 0
	switch {
	case m.Grader.Judge != nil:
		maxCalls = m.Grader.Judge.MaxCalls
	case m.Grader.Multi != nil:
		maxCalls = m.Grader.Multi.MaxCalls
	}
	if maxCalls == 0 {
		return "", nil
	}
	n, err := tasks()
	if err != nil {
		return "", err
	}
	if needed := 2 * n * graders; used+needed > maxCalls {
		return fmt.Sprintf("it needs %d model calls (%d canaries and sampled cases, twice) and grader.max_calls (%d) leaves %d after this run's %d",
			needed, n, maxCalls, max(maxCalls-used, 0), used), nil
	}
	return "", nil
}

// noteDeterminismSkipped says, on the error stream and as a warning in the
// results, that the determinism check did not ask the model again.
func (a *Host) noteDeterminismSkipped(m *manifest.Manifest, ev *verdict.Evidence, why string) {
	if why == "" {
		return
	}
	msg := "determinism check of the model graders skipped: " + why
	fmt.Fprintf(a.stderr, "gradegate: %s\n", msg)
	ev.Notes = append(ev.Notes, manifest.Finding{Code: CodeDeterminismSkipped, Severity: manifest.SeverityWarn,
		File: m.File, Line: m.Line("gate.determinism"), Message: msg})
}

// determinismSeed draws a determinism check's seed from the system's
// random source; the results record it.
func determinismSeed() (uint64, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, fmt.Errorf("determinism check: seeding: %w", err)
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// usedCalls are the model calls the run has made so far.
func usedCalls(u *results.JudgeUsage) int {
	if u == nil {
		return 0
	}
	return u.Calls
}

// addCalls counts the determinism check's calls in the run's usage.
func addCalls(u, x *results.JudgeUsage) {
	if u == nil || x == nil {
		return
	}
	u.Calls += x.Calls
	u.Retries += x.Retries
	u.Tokens.Input += x.Tokens.Input
	u.Tokens.Output += x.Tokens.Output
	u.WallMS += x.WallMS
}

// countSampled counts the shard's cases that have a sample.
func countSampled(cases []dataset.Case, sh shard.Shard) int {
	count, index := max(sh.Count, 1), max(sh.Index, 1)
	n := 0
	for _, c := range cases {
		if c.Sample != nil && shard.ShardOf(c.ID, count) == index {
			n++
		}
	}
	return n
}

// multiSampleSize is how many canaries and cases a multi grader's
// determinism check grades.
func multiSampleSize(s *Suite, withCases bool, shard shard.Shard) (int, error) {
	if !withCases || s.Manifest.Gate.Determinism.Sample == 0 {
		return len(s.Manifest.Canaries), nil
	}
	tasks, err := multiTasks(s, false, shard)
	if err != nil {
		return 0, err
	}
	return len(s.Manifest.Canaries) + min(s.Manifest.Gate.Determinism.Sample, len(tasks)-len(s.Manifest.Canaries)), nil
}

// earlyPools are the determinism check's two pools of a small suite,
// started while the run grades instead of after it: each is a fresh pool
// with its own PYTHONHASHSEED, started by the same startPool as the run's,
// on the sandbox slots after the run's, so their processes load beside the
// run's grading rather than after it. The check takes them by hash seed.
type earlyPools struct {
	seeds [2]uint32
	slots [2]int // each pool's first sandbox slot
	wg    sync.WaitGroup
	mu    sync.Mutex
	pools [2]earlyPool
	// stopping are the pools the check is done with, ending in the
	// background while the run decides; close waits for them.
	stopping sync.WaitGroup
}

type earlyPool struct {
	r     grading.Runner
	stop  func()
	err   error
	taken bool
}

// startEarlyDeterminism starts the determinism check's pools ahead, or
// returns nil when they must start after the run: a suite that starts all
// its processes at once (a large dataset: memory), a grader whose check
// sends its ctx calls again (with the cache off), a multi grader (whose
// model sub-graders' asking depends on the run's calls), or a sandbox
// without room for them beside the run's slots. A grader that does not
// load fails to in them too, and the check is skipped as it is then.
//
// runBlock is where the run's pools are (earlySlots): the check's take the
// other two blocks of slots, so a grader cannot tell from its uid or its
// scratch folder's name which of the three it is in; -1 puts them after the
// run's. Under a mutation score -1 starts none: the mutants' pools take the
// block after the run's then (mutantSlot).
func (a *Host) startEarlyDeterminism(ctx context.Context, s *Suite, env *graderEnv, f GraderOptions, sample *DeterminismSample, runBlock int) *earlyPools {
	if !earlyDeterminism(s, env, sample) || (s.Manifest.Gate.MinMutationScore != nil && runBlock < 0) {
		return nil
	}
	src, err := s.graderSource()
	if err != nil {
		return nil
	}
	e := *env
	e.workers = max(1, min(env.workerCount()/2, determinismWorkers))
	first := env.firstSlot + env.slotsPerRunner()
	if need := first + 2*e.slotsPerRunner(); need > e.sb.Slots() && !e.sb.Status().Unsandboxed {
		return nil
	}
	blocks := []int{first, first + e.slotsPerRunner()}
	if runBlock >= 0 {
		blocks = blocks[:0]
		for k := range 3 {
			if k != runBlock {
				blocks = append(blocks, env.firstSlot+k*env.slotsPerRunner())
			}
		}
	}
	p := &earlyPools{seeds: sample.d.HashSeeds}
	for i := range p.pools {
		pe := e
		pe.hashSeed = strconv.FormatUint(uint64(p.seeds[i]), 10)
		pe.firstSlot = blocks[i]
		p.slots[i] = blocks[i]
		if e.broker != nil {
			// Replays the run's calls, which it makes before the check.
			b, err := a.newBroker(s, f.Judge, brokerReplay)
			if err != nil {
				return nil
			}
			pe.broker = b
		}
		p.wg.Go(func() {
			r, stop, err := pe.newRunner(ctx, src)
			p.mu.Lock()
			p.pools[i] = earlyPool{r: r, stop: stop, err: err}
			p.mu.Unlock()
		})
	}
	return p
}

// earlyDeterminism reports whether the check's pools of s start with the
// run's (startEarlyDeterminism says when).
func earlyDeterminism(s *Suite, env *graderEnv, sample *DeterminismSample) bool {
	return env != nil && sample != nil && s.Manifest.Grader.Multi == nil && determinismBrokerMode(s) == brokerReplay &&
		!s.largeDataset()
}

// earlySlots draws, for a run whose check's pools start with its own,
// which of three blocks of sandbox slots the run's pools take (the check's
// take the other two): the run's first slot, and its block (0 to 2). Under
// a mutation score the mutants' pools take a fourth block (mutantSlot).
// When the blocks of the run's size do not fit, the run keeps its slots
// and the check's go after them (block -1).
func earlySlots(s *Suite, env *graderEnv, sample *DeterminismSample, draw func(n int) int) (first, block int) {
	blocks := 3
	if s.Manifest.Gate.MinMutationScore != nil {
		blocks = 4
	}
	if !earlyDeterminism(s, env, sample) || (env.firstSlot+blocks*env.slotsPerRunner() > env.sb.Slots() && !env.sb.Status().Unsandboxed) {
		return env.firstSlot, -1
	}
	block = draw(3)
	return env.firstSlot + block*env.slotsPerRunner(), block
}

// take is the early pool of hashSeed, once it has started; ok is false when
// there is none (p is nil, or the seed is not one of its own).
func (p *earlyPools) take(hashSeed uint32) (r grading.Runner, stop func(), err error, ok bool) {
	if p == nil {
		return nil, nil, nil, false
	}
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, seed := range p.seeds {
		if seed != hashSeed || p.pools[i].taken {
			continue
		}
		p.pools[i].taken = true
		pool := p.pools[i]
		if pool.err != nil {
			return nil, nil, pool.err, true
		}
		return pool.r, func() { p.stopping.Go(pool.stop) }, nil, true
	}
	return nil, nil, nil, false
}

// close stops the pools the check did not take (a run that failed before
// it) and waits until every pool, taken or not, has ended.
func (p *earlyPools) close() {
	if p == nil {
		return
	}
	p.wg.Wait()
	p.mu.Lock()
	for i := range p.pools {
		if pool := &p.pools[i]; !pool.taken {
			pool.taken = true
			if pool.err == nil && pool.stop != nil {
				p.stopping.Go(pool.stop)
			}
		}
	}
	p.mu.Unlock()
	p.stopping.Wait()
}
