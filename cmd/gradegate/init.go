package main

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gradegate/gradegate/gate/output"
	"github.com/gradegate/gradegate/gate/render"
	"github.com/gradegate/gradegate/manifest"
)

// starter is the suite `gradegate init` writes: a manifest whose digests are
// "TODO" until init pins them, an exact-match grader in OpenAI's style, a
// dataset with two slices and human labels, and its samples.
//
//go:embed starter/gradegate.yaml starter/grader.py starter/cases.jsonl starter/samples.jsonl
var starter embed.FS

// starterFiles are the starter's files in the order init writes them (the
// manifest last: it pins the others), with the manifest section whose
// digest each one is.
var starterFiles = []struct{ name, section string }{
	{"grader.py", "grader"},
	{"cases.jsonl", "dataset"},
	{"samples.jsonl", "samples"},
	{"gradegate.yaml", ""},
}

// initReport is `gradegate init --format json`.
type initReport struct {
	Schema string   `json:"schema"` // gradegate.init/v1
	Dir    string   `json:"dir"`
	Files  []string `json:"files"`
}

// cmdInit writes a starter suite into DIR (default: the current folder),
// already pinned, that validate and run pass as written. It never replaces
// a file: when any of the starter's files exists, it names every one and
// writes nothing (exit 2).
func (a *app) cmdInit(ctx context.Context, args []string) outcome {
	flags := newFlagSet("init", a.stderr)
	f := formatHuman
	flags.Var(&f, "format", "stdout format: human, json or markdown")
	pos, done := a.parseFlags(flags, args)
	if done != nil {
		return *done
	}
	dir := "."
	switch len(pos) {
	case 0:
	case 1:
		dir = pos[0]
	default:
		return a.fail("init", fmt.Errorf("%w: gradegate init takes one folder, got %d arguments", manifest.ErrInput, len(pos)))
	}
	contents, err := starterContents()
	if err != nil {
		return a.fail("init", err)
	}
	var errs []error
	var targets []string
	for _, sf := range starterFiles {
		p := filepath.Join(dir, sf.name)
		targets = append(targets, p)
		if _, err := os.Lstat(p); err == nil {
			errs = append(errs, output.Refuse(p, "exists; gradegate init writes a new suite and replaces nothing (choose an empty folder: gradegate init DIR)"))
		} else if !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("checking %s: %w", p, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return a.fail("init", err)
	}
	out := a.writer()
	for i, sf := range starterFiles {
		if err := out.WriteBytes(targets[i], 0o644, contents[sf.name]); err != nil {
			return a.fail("init", err)
		}
	}
	rep := initReport{Schema: "gradegate.init/v1", Dir: dir, Files: targets}
	manifestPath := targets[len(targets)-1]
	switch f {
	case formatJSON:
		err = render.JSON(a.stdout, rep)
	case formatMarkdown:
		_, err = fmt.Fprintf(a.stdout, "Wrote a starter suite in `%s`: %s.\n\nNext: `gradegate validate %s`, then `gradegate run %s`.\n",
			render.MarkdownCell(dir), render.MarkdownCell(fmt.Sprint(rep.Files)), render.MarkdownCell(manifestPath), render.MarkdownCell(manifestPath))
	default:
		for _, t := range targets {
			if err == nil {
				_, err = fmt.Fprintf(a.stdout, "wrote %s\n", render.Text(t))
			}
		}
		if err == nil {
			_, err = fmt.Fprintf(a.stdout, "next: gradegate validate %s && gradegate run %s\n", render.Text(manifestPath), render.Text(manifestPath))
		}
	}
	if err != nil {
		return a.fail("init", err)
	}
	return outcome{code: exitPass}
}

// starterContents returns the starter's files by name, the manifest with the
// digests of the others filled in as `gradegate pin` would.
func starterContents() (map[string][]byte, error) {
	out := map[string][]byte{}
	digests := map[string]string{}
	for _, sf := range starterFiles {
		b, err := starter.ReadFile("starter/" + sf.name)
		if err != nil {
			return nil, fmt.Errorf("the starter suite: %w", err)
		}
		out[sf.name] = b
		if sf.section != "" {
			sum := sha256.Sum256(b)
			digests[sf.section] = hex.EncodeToString(sum[:])
		}
	}
	pinned, err := manifest.Pin(out["gradegate.yaml"], digests)
	if err != nil {
		return nil, fmt.Errorf("pinning the starter suite: %w", err)
	}
	out["gradegate.yaml"] = pinned
	return out, nil
}
