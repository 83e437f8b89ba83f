package main

import (
	"context"
	"fmt"
	"os"

	"github.com/gradegate/gradegate/gate"
	"github.com/gradegate/gradegate/manifest"
)

// cmdMerge combines shard results into one verdict.
func (a *app) cmdMerge(ctx context.Context, args []string) outcome {
	fs := newFlagSet("merge", a.stderr)
	f := gradeFlags{format: formatHuman}
	fs.Var(&f.format, "format", "stdout format: human, json or markdown")
	fs.StringVar(&f.results, "results", "", "write the merged results JSON to this file")
	fs.BoolVar(&f.wide, "wide", false, "human format: show every column of the slice and worst-cases tables (by default they fit 100 columns)")
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
	if err := a.writer().Check(f.results); err != nil {
		return a.fail("merge", err)
	}
	s, err := gate.LoadSuite(path, f.limits)
	if err != nil {
		return a.fail("merge", err)
	}
	// Each shard is read twice as a stream: once for its header, once for
	// its rows, which the merge takes one at a time.
	parts, closeShards, err := gate.OpenShards(files, s, f.limits)
	if err != nil {
		return a.fail("merge", err)
	}
	defer closeShards()
	res, err := gate.MergeStream(s.Manifest, parts, gate.MergeOptions{SpoolDir: os.TempDir()})
	if err != nil {
		return a.fail("merge", err)
	}
	defer res.Close()
	return a.finish("merge", res, f)
}
