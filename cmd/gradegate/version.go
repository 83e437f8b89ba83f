package main

import (
	"context"
	_ "embed"
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/gradegate/gradegate/gate/render"
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

// buildVersion is what `gradegate version` reports.
type buildVersion struct {
	Schema   string `json:"schema"`             // gradegate.version/v1
	Version  string `json:"version"`            // v1.2.3, or v1.2.3+dirty for a modified checkout
	Commit   string `json:"commit,omitempty"`   // the source commit, where known
	Modified bool   `json:"modified,omitempty"` // built from a checkout with uncommitted changes
	// Source says where Version came from: "release" (the release build's
	// -ldflags), "module" (the module version `go install …@v1.2.3`
	// records) or "source" (the VERSION file of a build from a checkout).
	Source string `json:"source"`
	Go     string `json:"go"`
	OS     string `json:"os"`
	Arch   string `json:"arch"`
	// Image is the Action image the binary runs in (full or slim); empty
	// outside them.
	Image string `json:"image,omitempty"`
}

// pseudoVersion matches the versions the go command makes up for a commit
// that is not a tagged release (v0.0.0-20260101120000-abcdef123456,
// v1.2.4-0.20260101120000-abcdef123456, v1.2.3-rc.1.0.20260101120000-…,
// and the +dirty it appends for a modified checkout): those are source builds.
var pseudoVersion = regexp.MustCompile(`[-.]\d{14}-[0-9a-f]{12}(\+dirty)?$|\+dirty$`)

// resolveVersion works out the running binary's version: the release
// build's stamp first, then the module version of `go install …@vX`, then
// the VERSION file, marked +dirty when the checkout was modified. The commit
// comes from the stamp or the go command's VCS information.
func resolveVersion(stamped, stampedCommit, file string, info *debug.BuildInfo) buildVersion {
	v := buildVersion{Schema: "gradegate.version/v1", Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if info != nil {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	switch {
	case stamped != "":
		v.Version, v.Source = stamped, "release"
		if stampedCommit != "" {
			v.Commit = stampedCommit
		}
	case info != nil && info.Main.Version != "" && info.Main.Version != "(devel)" && !pseudoVersion.MatchString(info.Main.Version):
		v.Version, v.Source = info.Main.Version, "module"
	default:
		v.Version, v.Source = strings.TrimSpace(file), "source"
		if v.Modified {
			v.Version += "+dirty"
		}
	}
	return v
}

// currentVersion is the running binary's version.
func currentVersion() buildVersion {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	return resolveVersion(version, commit, embeddedVersion, info)
}

// String is the one-line form every output shows: the version, and for a
// build from a checkout the commit where known: "v1.2.3",
// "v1.2.3+dirty (commit 0123456789ab)". A release's tag names its commit.
func (v buildVersion) String() string {
	s := v.Version
	if v.Commit != "" && v.Source == "source" {
		c := v.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		s += " (commit " + c + ")"
	}
	return s
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
	var err error
	v.Image = a.getenv(imageEnv)
	switch f {
	case formatJSON:
		err = render.JSON(a.stdout, v)
	case formatMarkdown:
		_, err = fmt.Fprintf(a.stdout, "gradegate `%s`, %s %s/%s\n", v, v.Go, v.OS, v.Arch)
	default:
		_, err = fmt.Fprintf(a.stdout, "gradegate %s\n", v)
	}
	if err != nil {
		return a.fail("version", err)
	}
	return outcome{code: exitPass}
}
