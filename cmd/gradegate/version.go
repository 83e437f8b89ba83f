package main

import (
	"context"
	_ "embed"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/gradegate/gradegate/gate/buildinfo"
	"github.com/gradegate/gradegate/manifest"
)

// version and commit are stamped by release builds:
// -ldflags "-X main.version=v1.2.3 -X main.commit=<sha>". Empty otherwise.
var (
	version string
	commit  string
)

// embeddedVersion is the version of the source tree, cmd/gradegate/VERSION: the
// release workflow refuses a tag that differs from it, so a build from a
// checkout of a release says that release's version.
//
//go:embed VERSION
var embeddedVersion string

// imageEnv names the variable the Action's images set to the image they are
// (full or slim); gradegate reports it and lints graders against it.
const imageEnv = "GRADEGATE_IMAGE"

// currentVersion is the running binary's version.
func currentVersion() buildinfo.Version {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	return buildinfo.Resolve(version, commit, embeddedVersion, info)
}

func (a *app) cmdVersion(ctx context.Context, args []string) outcome {
	fs := newFlagSet("version", a.stderr)
	f := formatHuman
	fs.Var(&f, "format", "stdout format: human, json or markdown")
	pos, done := a.parseFlags(fs, args)
	if done != nil {
		return *done
	}
	if len(pos) > 0 {
		return a.fail("version", fmt.Errorf("%w: gradegate version takes no arguments, got %s", manifest.ErrInput, strings.Join(pos, " ")))
	}
	v := currentVersion()
	v.Image = a.getenv(imageEnv)
	if err := a.writeFormatted(v, f); err != nil {
		return a.fail("version", err)
	}
	return outcome{code: exitPass}
}
