// Package mutate mutation-tests a grader against its canaries and labeled
// cases: the gradegate mutate command, and gate.min_mutation_score in a gate
// run (reason mutants_survived).
//
// A mutant is the grader's source with one small, plausible defect: the
// mistakes that make a grader pass what it should fail (isinstance where the
// contract needs type(x) is int, a flipped comparison, a dropped raise, an
// except that hands out full credit). Each mutant is graded on every canary
// and every labeled case that has a sample, in the same kind of sandboxed
// worker pool as the gate uses. It is killed when the suite notices:
//   - a canary fails (canary.Evaluate), or
//   - a labeled case's status disagrees with its human label: a label of 1
//     must pass (score >= pass_threshold), a label of 0 must fail, and an
//     error agrees with neither, because the gate would hold on it, or
//
// A kill needs a check whose outcome changed: a mutant that does not load,
// or raises on every canary and case (the ones the unmutated grader passes
// included), is equivalent-suspect instead, since a grader that notices it
// was changed can fail that way on purpose.
//
// A mutant that runs so much longer than the unmutated grader (slowFactor)
// that it is stopped is not graded: not a kill, and the score counts it
// against the suite.
//
// Only checks that hold on the unmutated grader count: a canary that already
// fails, or a labeled case the grader already gets wrong, would "kill" every
// mutant and prove nothing, so Run grades the unmutated source first and
// leaves those out (the report names them).
//
// A mutant that survives is a defect the canaries and labels cannot see.
// Some survivors are equivalent mutants: a change that makes no observable
// difference (a raise dropped just before a line that raises anyway). No tool
// can tell those apart in general; a line that carries the comment
// "# gradegate: no-mutate: <why>" is not mutated, which is how a reviewed
// equivalent mutant is silenced. Every such line is listed in the report with
// its reason, and a pragma without a reason hides nothing from the score: its
// mutants count as survivors.
package mutate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/worker"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// Schema is the schema name of a mutate document.
const Schema = "gradegate.mutate/v1"

// Mutant statuses.
const (
	StatusKilled   = "killed"
	StatusSurvived = "survived"
	// StatusNotGraded: the time budget stopped the mutant before every
	// check had an outcome. It is not a kill: the score counts it as a
	// mutant the suite was not shown to catch.
	StatusNotGraded = "not_graded"
	// StatusEquivalentSuspect: the mutant did not load, or raised on every
	// input, so no check's outcome says anything about the defect it
	// carries: a grader can fail this way on purpose whenever it notices it
	// was changed. It is not a kill, and the score counts it as not killed.
	StatusEquivalentSuspect = "equivalent_suspect"
	// StatusTimeoutKilled: every check the mutant changed timed out (its
	// process killed at timeout_seconds) where the unmutated grader's
	// did not; no other check's outcome changed. A hang says as much about
	// the machine's load as about the defect, so it is not a kill unless
	// gate.mutation.timeout_counts_as_kill says so.
	StatusTimeoutKilled = "timeout_killed"
)

// Why a mutant is equivalent-suspect (Mutant.Suspect).
const (
	// SuspectLoad: the mutant's source does not load, although the
	// unmutated one does. A one-token change to a loading grader seldom
	// breaks its load; a grader that checks its own source does.
	SuspectLoad = "does not load"
	// SuspectRaises: the mutant raised on every canary and case, the ones
	// the unmutated grader passes included.
	SuspectRaises = "raises on every input"
)

// A mutant may take at most slowFactor times the unmutated grader's time,
// and never less than minBudget, before it is stopped and counted not
// graded. The
// per-case timeout_seconds (up to 600 s) would let one looping mutant stall
// the command for many minutes, while the gate would already hold on it.
const (
	slowFactor = 10
	minBudget  = 30 * time.Second
)

// RunnerFactory starts a grader runner for one source: a sandboxed worker
// pool in the CLI, a fake in tests. The func releases the runner. A grader
// that cannot be loaded is reported as a *worker.LoadError; any other error
// is the tool failing.
type RunnerFactory func(ctx context.Context, src []byte) (grading.Runner, func(), error)

