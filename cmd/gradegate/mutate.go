package main

import (
	"context"
	"fmt"
	"github.com/gradegate/gradegate/gate"
	"io"
	"strings"

	"github.com/gradegate/gradegate/gate/render"
	"github.com/gradegate/gradegate/gate/shadow"
	"github.com/gradegate/gradegate/manifest"
)

// cmdMutate mutation-tests the grader against its canaries and labeled cases:
// exit 0 when every mutant is killed (or the score meets
// gate.min_mutation_score), 1 otherwise.
func (a *app) cmdMutate(ctx context.Context, args []string) outcome {
	fs := newFlagSet("mutate", a.stderr)
	var f gradeFlags
	f.register(fs, a.getenv)
	pos, done := a.parseFlags(fs, args)
	if done != nil {
		return *done
	}
	path, err := manifestArg("mutate", pos)
	if err != nil {
		return a.fail("mutate", err)
	}
	if err := a.writer().Check(f.results); err != nil {
		return a.fail("mutate", err)
	}
	s, err := gate.LoadSuite(path, f.limits)
	if err != nil {
		return a.fail("mutate", err)
	}
	rep, err := a.host.Mutate(ctx, s, f.graderOptions())
	if err != nil {
		return a.fail("mutate", err)
	}
	if err := a.writeReport(rep, f); err != nil {
		return a.fail("mutate", err)
	}
	o := outcome{code: exitHold, report: posted(s.Manifest.Name, gate.MutationTitle(rep, s.Manifest.Gate.MinMutationScore), rep, f.results)}
	if rep.Passes(s.Manifest.Gate.MinMutationScore) {
		o.code = exitPass
	}
	return o
}

// writeReport writes a mutate or shadow report to stdout in the --format
// asked for and, with --results, its JSON to that file.
func (a *app) writeReport(rep report, f gradeFlags) error {
	err := a.writeFormatted(rep, f.format)
	if err == nil && f.results != "" {
		err = a.writer().WriteJSON(f.results, rep)
	}
	return err
}

// report is a document that writes itself in every --format: JSON as it
// marshals, markdown and text by its own methods.
type report interface {
	WriteText(io.Writer) error
	WriteMarkdown(io.Writer) error
}

// writeFormatted writes rep to stdout in format f.
func (a *app) writeFormatted(rep report, f format) error {
	switch f {
	case formatJSON:
		return render.JSON(a.stdout, rep)
	case formatMarkdown:
		return rep.WriteMarkdown(a.stdout)
	}
	return rep.WriteText(a.stdout)
}

// posted is what the action posts for a mutate or shadow report: title as
// the check run's title, the markdown report as its summary.
func posted(manifestName, title string, rep report, file string) *commandReport {
	var b strings.Builder
	if err := rep.WriteMarkdown(&b); err != nil {
		// Writing to memory cannot fail, but a failure still leaves a
		// summary that says so.
		b.Reset()
		fmt.Fprintf(&b, "gradegate could not render the report: %v\n", err)
	}
	return &commandReport{Manifest: manifestName, Title: title, Markdown: b.String(), File: file}
}

// cmdShadow grades the same cases and canaries with an old and the current
// grader source and lists every case whose score or class changed: exit 0
// when none did, 1 otherwise.
func (a *app) cmdShadow(ctx context.Context, args []string) outcome {
	fs := newFlagSet("shadow", a.stderr)
	var f gradeFlags
	f.register(fs, a.getenv)
	var basePath string
	fs.StringVar(&basePath, "base", "", "the old grader source to compare with (NAME=OLD.py for one python sub-grader of a multi grader with several), or for a model grader a manifest whose grader block is the base (required)")
	pos, done := a.parseFlags(fs, args)
	if done != nil {
		return *done
	}
	if basePath == "" {
		return a.fail("shadow", fmt.Errorf("%w: gradegate shadow needs --base OLD_GRADER.py", manifest.ErrInput))
	}
	path, err := manifestArg("shadow", pos)
	if err != nil {
		return a.fail("shadow", err)
	}
	if err := a.writer().Check(f.results); err != nil {
		return a.fail("shadow", err)
	}
	s, err := gate.LoadSuite(path, f.limits)
	if err != nil {
		return a.fail("shadow", err)
	}
	rep, err := a.host.Shadow(ctx, s, basePath, f.graderOptions(), f.limits)
	if err != nil {
		return a.fail("shadow", err)
	}
	return a.shadowDone(s, rep, f)
}

// shadowDone writes a shadow report and turns it into the exit code.
func (a *app) shadowDone(s *gate.Suite, rep *shadow.Report, f gradeFlags) outcome {
	if err := a.writeReport(rep, f); err != nil {
		return a.fail("shadow", err)
	}
	o := outcome{code: exitPass, report: posted(s.Manifest.Name, gate.ShadowTitle(rep), rep, f.results)}
	if rep.AnyChanged() {
		o.code = exitHold
	}
	return o
}
