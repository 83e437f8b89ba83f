package main

import (
	"context"
	"fmt"
	"github.com/gradegate/gradegate/gate"

	"github.com/gradegate/gradegate/gate/compare"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/input"
)

// cmdCompare is the matched-cohort comparison of two results files. It
// reports and never gates: exit 0 unless the files cannot be used.
func (a *app) cmdCompare(ctx context.Context, args []string) outcome {
	fs := newFlagSet("compare", a.stderr)
	f := formatHuman
	fs.Var(&f, "format", "stdout format: human, json or markdown")
	var limits input.Limits
	registerLimits(fs, &limits)
	pos, done := a.parseFlags(fs, args)
	if done != nil {
		return *done
	}
	if len(pos) != 2 {
		return a.fail("compare", fmt.Errorf("%w: gradegate compare takes BASE.json and HEAD.json, got %d arguments", manifest.ErrInput, len(pos)))
	}
	// Each file is read twice as a stream: its header, then its rows.
	var heads [2]*results.Results
	var rows [2]results.CaseIter
	for i, name := range pos {
		p, closeFile, err := gate.OpenShard(name, limits, nil)
		if err != nil {
			return a.fail("compare", err)
		}
		defer closeFile()
		heads[i], rows[i] = p.Results, p.Cases
	}
	rep, err := compare.CompareStreams(heads[0], rows[0], heads[1], rows[1])
	if err != nil {
		return a.fail("compare", err)
	}
	switch f {
	case formatJSON:
		err = rep.WriteJSON(a.stdout)
	case formatMarkdown:
		err = rep.WriteMarkdown(a.stdout)
	default:
		err = rep.WriteText(a.stdout)
	}
	if err != nil {
		return a.fail("compare", err)
	}
	return outcome{code: exitPass}
}
