package gate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path"
	"slices"
	"strings"

	"github.com/gradegate/gradegate/gate/blind"
	"github.com/gradegate/gradegate/gate/digest"
	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/gate/verdict"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// Inputs is what a gate run reads.
type Inputs struct {
	Manifest *manifest.Manifest
	// FS holds the suite's files, read at path.Join(Manifest.Dir, p).
	FS fs.FS
	// Source streams the dataset (dataset.Open); Run closes it. When nil,
	// Dataset is read instead: a dataset loaded in memory (dataset.Load).
	// Both are nil only with Options.CanariesOnly.
	Source  CaseSource
	Dataset *dataset.Set
	// Findings are further findings to weigh, such as the grader lint's;
	// dataset findings come with Dataset.
	Findings []manifest.Finding
	// Inside says whether a file (as path.Join(Manifest.Dir, p) names it)
	// is in the repository tree: the digest of a file outside it whose
	// bytes are not its pin is not told (digest.Conceal). nil: every file
	// is inside.
	Inside func(file string) bool
}

// Options change how Run grades.
type Options struct {
	// Shard grades only the cases whose case_id ShardOf puts in Shard.Index
	// of Shard.Count. The zero value grades every case.
	Shard shard.Shard
	// Version is gradegate's version, recorded in results.versions.
	Version string
	// CanariesOnly runs the canaries and nothing else (the canary command):
	// no case is graded and only the grader and rubric digests are checked.
	CanariesOnly bool
	// MutationScore is the grader's mutation score when the caller measured
	// it; nil otherwise.
	MutationScore *float64
	// MutationSurvivors are the mutants that measurement left alive.
	MutationSurvivors []results.SurvivingMutant
	// SpoolDir, when set, streams the case rows to a file there (unlinked
	// at once) and keeps in Results.Cases only the rows the reports show,
	// so that memory does not grow with the dataset; Results.WriteJSON
	// writes them all. When empty, Results.Cases holds every row.
	SpoolDir string
	// Batch is how many tasks a batch Runner is given per Grade call; 0 is
	// DefaultBatch. A Runner that streams takes tasks as it needs them.
	Batch int
	// CanarySeed places the canaries among the cases; 0 draws a seed. The
	// seed is in the results (canaries[].placement) so that a run's order
	// can be reproduced.
	CanarySeed uint64
	// Progress hears how far grading is; nil for none.
	Progress Progress
	// Rows is the number of dataset rows when the caller knows it (for
	// Progress); 0 when unknown.
	Rows int
	// Output bounds the case rows the run writes (see results.OutputLimits); the
	// zero value is the defaults.
	Output results.OutputLimits
	// Observe, when set, sees every dataset row as the run reads it, of
	// every shard, in dataset order, before the row is graded: what else
	// needs the rows (the determinism check's sample) takes them from the
	// run's own pass instead of reading the dataset again.
	Observe func(dataset.Case)
	// ObserveOutcome, when set, sees the outcome of every case graded (not
	// of the canaries), by case id, as soon as it is known.
	ObserveOutcome func(caseID string, o grading.Outcome)
	// ObserveCanaries, when set, sees the written canaries as the grader
	// received them (built on a dataset row, with its id) and their
	// outcomes, once every canary is graded: the determinism check sends
	// the same bytes and compares with them.
	ObserveCanaries func(sent []grading.Task, outcomes []grading.Outcome)
	// JudgeUsage, when set, is read once grading is done: a model grader's
	// calls and budget (judge.Judge's Usage), which the verdict weighs.
	JudgeUsage func() *results.JudgeUsage
}

// DefaultBatch is how many tasks a batch Runner gets per Grade call:
// enough to keep every worker busy, few enough to bound the memory of
// requests in flight.
const DefaultBatch = 1024

