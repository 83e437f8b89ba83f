package main

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"testing/fstest"

	"github.com/gradegate/gradegate/gate/render"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/input"
)

// pinReport is `gradegate pin --format json`.
type pinReport struct {
	Schema   string    `json:"schema"` // gradegate.pin/v1
	Manifest string    `json:"manifest"`
	Changed  bool      `json:"changed"`
	Files    []pinFile `json:"files"`
}

type pinFile struct {
	Section string `json:"section"` // dataset | samples | rubric | grader | grader.graders.NAME
	Path    string `json:"path"`
	SHA256  string `json:"sha256"`
	Was     string `json:"was"` // the digest the manifest held; "" when none
	Changed bool   `json:"changed"`
}

// cmdPin rewrites the manifest's sha256 fields to the current digests of the
// files it names, keeping the user's comments and layout. It reads the file
// keys leniently, so it also fills in a new manifest whose digests are still
// missing or placeholders; the result must then parse strictly.
func (a *app) cmdPin(ctx context.Context, args []string) outcome {
	fs := newFlagSet("pin", a.stderr)
	f := formatHuman
	fs.Var(&f, "format", "stdout format: human, json or markdown")
	var limits input.Limits
	registerLimits(fs, &limits)
	pos, done := a.parseFlags(fs, args)
	if done != nil {
		return *done
	}
	file, err := manifestArg("pin", pos)
	if err != nil {
		return a.fail("pin", err)
	}
	data, err := input.ReadFile(input.Host{}, filepath.ToSlash(file), input.Manifest, limits.Of(input.Manifest))
	if err != nil {
		return a.fail("pin", manifest.ReadError(file, 0, "", "cannot read manifest", err))
	}
	name := filepath.ToSlash(file)
	files, err := manifest.PinnedFiles(data, name)
	if err != nil {
		return a.fail("pin", err)
	}
	old := map[string]string{}
	if m, err := manifest.Parse(data, name); err == nil {
		old["dataset"], old["grader"] = m.Dataset.SHA256, m.Grader.SHA256
		if m.Samples != nil {
			old["samples"] = m.Samples.SHA256
		}
		if m.Rubric != nil {
			old["rubric"] = m.Rubric.SHA256
		}
		for _, sg := range m.Grader.Multi.PythonParts() {
			old[manifest.PartKey(sg.Name)] = sg.SHA256
		}
	}
	rep := pinReport{Schema: "gradegate.pin/v1", Manifest: name, Files: []pinFile{}}
	digests := map[string]string{}
	dir := path.Dir(name)
	sections := []string{"dataset", "samples", "rubric", "grader"}
	// A multi grader's further python sub-graders, each pinned in its own
	// section (grader.graders.NAME).
	for _, k := range slices.Sorted(maps.Keys(files)) {
		if !slices.Contains(sections, k) {
			sections = append(sections, k)
		}
	}
	for _, section := range sections {
		rel, ok := files[section]
		if !ok {
			continue
		}
		p := path.Join(dir, rel)
		kind := input.ForKey(section)
		if !slices.Contains(sections[:4], section) {
			kind = input.Grader
		}
		d, err := manifest.DigestFile(input.Host{}, p, kind, limits.Of(kind))
		if err != nil {
			return a.fail("pin", err)
		}
		digests[section] = d
		was := manifest.NormalizeDigest(old[section])
		rep.Files = append(rep.Files, pinFile{Section: section, Path: p, SHA256: d, Was: was, Changed: was != d})
	}
	out, err := manifest.Pin(data, digests)
	if err != nil {
		return a.fail("pin", fmt.Errorf("%s: %w", file, err))
	}
	rep.Changed = string(out) != string(data)
	// The pinned manifest must be usable as it is, and nothing is written
	// when it is not: a manifest with other problems keeps its old digests.
	if _, err := manifest.Load(pinnedFS{name: path.Clean(name), data: out}, name); err != nil {
		return a.fail("pin", err)
	}
	if rep.Changed {
		// The manifest keeps its mode; pin never writes through a symlink.
		if err := outputFor(a).WriteBytes(file, 0o644, out); err != nil {
			return a.fail("pin", err)
		}
	}
	switch f {
	case formatJSON:
		err = render.JSON(a.stdout, rep)
	case formatMarkdown:
		_, err = fmt.Fprintf(a.stdout, "| file | sha256 | state |\n|---|---|---|\n")
		for _, pf := range rep.Files {
			if err == nil {
				_, err = fmt.Fprintf(a.stdout, "| %s | `%s` | %s |\n", render.MarkdownCell(pf.Path), short(pf.SHA256), pinState(pf))
			}
		}
	default:
		for _, pf := range rep.Files {
			if err == nil {
				_, err = fmt.Fprintf(a.stdout, "%-8s %s  sha256:%s  %s\n", pf.Section, render.Text(pf.Path), pf.SHA256, pinState(pf))
			}
		}
	}
	if err != nil {
		return a.fail("pin", err)
	}
	return outcome{code: exitPass}
}

func pinState(pf pinFile) string {
	switch {
	case !pf.Changed:
		return "unchanged"
	case pf.Was == "":
		return "pinned"
	}
	return "pinned (was " + short(pf.Was) + ")"
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

// pinnedFS is the host file system with the manifest replaced by the bytes
// pin is about to write, so they are checked before anything is written.
type pinnedFS struct {
	name string
	data []byte
}

func (p pinnedFS) Open(name string) (fs.File, error) {
	if name != p.name {
		return input.Host{}.Open(name)
	}
	// The key is any valid fs path: the manifest's own may be absolute.
	return fstest.MapFS{"manifest": &fstest.MapFile{Data: p.data, Mode: 0o644}}.Open("manifest")
}