// Report is the result of mutation-testing one grader. Its JSON form is the
// mutate document (schema gradegate.mutate/v1).
type Report struct {
	Schema string `json:"schema"`
	// Score is Killed / (every mutant + ExcludedWithoutReason),
	// rounded to four decimals; 0 when there is no mutant, because nothing
	// then shows that the suite can catch anything.
	Score    float64 `json:"score"`
	Killed   int     `json:"killed"`
	Survived int     `json:"survived"`
	// NotGraded counts the mutants the time budget stopped; the score
	// counts them as not killed.
	NotGraded int `json:"not_graded"`
	// EquivalentSuspect counts the mutants that did not load or raised on
	// every input; the score counts them as not killed.
	EquivalentSuspect int `json:"equivalent_suspect"`
	// TimeoutKilled counts the mutants whose only changed checks timed
	// out; the score counts them as not killed unless
	// TimeoutCountsAsKill.
	TimeoutKilled int `json:"timeout_killed"`
	// TimeoutCountsAsKill is gate.mutation.timeout_counts_as_kill: the
	// mutants that hung (TimeoutKilled and NotGraded) count as killed.
	TimeoutCountsAsKill bool `json:"timeout_counts_as_kill"`
	// KilledByCanary counts the killed mutants at least one canary
	// noticed; KilledByCaseOnly those only labeled cases noticed.
	KilledByCanary   int `json:"killed_by_canary"`
	KilledByCaseOnly int `json:"killed_by_case_only"`
	// KilledByMetric counts the killed mutants that only a gate.metrics
	// gate noticed (aggregate.go).
	KilledByMetric int      `json:"killed_by_metric,omitempty"`
	Mutants        []Mutant `json:"mutants"`
	// Excluded lists every line a no-mutate pragma keeps from being
	// mutated, with its reason.
	Excluded []Exclusion `json:"excluded"`
	// ExcludedWithoutReason counts the mutants hidden by pragmas that give
	// no reason; the score counts them as survivors.
	ExcludedWithoutReason int `json:"excluded_without_reason"`

	// The fields below feed the text and markdown views only; the JSON
	// document keeps the fields above, so its shape stays stable.

	// Source names the grader file.
	Source string `json:"-"`
	// Sites is how many mutation sites the source has; more than
	// len(Mutants) when the cap (MaxMutants) applied.
	Sites int `json:"-"`
	// Canaries and Cases count the checks that could kill a mutant: the
	// canaries that pass, and the labeled cases whose status agrees with
	// their label, on the unmutated grader.
	Canaries int `json:"-"`
	Cases    int `json:"-"`
	// MetricGates counts the gate.metrics gates the unmutated grader's
	// metrics meet, which could kill a mutant too.
	MetricGates int `json:"-"`
	// Blind names the canaries and labeled cases left out because the
	// unmutated grader already fails them.
	Blind []string `json:"-"`
}

// Mutant is one mutant and what became of it.
type Mutant struct {
	ID string `json:"id"` // m01, m02, … in source order
	// Part names the python sub-grader whose source the mutant changes, for
	// a multi grader with more than one; "" otherwise.
	Part     string `json:"part,omitempty"`
	Line     int    `json:"line"` // line of the change in its source
	Operator string `json:"operator"`
	// Diff is the changed line(s), before and after, trimmed:
	// "- if type(x) is not int: / + if not isinstance(x, int):".
	Diff   string `json:"diff"`
	Status string `json:"status"` // StatusKilled or StatusSurvived
	// KilledBy names every canary and case_id whose outcome the mutant
	// changed from a pass to a failure, in manifest then dataset order;
	// empty unless killed.
	KilledBy []string `json:"killed_by"`
	// Suspect says why an equivalent-suspect mutant is one.
	Suspect string `json:"suspect,omitempty"`
	// TimedOut names the checks that timed out on the mutant and not on
	// the unmutated grader; they are never among KilledBy.
	TimedOut []string `json:"timed_out,omitempty"`

	Original string `json:"-"` // the line(s) before, trimmed
	Mutated  string `json:"-"` // the line(s) after, trimmed
	Source   []byte `json:"-"` // the whole mutated source
}