// Run does one gate run and returns its results; the verdict is in them.
//
// The digests come first; then the dataset streams: each row is read once,
// a task is built for it as the runner asks, and its result is folded, in
// dataset order, into the tally, the kept rows and (with SpoolDir) the rows
// on disk. The canaries travel among the cases (see Canaries); under
// the batch contract an expect_error canary is graded alone after them.
// Grading goes on after a grader or rubric digest mismatch: the verdict
// holds either way, and a user fixing a pin wants to see in the same run
// what every case does with the bytes that are there. A dataset or samples
// file whose bytes differ from its pin is not read at all (dataset.Reader):
// it may be any file the manifest's path reaches. The digests are computed from the same fsys the
// Runner was built from, so what was graded is what was hashed.
//
// A dataset that turns out unusable (a line that is not a case) stops the
// feeding of tasks, and every problem of the file is the error.
//
// A case without a sample is omitted (missing_sample). Intended cases beyond
// the dataset's rows (dataset.intended_cases > rows) are omitted as
// not_in_dataset; they have no case row, and a shard of several counts them
// in shard 1 only, so the shards' counts add up to the merged ones.
//
// The error is for the tool failing, never for a hold: a Runner error, a
// Runner that breaks its contract (wrong number of outcomes, an ok outcome
// without a finite score), or a pinned file that cannot be read (an input
// error, errors.Is(err, manifest.ErrInput), when it does not exist).
func Run(ctx context.Context, in Inputs, r grading.Runner, opts Options) (*results.Results, error) {
	g, err := gradeRun(ctx, in, r, opts)
	if err != nil {
		return nil, err
	}
	if opts.JudgeUsage != nil {
		g.ev.Judge = opts.JudgeUsage()
	}
	return g.document(), nil
}

// evidence is what the grading stages of a run found, before the verdict:
// later stages (the determinism check, hosted parity) add theirs to ev, and
// document decides and builds the results once every stage is done.
type evidence struct {
	m       *manifest.Manifest
	digests digest.Digests
	sandbox grading.Sandbox
	version string
	ev      verdict.Evidence
	// cases are the case rows (every one, or the kept ones when spooled),
	// notKept how many were not kept, spool the rows on disk or nil.
	cases            []results.CaseResult
	notKept          int
	spool            *results.Spool
	mutationExcluded []results.MutationExclusion
}

// document decides the verdict and builds the results document.
func (e *evidence) document() *results.Results {
	res := assemble(e.m, e.digests, e.sandbox, e.version, e.ev)
	res.MutationExcluded = e.mutationExcluded
	if e.ev.CanariesOnly {
		return res
	}
	res.Cases = e.cases
	res.CasesNotKept = e.notKept
	if e.spool != nil {
		res.Rows = e.spool.Rows()
	}
	return res
}

