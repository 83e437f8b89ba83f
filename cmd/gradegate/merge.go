package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/gradegate/gradegate/gate"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// cmdMerge combines shard results into one verdict.
func (a *app) cmdMerge(ctx context.Context, args []string) outcome {
	fs := newFlagSet("merge", a.stderr)
	f := gradeFlags{format: formatHuman}
	fs.Var(&f.format, "format", "stdout format: human, json or markdown")
	fs.StringVar(&f.results, "results", "", "write the merged results JSON to this file")
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
	if err := outputFor(a).Check(f.results); err != nil {
		return a.fail("merge", err)
	}
	s, err := gate.LoadSuite(path, f.limits)
	if err != nil {
		return a.fail("merge", err)
	}
	// Each shard is read twice as a stream: once for its header, once for
	// its rows, which the merge takes one at a time.
	var parts []gate.ShardPart
	var errs []error
	for _, name := range files {
		p, closeFile, err := gate.OpenShard(name, f.limits, func(head *results.Results) *results.ShardCheck {
			return results.NewShardCheck(name, head, s.Manifest.Grader.PassThreshold)
		})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		defer closeFile()
		parts = append(parts, p)
	}
	if err := errors.Join(errs...); err != nil {
		return a.fail("merge", err)
	}
	res, err := gate.MergeStream(s.Manifest, parts, gate.MergeOptions{SpoolDir: os.TempDir()})
	if err != nil {
		return a.fail("merge", err)
	}
	defer res.Close()
	return a.finish("merge", res, f)
}