// Passes reports whether the grader meets the bar: score >= min when
// gate.min_mutation_score is set, otherwise every mutant killed and no
// pragma without a reason. A grader without a single mutant never passes,
// since nothing was shown.
func (r *Report) Passes(min *float64) bool {
	if len(r.Mutants) == 0 {
		return false
	}
	if min != nil {
		return r.Score >= *min
	}
	return r.Survived == 0 && r.ExcludedWithoutReason == 0
}

// score is the mutation score: killed (and, with TimeoutCountsAsKill,
// hung) over every mutant tested plus every mutant a pragma without a
// reason hid, rounded to four decimals.
func (r *Report) score() float64 {
	n := len(r.Mutants) + r.ExcludedWithoutReason
	if len(r.Mutants) == 0 || n == 0 {
		return 0
	}
	k := r.Killed
	if r.TimeoutCountsAsKill {
		k += r.TimeoutKilled + r.NotGraded
	}
	return math.Round(float64(k)/float64(n)*10000) / 10000
}

// unexcused counts the mutants hidden by pragmas without a reason.
func unexcused(ex []Exclusion) int {
	n := 0
	for _, e := range ex {
		if e.Unexcused() {
			n += e.Mutants
		}
	}
	return n
}

// Part is one Python source of the grader under test, for RunParts.
type Part struct {
	// Name is the multi grader's sub-grader name; "" for a python grader.
	Name string
	// File names the source, for messages; Src is its pinned bytes.
	File string
	Src  []byte
	// NewRunner starts a runner of the whole grader with src in place of
	// this part's source and every other part's pinned source.
	NewRunner RunnerFactory
}

// Run mutation-tests the grader src (its file named sourceName, for
// messages) against the canaries of m and the cases that carry both a human
// label and a sample. python is the absolute path of the interpreter that
// generates the mutants (worker.Python.Executable); newRunner starts a
// runner for the unmutated grader and, unless that runner can fork (a
// worker pool: each mutant then runs in children forked from its loaded
// processes, which is far cheaper than starting interpreters), once per
// mutant, one after the other, each grading its tasks in parallel. The
// unmutated grader's runner is released last.
//
// The error is the tool failing, or an input that cannot be mutation-tested
// (manifest.ErrInput): a source that does not parse or an unmutated grader
// that does not load.
func Run(ctx context.Context, src []byte, sourceName string, m *manifest.Manifest, cases []dataset.Case, newRunner RunnerFactory, python string) (*Report, error) {
	return run(ctx, []Part{{File: sourceName, Src: src, NewRunner: newRunner}}, m, cases, python, minBudget)
}

// RunParts is Run for a grader of several Python sources (a multi grader
// with more than one python sub-grader): every part is mutated, each
// mutant graded as the whole grader with that one part changed, so it is
// judged on the combined score. A mutant says which part it is in; the
// parts share the mutant cap (MaxMutants), in turn.
func RunParts(ctx context.Context, parts []Part, m *manifest.Manifest, cases []dataset.Case, python string) (*Report, error) {
	return run(ctx, parts, m, cases, python, minBudget)
}

// generateParts lists the mutants of every part, numbered across the parts.
func generateParts(ctx context.Context, python string, parts []Part) (*Generated, []int, error) {
	if len(parts) == 1 {
		gen, err := Generate(ctx, python, parts[0].Src, parts[0].File, MaxMutants)
		return gen, make([]int, len(gen.Mutants)), err
	}
	all := &Generated{Excluded: []Exclusion{}}
	var of []int
	for i, p := range parts {
		// Each part gets an even share of the cap, and what an earlier part
		// leaves unused goes to the later ones.
		limit := max(1, (MaxMutants-len(all.Mutants))/(len(parts)-i))
		gen, err := Generate(ctx, python, p.Src, p.File, limit)
		if err != nil {
			return nil, nil, err
		}
		all.Sites += gen.Sites
		for _, mu := range gen.Mutants {
			mu.Part = p.Name
			mu.ID = fmt.Sprintf("m%02d", len(all.Mutants)+1)
			all.Mutants = append(all.Mutants, mu)
			of = append(of, i)
		}
		for _, e := range gen.Excluded {
			e.Part = p.Name
			all.Excluded = append(all.Excluded, e)
		}
	}
	return all, of, nil
}

