package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gradegate/gradegate/manifest"
)

// cmdPin rewrites the manifest's sha256 fields to the current digests of the
// files it names, keeping the user's comments and layout.
func (a *app) cmdPin(ctx context.Context, args []string) outcome {
	fs := newFlagSet("pin", a.stderr)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return outcome{code: exitInput}
	}
	path, err := manifestArg("pin", pos)
	if err != nil {
		return a.fail("pin", err)
	}
	fsys := hostFS{}
	m, err := manifest.Load(fsys, filepath.ToSlash(path))
	if err != nil {
		return a.fail("pin", err)
	}
	digests := map[string]string{}
	files := map[string]string{"dataset": m.Dataset.Path, "grader": m.Grader.Source}
	if m.Samples != nil {
		files["samples"] = m.Samples.Path
	}
	if m.Rubric != nil && m.Rubric.Path != "" {
		files["rubric"] = m.Rubric.Path
	}
	old := map[string]string{"dataset": m.Dataset.SHA256, "grader": m.Grader.SHA256}
	if m.Samples != nil {
		old["samples"] = m.Samples.SHA256
	}
	if m.Rubric != nil {
		old["rubric"] = m.Rubric.SHA256
	}
	for _, section := range []string{"dataset", "samples", "rubric", "grader"} {
		rel, ok := files[section]
		if !ok {
			continue
		}
		d, err := manifest.DigestFile(fsys, m.Path(rel))
		if err != nil {
			return a.fail("pin", err)
		}
		digests[section] = d
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return a.fail("pin", &manifest.Error{File: path, Msg: "cannot read", Err: err})
	}
	out, err := manifest.Pin(data, digests)
	if err != nil {
		return a.fail("pin", fmt.Errorf("%s: %w", path, err))
	}
	for _, section := range []string{"dataset", "samples", "rubric", "grader"} {
		d, ok := digests[section]
		if !ok {
			continue
		}
		state := "unchanged"
		if manifest.NormalizeDigest(old[section]) != d {
			state = "pinned (was " + short(old[section]) + ")"
		}
		fmt.Fprintf(a.stdout, "%-8s %s  sha256:%s  %s\n", section, m.Path(files[section]), d, state)
	}
	if string(out) == string(data) {
		return outcome{code: exitPass}
	}
	// Write beside the manifest and rename, so an interrupted pin never leaves
	// a half-written manifest.
	tmp := path + ".pin.tmp"
	info, err := os.Stat(path)
	if err != nil {
		return a.fail("pin", err)
	}
	if err := os.WriteFile(tmp, out, info.Mode().Perm()); err != nil {
		return a.fail("pin", fmt.Errorf("writing %s: %w", tmp, err))
	}
	if err := os.Rename(tmp, path); err != nil {
		return a.fail("pin", fmt.Errorf("replacing %s: %w", path, err))
	}
	return outcome{code: exitPass}
}

// short abbreviates a digest for messages.
func short(d string) string {
	d = manifest.NormalizeDigest(d)
	if d == "" {
		return "none"
	}
	if len(d) > 12 {
		return d[:12] + "…"
	}
	return d
}
