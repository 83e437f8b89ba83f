package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/gradegate/gradegate/gate"
	"github.com/gradegate/gradegate/gate/compare"
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
	var runs [2]*gate.Results
	for i, name := range pos {
		file, err := input.Open(hostFS{}, filepath.ToSlash(name), input.Results, limits.Of(input.Results))
		if err != nil {
			return a.fail("compare", manifest.ReadError(name, 0, "", "cannot read results", err))
		}
		runs[i], err = compare.Load(file)
		file.Close()
		if err != nil {
			return a.fail("compare", fmt.Errorf("%s: %w", name, err))
		}
	}
	rep := compare.Compare(runs[0], runs[1])
	var err error
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