// gradeRun is Run up to the verdict: the digests, the canaries and the
// cases.
func gradeRun(ctx context.Context, in Inputs, r grading.Runner, opts Options) (*evidence, error) {
	m := in.Manifest
	switch {
	case m == nil:
		return nil, errors.New("gate: no manifest")
	case r == nil:
		return nil, errors.New("gate: no runner")
	case in.FS == nil:
		return nil, errors.New("gate: no file system")
	case in.Dataset == nil && in.Source == nil && !opts.CanariesOnly:
		return nil, errors.New("gate: no dataset")
	}
	src := in.Source
	if src == nil && in.Dataset != nil {
		src = &setSource{set: in.Dataset}
	}
	if opts.CanariesOnly && src != nil {
		src.Close()
		src = nil
	}
	shard, err := opts.Shard.Normalize()
	if err != nil {
		return nil, err
	}

	// The dataset reader hashed the dataset and the samples file as it
	// checked their pins; those digests stand for both files.
	var known digest.Digests
	if p, ok := src.(interface{ PinnedDigests() (string, string) }); ok {
		known.Dataset, known.Samples = p.PinnedDigests()
	}
	digests, mismatches, err := digest.CheckDigestsKnown(in.FS, m, !opts.CanariesOnly, known)
	if err != nil {
		if src != nil {
			src.Close()
		}
		return nil, fmt.Errorf("checking digests: %w", err)
	}
	digest.Conceal(&digests, mismatches, in.Inside)

	var canaries []results.CanaryResult
	if opts.CanariesOnly {
		var variants *blind.CanaryVariants
		if canaries, variants, err = runCanaries(ctx, m, r); err != nil {
			return nil, err
		}
		if err := traceCanaries(ctx, m, r, canaries, in.Findings, variants.Task); err != nil {
			return nil, err
		}
	}

	sandbox := r.Sandbox()
	ev := verdict.Evidence{
		Canaries:         canaries,
		DigestMismatches: mismatches,
		MutationScore:    opts.MutationScore,
		Survivors:        opts.MutationSurvivors,
		Shard:            shard,
		CanariesOnly:     opts.CanariesOnly,
		Unsandboxed:      sandbox.Unsandboxed,
		Findings:         slices.Clone(in.Findings),
	}
	out := &evidence{m: m, digests: digests, sandbox: sandbox, version: opts.Version, ev: ev}
	if opts.CanariesOnly {
		return out, nil
	}

	rows := opts.Rows
	if rows <= 0 {
		if in.Dataset != nil {
			rows = len(in.Dataset.Cases)
		} else {
			rows = digest.CountRows(in.FS, path.Join(m.Dir, m.Dataset.Path))
		}
		opts.Rows = rows
	}
	seed := opts.CanarySeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	placed := blind.New(m, rows, seed)
	if ids, ok := src.(interface{ Seen(id string) bool }); ok && placed != nil {
		placed.Seen = ids.Seen
	}
	g, err := gradeStream(ctx, m, src, shard, r, opts, placed)
	if err != nil {
		return nil, err
	}
	if placed != nil {
		if rest := placed.Unsent(); len(rest) > 0 {
			tasks := make([]grading.Task, len(rest))
			for k, i := range rest {
				tasks[k] = placed.Task(i)
			}
			o, err := grading.GradeTasks(ctx, r, tasks)
			if err != nil {
				return nil, fmt.Errorf("grading derived canaries: %w", err)
			}
			for k, i := range rest {
				placed.Record(i, o[k])
			}
		}
		for alone := placed.Alone(); len(alone) > 0; alone = placed.Alone() {
			for _, i := range alone {
				t := placed.Task(i)
				o, err := grading.GradeTasks(ctx, r, []grading.Task{t})
				if err != nil {
					return nil, fmt.Errorf("grading canary %s: %w", placed.Name(i), err)
				}
				placed.Record(i, o[0])
			}
		}
		ev.Canaries = placed.Results()
		if opts.ObserveCanaries != nil {
			n := len(m.Canaries)
			sent, outcomes := make([]grading.Task, n), make([]grading.Outcome, n)
			for i := range n {
				sent[i], outcomes[i] = placed.Task(i), placed.Outcome(i)
			}
			opts.ObserveCanaries(sent, outcomes)
		}
		if err := traceCanaries(ctx, m, r, ev.Canaries, in.Findings, placed.DerivedTask); err != nil {
			return nil, err
		}
	}
	ev.Tally = g.tally
	ev.Metrics = metricsOf(m, g.batches, shard)
	ev.Labels = g.summary.Labels
	ev.Findings = append(ev.Findings, g.summary.Findings...)
	ev.Findings = append(ev.Findings, g.scale.Findings(m)...)
	if shard.Index == 1 {
		ev.NotInDataset = max(g.summary.Intended-g.summary.Rows, 0)
		ev.ExtraRows = max(g.summary.Rows-g.summary.Intended, 0)
	}
	out.ev = ev
	out.cases, out.notKept, out.spool = g.cases, g.notKept, g.spool
	return out, nil
}

// graded is what grading the dataset's stream produced.
type graded struct {
	tally   *verdict.Tally
	summary *dataset.Summary
	cases   []results.CaseResult // every row, or the kept ones when spooled
	notKept int
	spool   *results.Spool
	scale   verdict.ScaleWatch
	// batches are the grade_batch reports of the rows (an aggregate
	// grader's metrics).
	batches []*grading.BatchReport
}