// run is RunParts with the least time budget of a mutant as a parameter,
// so a test need not wait minBudget for a looping mutant.
func run(ctx context.Context, parts []Part, m *manifest.Manifest, cases []dataset.Case, python string, least time.Duration) (*Report, error) {
	if m == nil || len(parts) == 0 || parts[0].NewRunner == nil {
		return nil, errors.New("mutate: no manifest or no runner")
	}
	s := newSuite(m, cases)
	src, sourceName := parts[0].Src, parts[0].File
	factories := make([]RunnerFactory, len(parts))
	for i, p := range parts {
		factories[i] = p.NewRunner
	}

	// The mutants are listed (a Python process of its own) while the
	// unmutated grader's processes start.
	var gen *Generated
	var partOf []int
	var genErr error
	var generating sync.WaitGroup
	generating.Go(func() { gen, partOf, genErr = generateParts(ctx, python, parts) })
	start := time.Now()
	baseRunner, release, loadErr, err := s.start(ctx, factories[0], src)
	took := time.Since(start)
	generating.Wait()
	if err == nil && loadErr == nil {
		// The unmutated grader's runner stays up while the mutants run: a
		// worker pool forks each mutant from its loaded processes.
		defer release()
	}
	if genErr != nil {
		return nil, genErr
	}
	if err != nil {
		return nil, fmt.Errorf("mutate: grading the unmutated grader: %w", err)
	}
	if loadErr != nil {
		return nil, &manifest.Error{File: sourceName, Line: loadErr.Err.Line,
			Msg: "the unmutated grader does not load, so it cannot be mutation-tested", Err: loadErr}
	}
	start = time.Now()
	base, err := s.gradeOn(ctx, baseRunner)
	budget := max(least, slowFactor*(took+time.Since(start)))
	if err != nil {
		return nil, fmt.Errorf("mutate: grading the unmutated grader: %w", err)
	}
	s.calibrate(base)
	// Forked mutants are graded as many at once as the pool has processes
	// to fork from, each on one process it owns for its whole grading, so
	// no mutant waits for a process another holds. Mutants of a part
	// graded by a pool of their own share its sandbox slots, so those go
	// one at a time.
	concurrent := 1
	if f, ok := baseRunner.(forker); ok && len(parts) == 1 {
		concurrent = max(1, f.Workers())
		factories[0] = func(ctx context.Context, src []byte) (grading.Runner, func(), error) {
			v, err := f.Fork(ctx, src)
			if err != nil {
				return nil, nil, err
			}
			return v, func() { _ = v.Close() }, nil
		}
	}

	rep := &Report{
		Schema:   Schema,
		Mutants:  gen.Mutants,
		Excluded: gen.Excluded,
		Source:   sourceNames(parts),

		ExcludedWithoutReason: unexcused(gen.Excluded),
		TimeoutCountsAsKill:   m.Gate.Mutation.TimeoutCountsAsKill,
		Sites:                 gen.Sites,
		Canaries:              s.liveCanaries(),
		Cases:                 s.liveCases(),
		MetricGates:           count(s.liveMetric),
		Blind:                 s.blind(),
	}
	graded, err := s.gradeMutants(ctx, rep.Mutants, factories, partOf, budget, concurrent)
	if err != nil {
		return nil, err
	}
	for i := range rep.Mutants {
		mu := &rep.Mutants[i]
		g := graded[i]
		switch {
		case g.slow:
			// Stopped before every check had its outcome: nothing shows
			// the suite would notice it.
			mu.Status = StatusNotGraded
			rep.NotGraded++
			continue
		case g.loadErr != nil:
			mu.Status, mu.Suspect = StatusEquivalentSuspect, SuspectLoad
			rep.EquivalentSuspect++
			continue
		case s.raisesOnEverything(g.res):
			mu.Status, mu.Suspect = StatusEquivalentSuspect, SuspectRaises
			rep.EquivalentSuspect++
			continue
		default:
			mu.KilledBy, mu.TimedOut = s.killers(g.res)
		}
		if len(mu.KilledBy) == 0 && len(mu.TimedOut) > 0 {
			mu.Status = StatusTimeoutKilled
			rep.TimeoutKilled++
			continue
		}
		if len(mu.KilledBy) > 0 {
			mu.Status = StatusKilled
			rep.Killed++
			if s.byCanary(mu.KilledBy) {
				rep.KilledByCanary++
			} else if s.byMetricOnly(mu.KilledBy) {
				rep.KilledByMetric++
			} else {
				rep.KilledByCaseOnly++
			}
		} else {
			mu.Status = StatusSurvived
			rep.Survived++
		}
	}
	rep.Score = rep.score()
	return rep, nil
}

