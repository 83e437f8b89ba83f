package main

import (
	"context"

	"github.com/gradegate/gradegate/gate"
	"github.com/gradegate/gradegate/manifest/input"
)

// cmdPin rewrites the manifest's sha256 fields to the current digests of the
// files it names (gate.Pin), and writes the manifest only when they changed.
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
	rep, pinned, err := gate.Pin(file, limits)
	if err != nil {
		return a.fail("pin", err)
	}
	if rep.Changed {
		// The manifest keeps its mode; pin never writes through a symlink.
		if err := a.writer().WriteBytes(file, 0o644, pinned); err != nil {
			return a.fail("pin", err)
		}
	}
	if err := a.writeFormatted(rep, f); err != nil {
		return a.fail("pin", err)
	}
	return outcome{code: exitPass}
}