// gradeStream grades the shard's rows of src as a stream and folds each
// result, in dataset order, into the tally and the case rows; src is
// closed. A dataset that turns out unusable is the error of src.Close.
func gradeStream(ctx context.Context, m *manifest.Manifest, src CaseSource, shard shard.Shard, r grading.Runner, opts Options, blind *blind.Canaries) (*graded, error) {
	g := &graded{tally: verdict.NewTally(m.Gate), cases: []results.CaseResult{}}
	var keep *results.Keeper
	var err error
	if opts.SpoolDir != "" {
		if g.spool, err = results.NewSpool(opts.SpoolDir); err != nil {
			src.Close()
			return nil, err
		}
		keep = results.NewKeeper(m.Gate)
	}
	bounds := results.NewRowBounds(opts.Output)
	format := bounds.Format
	if g.spool != nil {
		format = g.spool.Format
	}
	sink := func(c results.CaseResult) error {
		c, row, err := bounds.Bound(c, format)
		if err != nil {
			return err
		}
		g.tally.Add(c)
		g.scale.Add(c)
		if g.spool == nil {
			g.cases = append(g.cases, c)
			return nil
		}
		keep.Add(c)
		return g.spool.Write(c.CaseID, row)
	}
	fail := func(err error) (*graded, error) {
		if g.spool != nil {
			g.spool.Close()
		}
		return nil, err
	}
	if opts.Progress != nil {
		opts.Progress.Start(opts.Rows)
	}
	p := newPipeline(m, shard, src, sink, opts.Progress, blind)
	p.observe = opts.Observe
	p.observeOutcome = opts.ObserveOutcome
	runErr := p.run(ctx, grading.StreamOf(r, cmp.Or(opts.Batch, DefaultBatch)))
	g.batches = p.batches
	if opts.Progress != nil {
		opts.Progress.Finish()
	}
	sum, srcErr := src.Close()
	if srcErr != nil {
		// The dataset's own errors say more than anything grading it did.
		return fail(srcErr)
	}
	if runErr != nil {
		return fail(fmt.Errorf("grading cases: %w", runErr))
	}
	g.summary = sum
	if g.spool != nil {
		if err := g.spool.Flush(); err != nil {
			return fail(err)
		}
		g.cases = keep.Rows()
		g.notKept = keep.Dropped
	}
	return g, nil
}

// assemble builds the results document from the evidence and its verdict.
func assemble(m *manifest.Manifest, digests digest.Digests, sandbox grading.Sandbox, version string, ev verdict.Evidence) *results.Results {
	v := verdict.Decide(m.Gate, ev)
	var mm *results.MetamorphicReport
	if !ev.CanariesOnly || derivedAmong(ev.Canaries) {
		mm = results.MetamorphicReportOf(m.Gate.Metamorphic, ev.Canaries)
	}
	return &results.Results{
		Metamorphic:   mm,
		Schema:        results.ResultsSchema,
		Verdict:       v.Verdict,
		Reasons:       v.Reasons,
		Warnings:      v.Warnings,
		Findings:      nonNil(slices.Concat(ev.Findings, ev.JudgeLint, ev.Notes)),
		Manifest:      results.ManifestRef{Name: m.Name, Path: m.File},
		Digests:       digests,
		Versions:      versions(m, version, digests, ev.Labels),
		Sandbox:       sandbox,
		Shard:         ev.Shard,
		Counts:        v.Counts,
		Overall:       v.Overall,
		Slices:        v.Slices,
		Confidence:    &v.Confidence,
		Canaries:      nonNil(ev.Canaries),
		Cases:         nonNil(ev.Cases),
		MutationScore: ev.MutationScore,
		Labels:        v.Labels,
		Metrics:       v.Metrics,
		Determinism:   ev.Determinism,
		Hosted:        ev.Hosted,
		Judge:         ev.Judge,
		// The survivors are reported with the score that counts them.
		MutationSurvivors: survivorsOf(ev),
	}
}

// survivorsOf is the surviving mutants the results list: those of a measured
// score, none otherwise.
func survivorsOf(ev verdict.Evidence) []results.SurvivingMutant {
	if ev.MutationScore == nil {
		return nil
	}
	return ev.Survivors
}

// versions records what produced the results: the four versions a run is
// compared by (dataset revision, rubric version, grader digest and judge
// model, candidate) and the tools'.
func versions(m *manifest.Manifest, gradegate string, digests digest.Digests, labels *dataset.LabelSummary) results.Versions {
	v := results.Versions{
		Gradegate:       gradegate,
		DatasetRevision: m.Dataset.Revision,
		GraderName:      m.Grader.Name,
		ImageTag:        m.Grader.ImageTag,
		GraderDigest:    digests.Grader,

		PreprocessDigest: digests.Preprocess,
	}
	if m.Grader.Judge != nil {
		v.JudgeModel = m.Grader.Judge.Model
	}
	v.Candidate = candidateOf(m, labels)
	if v.GraderName == "" {
		base := path.Base(m.Grader.Source)
		v.GraderName = strings.TrimSuffix(base, path.Ext(base))
	}
	if m.Rubric != nil {
		v.RubricVersion = m.Rubric.Version
	}
	return v
}