// mutantGrading is how one mutant's grading ended.
type mutantGrading struct {
	res     *graded
	loadErr *worker.LoadError
	slow    bool // stopped at the time budget
}

// gradeMutants grades every mutant, up to concurrent at once, each within
// budget. The budget starts once the mutant's runner is up (loading is
// bounded by load_timeout_seconds), so a mutant is never timed while it
// waits for a process. The error is the first tool failure, in the mutants' order; the
// mutants still running are then stopped.
func (s *suite) gradeMutants(ctx context.Context, mutants []Mutant, factories []RunnerFactory, partOf []int, budget time.Duration, concurrent int) ([]mutantGrading, error) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	out := make([]mutantGrading, len(mutants))
	errs := make([]error, len(mutants))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range concurrent {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(mutants) {
					return
				}
				mu := &mutants[i]
				res, loadErr, slow, err := s.gradeWithin(ctx, factories[partOf[i]], mu.Source, budget)
				out[i] = mutantGrading{res: res, loadErr: loadErr, slow: slow}
				if err != nil && !slow && ctx.Err() == nil {
					errs[i] = fmt.Errorf("mutate: grading mutant %s (line %d, %s): %w", mu.ID, mu.Line, mu.Operator, err)
					stop()
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		// Not stopped by a failure of its own: the caller's ctx ended.
		return nil, fmt.Errorf("mutate: %w", context.Cause(ctx))
	}
	return out, nil
}

// sourceNames names the parts' files for the report's title.
func sourceNames(parts []Part) string {
	names := make([]string, len(parts))
	for i, p := range parts {
		names[i] = p.File
	}
	return strings.Join(names, ", ")
}

// suite is the checks a mutant must get past.
type suite struct {
	m        *manifest.Manifest
	canaries []grading.Task
	cases    []grading.Task
	labels   []int // label of each case task
	// derived describes s.canaries[len(m.Canaries):]: variants of the
	// written canaries (gate.metamorphic), judged by their relation.
	derived   []derivedCheck
	liveCan   []bool
	liveCase  []bool
	base      *graded // the unmutated grader's outcomes
	threshold float64
	// aggregate is an aggregate grader's batch of every case, when
	// gate.metrics gates it (aggregate.go); liveMetric the gates the
	// unmutated grader meets.
	aggregate  []grading.Task
	liveMetric []bool
}

func newSuite(m *manifest.Manifest, cases []dataset.Case) *suite {
	s := &suite{m: m, threshold: m.Grader.PassThreshold}
	for _, c := range m.Canaries {
		s.canaries = append(s.canaries, grading.Task{ID: c.Name, Sample: c.Sample, Item: c.Item})
	}
	for _, d := range derivedChecks(m) {
		s.derived = append(s.derived, d)
		s.canaries = append(s.canaries, d.task)
	}
	for _, c := range cases {
		if c.Label == nil || c.Sample == nil || c.Unreadable {
			continue
		}
		s.cases = append(s.cases, grading.Task{ID: c.ID, Sample: c.Sample, Item: c.ItemForGrader()})
		s.labels = append(s.labels, *c.Label)
	}
	s.aggregate = aggregateTasks(m, cases)
	return s
}

