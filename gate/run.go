// Package gate grades a suite and decides its verdict (SPEC sections 6, 7, 9
// and 11).
//
// Run does one gate run: it checks the pinned digests, runs the canaries, then
// grades the cases through a Runner and assembles the results. Decide holds
// the verdict rules and is pure, and Merge combines the results of a sharded
// run with the same rules.
package gate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// Inputs is what a gate run reads.
type Inputs struct {
	Manifest *manifest.Manifest
	// FS holds the suite's files, read at path.Join(Manifest.Dir, p).
	FS fs.FS
	// Dataset is the loaded dataset (dataset.Load); nil only with
	// Options.CanariesOnly.
	Dataset *dataset.Set
	// Findings are further findings to weigh, such as the grader lint's;
	// dataset findings come with Dataset.
	Findings []manifest.Finding
}

// Options change how Run grades.
type Options struct {
	// Shard grades only the cases whose case_id ShardOf puts in Shard.Index
	// of Shard.Count. The zero value grades every case.
	Shard Shard
	// Version is gradegate's version, recorded in results.versions.
	Version string
	// CanariesOnly runs the canaries and nothing else (the canary command):
	// no case is graded and only the grader and rubric digests are checked.
	CanariesOnly bool
	// MutationScore is the grader's mutation score when the caller measured
	// it; nil otherwise.
	MutationScore *float64
}

// Run does one gate run and returns its results; the verdict is in them.
//
// The order is the one SPEC section 6 asks for: digests, then the canaries,
// then the cases in one Runner.Grade call (the Runner parallelises). Grading
// goes on after a digest mismatch or a failed canary: the verdict holds
// either way, and a user fixing a pin or a grader wants to see in the same
// run what every case does with the bytes that are there. The digests are
// computed from the same fsys the Runner was built from, so what was graded
// is what was hashed.
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
func Run(ctx context.Context, in Inputs, r Runner, opts Options) (*Results, error) {
	m := in.Manifest
	switch {
	case m == nil:
		return nil, errors.New("gate: no manifest")
	case r == nil:
		return nil, errors.New("gate: no runner")
	case in.FS == nil:
		return nil, errors.New("gate: no file system")
	case in.Dataset == nil && !opts.CanariesOnly:
		return nil, errors.New("gate: no dataset")
	}
	shard, err := opts.Shard.normalize()
	if err != nil {
		return nil, err
	}

	digests, mismatches, err := CheckDigests(in.FS, m, !opts.CanariesOnly)
	if err != nil {
		return nil, fmt.Errorf("checking digests: %w", err)
	}

	canaries, err := runCanaries(ctx, m, r)
	if err != nil {
		return nil, err
	}

	sandbox := r.Sandbox()
	ev := Evidence{
		Canaries:         canaries,
		DigestMismatches: mismatches,
		MutationScore:    opts.MutationScore,
		Shard:            shard,
		CanariesOnly:     opts.CanariesOnly,
		Unsandboxed:      sandbox.Unsandboxed,
		Cases:            []CaseResult{},
		Findings:         slices.Clone(in.Findings),
	}
	if !opts.CanariesOnly {
		set := in.Dataset
		ev.Findings = append(ev.Findings, set.Findings...)
		ev.Cases, err = gradeCases(ctx, m, set.Cases, shard, r)
		if err != nil {
			return nil, err
		}
		ev.Findings = append(ev.Findings, ScaleFindings(m, ev.Cases)...)
		if shard.Index == 1 {
			ev.NotInDataset = max(set.Intended-len(set.Cases), 0)
			ev.ExtraRows = max(len(set.Cases)-set.Intended, 0)
		}
	}

	return assemble(m, digests, sandbox, opts.Version, ev), nil
}

// assemble builds the results document from the evidence and its verdict.
func assemble(m *manifest.Manifest, digests Digests, sandbox Sandbox, version string, ev Evidence) *Results {
	v := Decide(m.Gate, ev)
	return &Results{
		Schema:        ResultsSchema,
		Verdict:       v.Verdict,
		Reasons:       v.Reasons,
		Warnings:      v.Warnings,
		Findings:      nonNil(ev.Findings),
		Manifest:      ManifestRef{Name: m.Name, Path: m.File},
		Digests:       digests,
		Versions:      versions(m, version),
		Sandbox:       sandbox,
		Shard:         ev.Shard,
		Counts:        v.Counts,
		Overall:       v.Overall,
		Slices:        v.Slices,
		Canaries:      nonNil(ev.Canaries),
		Cases:         nonNil(ev.Cases),
		MutationScore: ev.MutationScore,
	}
}

