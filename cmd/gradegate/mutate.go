package main

import (
	"context"
	"fmt"
	"github.com/gradegate/gradegate/gate"
	"io"
	"strings"

	"github.com/gradegate/gradegate/gate/mutate"
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
	if err := outputFor(a).Check(f.results); err != nil {
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
	o := outcome{code: exitHold, report: mutateReport(s.Manifest.Name, rep, s.Manifest.Gate.MinMutationScore, f.results)}
	if rep.Passes(s.Manifest.Gate.MinMutationScore) {
		o.code = exitPass
	}
	return o
}

// writeReport writes a mutate or shadow report to stdout in the --format
// asked for and, with --results, its JSON to that file.
func (a *app) writeReport(rep interface {
	WriteText(io.Writer) error
	WriteMarkdown(io.Writer) error
}, f gradeFlags) error {
	var err error
	switch f.format {
	case formatJSON:
		err = render.JSON(a.stdout, rep)
	case formatMarkdown:
		err = rep.WriteMarkdown(a.stdout)
	default:
		err = rep.WriteText(a.stdout)
	}
	if err == nil && f.results != "" {
		err = outputFor(a).WriteJSON(f.results, rep)
	}
	return err
}

// mutateReport is what the action posts for a mutation test: the score in
// the title, the markdown report as the summary.
func mutateReport(manifestName string, rep *mutate.Report, minScore *float64, file string) *commandReport {
	return &commandReport{Manifest: manifestName, Title: gate.MutationTitle(rep, minScore), Markdown: markdownOf(rep), File: file}
}

// shadowReport is what the action posts for a shadow comparison: how many
// cases and canaries changed in the title, the markdown report as the
// summary.
func shadowReport(manifestName string, rep *shadow.Report, file string) *commandReport {
	return &commandReport{Manifest: manifestName, Title: gate.ShadowTitle(rep), Markdown: markdownOf(rep), File: file}
}

// markdownOf renders a report's markdown to a string; writing to memory
// cannot fail, but a failure still leaves a summary that says so.
func markdownOf(r interface{ WriteMarkdown(io.Writer) error }) string {
	var b strings.Builder
	if err := r.WriteMarkdown(&b); err != nil {
		return fmt.Sprintf("gradegate could not render the report: %v\n", err)
	}
	return b.String()
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
	if err := outputFor(a).Check(f.results); err != nil {
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
	o := outcome{code: exitPass, report: shadowReport(s.Manifest.Name, rep, f.results)}
	if rep.AnyChanged() {
		o.code = exitHold
	}
	return o
}
