package main

import (
	"fmt"

	"github.com/gradegate/gradegate/gate"
	"github.com/gradegate/gradegate/gate/compare"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/verdict"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/input"
)

// baselineInput is run --baseline: the base branch's results file and the
// manifest's gate.baseline rule it is judged by.
type baselineInput struct {
	file string
	rule manifest.Baseline
	name string // the manifest's name, which the base results must carry
}

// openBaseline opens the base results as a header and a stream of rows. A
// file that is not a results document, or whose manifest has another name,
// is an input error naming the file.
func openBaseline(b baselineInput, limits input.Limits) (gate.ShardPart, func(), error) {
	p, closeFile, err := openShard(b.file, limits, nil)
	if err != nil {
		return gate.ShardPart{}, nil, fmt.Errorf("--baseline: %w", err)
	}
	if got := p.Results.Manifest.Name; got != b.name {
		closeFile()
		return gate.ShardPart{}, nil, fmt.Errorf("--baseline: %w", &manifest.Error{File: b.file, Key: "manifest.name",
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
// run keeps them.
func applyBaseline(res *results.Results, b baselineInput, limits input.Limits) error {
	p, closeFile, err := openBaseline(b, limits)
	if err != nil {
		return err
	}
	defer closeFile()
	rows, err := res.AllRows()
	if err != nil {
		return err
	}
	rep, err := compare.CompareStreams(p.Results, p.Cases, res, rows)
	if err != nil {
		return fmt.Errorf("--baseline %s: %w", b.file, err)
	}
	bl := &results.Baseline{
		File:           b.file,
		Verdict:        p.Results.Verdict,
		Digests:        p.Results.Digests,
		Cohort:         rep.Cohort,
		PassRateChange: rep.PassRate.MatchedEffect,
		Added:          len(rep.Added),
		Removed:        len(rep.Removed),
		Flips:          make([]results.BaselineFlip, 0, len(rep.Flipped)),
	}
	for _, f := range rep.Flipped {
		bl.Flips = append(bl.Flips, results.BaselineFlip{CaseID: f.CaseID, Base: f.Base, Head: f.Head,
			OutputChanged: f.OutputChanged, Slices: nonNil(f.Slices)})
	}
	verdict.ApplyBaseline(res, bl, b.rule)
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