// versions records what produced the results.
func versions(m *manifest.Manifest, gradegate string) Versions {
	v := Versions{
		Gradegate:       gradegate,
		DatasetRevision: m.Dataset.Revision,
		GraderName:      m.Grader.Name,
		ImageTag:        m.Grader.ImageTag,
	}
	if v.GraderName == "" {
		base := path.Base(m.Grader.Source)
		v.GraderName = strings.TrimSuffix(base, path.Ext(base))
	}
	if m.Rubric != nil {
		v.RubricVersion = m.Rubric.Version
	}
	return v
}

// runCanaries grades every canary (in one call, or one call each under the
// batch contract) and judges each outcome.
func runCanaries(ctx context.Context, m *manifest.Manifest, r Runner) ([]CanaryResult, error) {
	out := make([]CanaryResult, 0, len(m.Canaries))
	if len(m.Canaries) == 0 {
		return out, nil
	}
	tasks := make([]Task, len(m.Canaries))
	for i, c := range m.Canaries {
		tasks[i] = Task{ID: c.Name, Sample: c.Sample, Item: c.Item}
	}
	var outcomes []Outcome
	if m.Grader.Contract == "batch" {
		// SPEC section 4: under the batch contract canaries run as batches of
		// one, so an expect_error canary's raise is its own and not its
		// neighbours'.
		for _, t := range tasks {
			o, err := GradeTasks(ctx, r, []Task{t})
			if err != nil {
				return nil, fmt.Errorf("grading canary %s: %w", t.ID, err)
			}
			outcomes = append(outcomes, o...)
		}
	} else {
		var err error
		outcomes, err = GradeTasks(ctx, r, tasks)
		if err != nil {
			return nil, fmt.Errorf("grading canaries: %w", err)
		}
	}
	for i, c := range m.Canaries {
		o := outcomes[i]
		res := EvaluateCanary(c, m.Grader.PassThreshold, o)
		cr := CanaryResult{
			Name:        c.Name,
			Expect:      c.Expect,
			ExpectError: c.ExpectError,
			Class:       o.Class,
			Status:      res.Status,
			Message:     res.Message,
			Output:      o.Output,
		}
		if o.Class == ClassOK {
			cr.Got = o.Score
		} else {
			cr.Error = caseError(o)
		}
		out = append(out, cr)
	}
	return out, nil
}

// gradeCases grades the shard's cases that have a sample, in one call, and
// returns a row for every case of the shard in dataset order.
func gradeCases(ctx context.Context, m *manifest.Manifest, cases []dataset.Case, shard Shard, r Runner) ([]CaseResult, error) {
	rows := make([]CaseResult, 0, len(cases))
	var tasks []Task
	var graded []int // index in rows of each task
	for _, c := range cases {
		if ShardOf(c.ID, shard.Count) != shard.Index {
			continue
		}
		row := CaseResult{
			CaseID:       c.ID,
			Slices:       nonNil(c.Slices),
			Family:       c.Family,
			HumanScore:   c.Label,
			SampleSHA256: c.SampleSHA256,
			Line:         c.Line,
		}
		if c.Sample == nil {
			row.Status = StatusOmitted
			row.Reason = OmittedMissingSample
		} else {
			tasks = append(tasks, Task{ID: c.ID, Sample: c.Sample, Item: c.Item})
			graded = append(graded, len(rows))
		}
		rows = append(rows, row)
	}
	if len(tasks) == 0 {
		return rows, nil
	}
	outcomes, err := GradeTasks(ctx, r, tasks)
	if err != nil {
		return nil, fmt.Errorf("grading cases: %w", err)
	}
	for i, o := range outcomes {
		FillCase(&rows[graded[i]], o, m.Grader)
	}
	return rows, nil
}

// caseError is the outcome's error, with its class always set.
func caseError(o Outcome) *CaseError {
	if o.Error == nil {
		return &CaseError{Class: o.Class, Message: string(o.Class)}
	}
	e := *o.Error
	e.Class = o.Class
	return &e
}

// nonNil makes a nil slice empty, so the results JSON says [] and not null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
