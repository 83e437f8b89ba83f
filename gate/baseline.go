package gate

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/gradegate/gradegate/gate/compare"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/verdict"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/input"
)

// baselineInput is run --baseline: the base branch's results file and the
// manifest's gate.baseline rule it is judged by.
type baselineInput struct {
	file  string
	rule  manifest.Baseline
	level float64 // gate.confidence.level, of the change's interval
	name  string  // the manifest's name, which the base results must carry
}

// openBaseline opens the base results as a header and a stream of rows. A
// file that is not a results document, or whose manifest has another name,
// is an input error naming the file.
func openBaseline(b baselineInput, limits input.Limits) (ShardPart, func(), error) {
	p, closeFile, err := OpenShard(b.file, limits, nil)
	if err != nil {
		return ShardPart{}, nil, fmt.Errorf("--baseline: %w", err)
	}
	if got := p.Results.Manifest.Name; got != b.name {
		closeFile()
		return ShardPart{}, nil, fmt.Errorf("--baseline: %w", &manifest.Error{File: b.file, Key: "manifest.name",
			Msg: fmt.Sprintf("the base results are of manifest %q, this run's is %q", got, b.name)})
	}
	return p, closeFile, nil
}

// checkBaseline reads the base results' header before any grading, so a
// wrong file costs no run.
func checkBaseline(b baselineInput, limits input.Limits) error {
	_, closeFile, err := openBaseline(b, limits)
	if err != nil {
		return err
	}
	closeFile()
	return nil
}

// applyBaseline compares the run's rows with the base results' on the
// cases both graded and records the comparison in res, holding it as
// regressed_vs_baseline when the rule says so. Both sides stream: the base
// keeps a few fields per case, the run's rows are read back from where the
// run keeps them. It returns the weakenings the comparison shows (a base
// case of a mandatory slice that this run does not have) and the reason
// the base results recorded for their own weakenings.
func applyBaseline(res *results.Results, b baselineInput, limits input.Limits) ([]manifest.Weakening, string, error) {
	p, closeFile, err := openBaseline(b, limits)
	if err != nil {
		return nil, "", err
	}
	defer closeFile()
	rows, err := res.AllRows()
	if err != nil {
		return nil, "", err
	}
	rep, err := compare.CompareStreams(p.Results, p.Cases, res, rows)
	if err != nil {
		return nil, "", fmt.Errorf("--baseline %s: %w", b.file, err)
	}
	bl := &results.Baseline{
		File:            b.file,
		Verdict:         p.Results.Verdict,
		Digests:         p.Results.Digests,
		Cohort:          rep.Cohort,
		PassRateChange:  rep.PassRate.MatchedEffect,
		Added:           len(rep.Added),
		Removed:         len(rep.Removed),
		Flips:           make([]results.BaselineFlip, 0, len(rep.Flipped)),
		Pairs:           rep.Pairs,
		VersionsChanged: rep.VersionsChanged,
	}
	for _, f := range rep.Flipped {
		bl.Flips = append(bl.Flips, results.BaselineFlip{CaseID: f.CaseID, Base: f.Base, Head: f.Head,
			OutputChanged: f.OutputChanged, Slices: nonNil(f.Slices)})
	}
	verdict.ApplyBaseline(res, bl, b.rule, b.level)
	verdict.ApplyGraderChange(res, bl, rep.Labels, rep.LabelsChanged)
	baseReason := ""
	if p.Results.Policy != nil {
		baseReason = p.Results.Policy.Reason
	}
	return removedWeakenings(res, p.Results, rep.RemovedCases, b.file), baseReason, nil
}

// removedWeakenings names each base case of a mandatory slice (mandatory
// in the base results or in this run) that this run no longer has: a
// case deleted with intended_cases lowered, or renamed, leaves no omitted
// row behind, so only the base shows it.
func removedWeakenings(res, base *results.Results, removed []compare.RemovedCase, file string) []manifest.Weakening {
	mandatory := map[string]bool{}
	for _, rs := range [][]results.SliceResult{res.Slices, base.Slices} {
		for _, s := range rs {
			if s.Mandatory {
				mandatory[s.Name] = true
			}
		}
	}
	var out []manifest.Weakening
	for _, c := range removed {
		for _, s := range c.Slices {
			if !mandatory[s] {
				continue
			}
			out = append(out, manifest.Weakening{Key: "dataset", Base: c.CaseID, Slice: s, Message: fmt.Sprintf(
				"case %s of mandatory slice %q (%s in %s) is not in this run: removed or renamed", c.CaseID, s, c.Status, file)})
			break
		}
	}
	return out
}

// OpenShard opens a results file as a stream: its header now, its rows one
// at a time as the caller asks. Both reads go through the input layer.
// check, when set, checks every row as it passes and the header's counts
// against them at the end (merge); compare reads without it.
func OpenShard(name string, limits input.Limits, check func(*results.Results) *results.ShardCheck) (ShardPart, func(), error) {
	open := func() (*input.File, error) {
		f, err := input.Open(input.Host{}, filepath.ToSlash(name), input.Results, limits.Of(input.Results))
		if err != nil {
			return nil, manifest.ReadError(name, 0, "", "cannot read results", err)
		}
		return f, nil
	}
	hf, err := open()
	if err != nil {
		return ShardPart{}, nil, err
	}
	r, err := results.ReadResultsHeader(hf)
	hf.Close()
	if err != nil {
		return ShardPart{}, nil, &manifest.Error{File: name, Msg: "not a results JSON document", Err: err}
	}
	if r.Schema != results.ResultsSchema {
		return ShardPart{}, nil, &manifest.Error{File: name, Key: "schema", Msg: fmt.Sprintf("want %q, got %q", results.ResultsSchema, r.Schema)}
	}
	cf, err := open()
	if err != nil {
		return ShardPart{}, nil, err
	}
	rows := &shardRows{name: name, head: r, r: results.NewCaseReader(cf)}
	if check != nil {
		rows.check = check(r)
	}
	return ShardPart{Results: r, Cases: rows}, func() { cf.Close() }, nil
}

// shardRows names the shard file in a row's decoding error, and refuses a
// row no run could have written: both are input errors.
type shardRows struct {
	name  string
	head  *results.Results
	r     *results.CaseReader
	check *results.ShardCheck
}

// integrity refuses rows that no longer match the digest their run
// recorded.
func (s *shardRows) integrity() error {
	return results.CheckIntegrity(s.name, s.head, s.r.Integrity())
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
		return c, ok, errors.Join(s.check.Done(), s.integrity())
	}
	return c, ok, s.check.Row(c)
}

// OpenShards opens the results file of every shard of the suite's run
// (OpenShard), each checked against the manifest's pass threshold, and
// reports every file that cannot be used at once. The func closes them all.
func OpenShards(names []string, s *Suite, limits input.Limits) ([]ShardPart, func(), error) {
	var parts []ShardPart
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	var errs []error
	for _, name := range names {
		p, closeFile, err := OpenShard(name, limits, func(head *results.Results) *results.ShardCheck {
			return results.NewShardCheck(name, head, s.Manifest.Grader.PassThreshold)
		})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		closers = append(closers, closeFile)
		parts = append(parts, p)
	}
	if err := errors.Join(errs...); err != nil {
		closeAll()
		return nil, nil, err
	}
	return parts, closeAll, nil
}