// candidateOf is samples.candidate, or the model the samples name; the
// samples' models are listed beside it when there are several or
// samples.candidate names another. nil when neither says.
func candidateOf(m *manifest.Manifest, labels *dataset.LabelSummary) *results.Candidate {
	var models []dataset.CandidateModel
	if labels != nil {
		models = labels.Candidates.Models
	}
	var c *results.Candidate
	switch {
	case m.Samples != nil && m.Samples.Candidate != nil:
		c = &results.Candidate{Model: m.Samples.Candidate.Model, Revision: m.Samples.Candidate.Revision}
	case len(models) > 0:
		c = &results.Candidate{Model: models[0].Model}
	default:
		return nil
	}
	if len(models) > 1 || (len(models) == 1 && models[0].Model != c.Model) {
		c.Models = models
	}
	return c
}

// runCanaries grades every canary (in one call, or one call each under the
// batch contract), then the written canaries' derived variants, and judges
// each outcome; the variants are returned for a traced replay.
func runCanaries(ctx context.Context, m *manifest.Manifest, r grading.Runner) ([]results.CanaryResult, *blind.CanaryVariants, error) {
	out := make([]results.CanaryResult, 0, len(m.Canaries))
	if len(m.Canaries) == 0 {
		return out, nil, nil
	}
	// The written canaries' derived variants too (gate.metamorphic), for a
	// Python or multi grader; a model grader's would be calls that the
	// run's plan of calls does not count.
	var cv *blind.CanaryVariants
	if m.Grader.Judge == nil {
		cv = blind.NewCanaryVariants(m)
	}
	tasks := make([]grading.Task, len(m.Canaries))
	for i, c := range m.Canaries {
		tasks[i] = grading.Task{ID: c.Name, Sample: c.Sample, Item: c.Item, RecordReads: cv.RecordReads(c)}
	}
	outcomes, err := gradeCanaryTasks(ctx, m, r, tasks)
	if err != nil {
		return nil, nil, err
	}
	for i, c := range m.Canaries {
		out = append(out, blind.JudgeCanary(c, m.Grader.PassThreshold, outcomes[i]))
	}
	if bc := blind.BuiltinCanaries(m); len(bc) > 0 {
		bt := make([]grading.Task, len(bc))
		for i, c := range bc {
			bt[i] = grading.Task{ID: c.Name, Sample: c.Sample, Item: c.Item}
		}
		bo, err := gradeCanaryTasks(ctx, m, r, bt)
		if err != nil {
			return nil, nil, err
		}
		for i, c := range bc {
			out = append(out, blind.JudgeBuiltin(c, m.Grader.PassThreshold, bo[i]))
		}
	}
	if vt := cv.Tasks(outcomes); len(vt) > 0 {
		vo, err := gradeCanaryTasks(ctx, m, r, vt)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, cv.Results(vo)...)
	}
	return out, cv, nil
}

// gradeCanaryTasks grades canaries: under the batch contract as batches of
// one, so an expect_error canary's raise is its own and not its
// neighbours'.
func gradeCanaryTasks(ctx context.Context, m *manifest.Manifest, r grading.Runner, tasks []grading.Task) ([]grading.Outcome, error) {
	if m.Grader.Contract != "batch" {
		outcomes, err := grading.GradeTasks(ctx, r, tasks)
		if err != nil {
			return nil, fmt.Errorf("grading canaries: %w", err)
		}
		return outcomes, nil
	}
	var outcomes []grading.Outcome
	for _, t := range tasks {
		o, err := grading.GradeTasks(ctx, r, []grading.Task{t})
		if err != nil {
			return nil, fmt.Errorf("grading canary %s: %w", t.ID, err)
		}
		outcomes = append(outcomes, o...)
	}
	return outcomes, nil
}

// nonNil makes a nil slice empty, so the results JSON says [] and not null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// derivedAmong reports whether any of canaries was derived (gate.metamorphic).
func derivedAmong(canaries []results.CanaryResult) bool {
	for _, c := range canaries {
		if c.DerivedFrom != "" {
			return true
		}
	}
	return false
}
