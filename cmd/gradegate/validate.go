package main

import (
	"context"

	"github.com/gradegate/gradegate/gate"
	"github.com/gradegate/gradegate/gate/render"
	"github.com/gradegate/gradegate/manifest/input"
)

// cmdValidate checks the manifest, the digests and the dataset contract
// without grading: exit 0 when clean, 1 when something would hold.
func (a *app) cmdValidate(ctx context.Context, args []string) outcome {
	fs := newFlagSet("validate", a.stderr)
	f := formatHuman
	fs.Var(&f, "format", "stdout format: human, json or markdown")
	python := gate.DefaultPython(a.getenv)
	fs.StringVar(&python, "python", python, "Python interpreter for the grader lint (env GRADEGATE_PYTHON)")
	var limits input.Limits
	registerLimits(fs, &limits)
	pos, done := a.parseFlags(fs, args)
	if done != nil {
		return *done
	}
	path, err := manifestArg("validate", pos)
	if err != nil {
		return a.fail("validate", err)
	}
	s, err := gate.LoadSuite(path, limits)
	if err != nil {
		return a.fail("validate", err)
	}
	v, err := a.host.Validate(ctx, s, python, a.getenv(imageEnv))
	if err != nil {
		return a.fail("validate", err)
	}
	if err := a.renderValidation(v, f); err != nil {
		return a.fail("validate", err)
	}
	if len(v.Findings) > 0 {
		return outcome{code: exitHold}
	}
	return outcome{code: exitPass}
}

func (a *app) renderValidation(v *render.Validation, f format) error {
	switch f {
	case formatJSON:
		return render.JSON(a.stdout, v)
	case formatMarkdown:
		return render.ValidationMarkdown(a.stdout, v, render.MarkdownOptions{})
	}
	return render.ValidationHuman(a.stdout, v, a.colorOptions())
}
