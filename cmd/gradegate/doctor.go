package main

import (
	"context"
	"fmt"

	"github.com/gradegate/gradegate/gate"
	"github.com/gradegate/gradegate/gate/render"
	"github.com/gradegate/gradegate/gate/sandbox"
)

// cmdDoctor tries every sandbox layer on this machine.
func (a *app) cmdDoctor(ctx context.Context, args []string) outcome {
	fs := newFlagSet("doctor", a.stderr)
	f := formatHuman
	fs.Var(&f, "format", "stdout format: human, json or markdown")
	python := gate.DefaultPython(a.getenv)
	fs.StringVar(&python, "python", python, "Python interpreter to try the checks with")
	if _, done := a.parseFlags(fs, args); done != nil {
		return *done
	}
	// Doctor applies every layer the machine allows whatever New decides;
	// when New refuses (no network boundary), an unsandboxed Sandbox still
	// carries the launcher, and the report says what failed.
	sb, err := sandbox.New()
	if err != nil {
		fmt.Fprintf(a.stderr, "gradegate doctor: %v\n", err)
		if sb, err = sandbox.New(sandbox.WithUnsandboxed(true)); err != nil {
			return a.fail("doctor", err)
		}
	}
	exe := ""
	if py, err := a.host.Python(ctx, sb, python); err == nil {
		exe = py.Executable
	} else {
		fmt.Fprintf(a.stderr, "gradegate doctor: %v (Python checks skipped)\n", err)
	}
	rep := sandbox.Doctor(ctx, sb, exe)
	defer a.doctorImage(ctx, exe, f)
	var werr error
	switch f {
	case formatJSON:
		werr = render.JSON(a.stdout, rep)
	case formatMarkdown:
		werr = render.DoctorMarkdown(a.stdout, rep)
	default:
		werr = rep.WriteText(a.stdout)
	}
	if werr != nil {
		return a.fail("doctor", werr)
	}
	if !rep.NetworkBoundary {
		fmt.Fprintln(a.stderr, "gradegate doctor: the network boundary cannot be established here: `gradegate run` refuses to grade (exit 3) unless --unsandboxed")
	}
	if !rep.FilesystemBoundary {
		fmt.Fprintln(a.stderr, "gradegate doctor: the filesystem boundary (Landlock) cannot be established here: `gradegate run` refuses to grade (exit 3) unless --unsandboxed")
	}
	if !rep.NetworkBoundary || !rep.FilesystemBoundary {
		return outcome{code: exitInternal}
	}
	return outcome{code: exitPass}
}