// graded is one source's outcomes on the suite.
type graded struct {
	canaries []grading.Outcome
	cases    []grading.Outcome
	// batch is the aggregate batch's report (metrics); nil without one.
	batch *grading.BatchReport
}

// forker is a runner that grades another source in processes forked from
// its own loaded ones (a worker pool).
type forker interface {
	Fork(ctx context.Context, src []byte) (*worker.Pool, error)
	// Workers is how many forks can each own a process at once.
	Workers() int
}

// start starts a runner for src. A source that does not load gives a
// *worker.LoadError and no runner.
func (s *suite) start(ctx context.Context, newRunner RunnerFactory, src []byte) (grading.Runner, func(), *worker.LoadError, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, err
	}
	r, release, err := newRunner(ctx, src)
	var le *worker.LoadError
	if errors.As(err, &le) {
		return nil, nil, le, nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	return r, release, nil, nil
}

// gradeWithin runs the suite on src, its grading (not its start) bounded by
// budget; slow says the budget stopped it.
func (s *suite) gradeWithin(ctx context.Context, newRunner RunnerFactory, src []byte, budget time.Duration) (*graded, *worker.LoadError, bool, error) {
	r, release, le, err := s.start(ctx, newRunner, src)
	if le != nil || err != nil {
		return nil, le, false, err
	}
	defer release()
	mctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	g, err := s.gradeOn(mctx, r)
	slow := err != nil && errors.Is(mctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	return g, nil, slow, err
}

// gradeOn runs the suite on runner r.
func (s *suite) gradeOn(ctx context.Context, r grading.Runner) (*graded, error) {
	// Canaries and cases go in separate Grade calls, as in the gate, so a
	// batch grader sees canaries the way the gate shows them; the two calls
	// run at once to keep the pool busy.
	var g graded
	var wg sync.WaitGroup
	var canErr, caseErr, aggErr error
	if len(s.aggregate) > 0 {
		wg.Go(func() {
			var o []grading.Outcome
			o, aggErr = grading.GradeTasks(ctx, r, s.aggregate)
			g.batch = batchOf(o)
		})
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		g.canaries, canErr = grading.GradeTasks(ctx, r, s.canaries)
	}()
	go func() {
		defer wg.Done()
		g.cases, caseErr = grading.GradeTasks(ctx, r, s.cases)
	}()
	wg.Wait()
	if err := errors.Join(canErr, caseErr, aggErr); err != nil {
		return nil, err
	}
	return &g, nil
}

// calibrate keeps the checks the unmutated grader passes.
func (s *suite) calibrate(base *graded) {
	s.base = base
	s.liveCan = make([]bool, len(s.canaries))
	for i := range base.canaries {
		s.liveCan[i] = !s.canaryFails(i, base.canaries)
	}
	s.liveCase = make([]bool, len(s.cases))
	for i, o := range base.cases {
		s.liveCase[i] = !s.caseDisagrees(i, o)
	}
	s.liveMetric = s.liveMetrics(base.batch)
}

// canaryFails reports whether canary i fails among one source's outcomes
// of every canary (a derived one is judged against its base's outcome
// from the same source).
func (s *suite) canaryFails(i int, all []grading.Outcome) bool {
	if n := len(s.m.Canaries); i >= n {
		d := s.derived[i-n]
		return d.fails(s.threshold, all[d.base], all[i])
	}
	res := grading.EvaluateCanary(s.m.Canaries[i], s.threshold, all[i])
	return !res.Passed()
}

// caseDisagrees reports whether a labeled case's outcome contradicts its
// label. An error contradicts both labels: the gate holds on it.
func (s *suite) caseDisagrees(i int, o grading.Outcome) bool {
	score, ok := grading.GatingScore(s.m.Grader, o)
	if !ok {
		return true
	}
	return (score >= s.threshold) != (s.labels[i] == 1)
}

// killers names the live checks the outcomes fail, canaries first, and
// apart from them those that failed by timing out where the unmutated
// grader did not: how long a case runs depends on the machine too, so a
// timeout alone never makes a kill.
func (s *suite) killers(g *graded) (killed, timedOut []string) {
	killed = []string{}
	note := func(id string, base, o grading.Outcome) {
		if o.Class == grading.ClassTimeout && base.Class != grading.ClassTimeout {
			timedOut = append(timedOut, id)
		} else {
			killed = append(killed, id)
		}
	}
	for i, o := range g.canaries {
		if s.liveCan[i] && s.canaryFails(i, g.canaries) && changed(s.base.canaries[i], o) {
			note(s.canaries[i].ID, s.base.canaries[i], o)
		}
	}
	for i, o := range g.cases {
		if s.liveCase[i] && s.caseDisagrees(i, o) && changed(s.base.cases[i], o) {
			note(s.cases[i].ID, s.base.cases[i], o)
		}
	}
	return append(killed, s.metricKillers(g.batch)...), timedOut
}

// changed says whether a check's outcome differs from the unmutated
// grader's: its class, or its score.
func changed(base, o grading.Outcome) bool {
	if base.Class != o.Class {
		return true
	}
	if base.Score == nil || o.Score == nil {
		return (base.Score == nil) != (o.Score == nil)
	}
	return *base.Score != *o.Score
}

// raisesOnEverything says whether every outcome of g is an error while the
// unmutated grader had at least one that was not.
func (s *suite) raisesOnEverything(g *graded) bool {
	if g == nil || len(g.canaries)+len(g.cases) == 0 {
		return false
	}
	for _, o := range slices.Concat(g.canaries, g.cases) {
		if o.Class == grading.ClassOK {
			return false
		}
	}
	return slices.ContainsFunc(slices.Concat(s.base.canaries, s.base.cases), func(o grading.Outcome) bool {
		return o.Class == grading.ClassOK
	})
}

// byCanary says whether one of the killers is a canary.
func (s *suite) byCanary(killers []string) bool {
	return slices.ContainsFunc(s.canaries, func(c grading.Task) bool { return slices.Contains(killers, c.ID) })
}

func (s *suite) liveCanaries() int { return count(s.liveCan) }
func (s *suite) liveCases() int    { return count(s.liveCase) }

func (s *suite) blind() []string {
	var out []string
	for i, live := range s.liveCan {
		if !live {
			out = append(out, "canary "+s.canaries[i].ID)
		}
	}
	for i, live := range s.liveCase {
		if !live {
			out = append(out, "case "+s.cases[i].ID)
		}
	}
	return out
}

func count(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// KillHint says what kind of canary would notice a mutant of the operator:
// the advice beside a survivor.
func KillHint(operator string) string {
	switch operator {
	case "drop-raise":
		return "a canary with expect_error: true whose item reaches this raise"
	case "broaden-except":
		return "a canary whose input raises an error this handler must not catch"
	case "negate-condition", "flip-comparison", "or-to-and", "and-to-or", "type-is-to-isinstance":
		return "a canary on each side of this condition, with different expected scores"
	case "constant-flip", "return-constant-flip", "number-change", "weight-change":
		return "a canary whose expected score is what this line produces"
	case "arithmetic-swap", "min-max-swap", "floor-ceil-swap", "drop-rounding", "divisor-change":
		return "a canary whose expected score depends on this computation's exact value"
	}
	return "a canary or labeled case whose score depends on this line"
}

// Survivors are the report's surviving mutants as the results list them,
// file naming the grader source (a multi grader's part adds its name).
func (r *Report) Survivors(file string) []results.SurvivingMutant {
	var out []results.SurvivingMutant
	for _, m := range r.Mutants {
		if m.Status != StatusSurvived {
			continue
		}
		out = append(out, results.SurvivingMutant{ID: m.ID, Part: m.Part, File: file, Line: m.Line,
			Operator: m.Operator, Diff: m.Diff, Kill: KillHint(m.Operator)})
	}
	return out
}
