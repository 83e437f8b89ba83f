// Package buildinfo says which build of gradegate is running: the release
// stamp, the module version of `go install`, or the source tree's VERSION
// file, with the commit where known.
package buildinfo

import (
	"fmt"
	"io"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version is what `gradegate version` reports.
type Version struct {
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

// Resolve works out the running binary's version: the release
// build's stamp first, then the module version of `go install …@vX`, then
// the VERSION file, marked +dirty when the checkout was modified. The commit
// comes from the stamp or the go command's VCS information.
func Resolve(stamped, stampedCommit, file string, info *debug.BuildInfo) Version {
	v := Version{Schema: "gradegate.version/v1", Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
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

// String is the one-line form every output shows: the version, and for a
// build from a checkout the commit where known: "v1.2.3",
// "v1.2.3+dirty (commit 0123456789ab)". A release's tag names its commit.
func (v Version) String() string {
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

// WriteText writes the line `gradegate version` prints.
func (v Version) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "gradegate %s\n", v)
	return err
}

// WriteMarkdown writes the version with the Go release and platform.
func (v Version) WriteMarkdown(w io.Writer) error {
	_, err := fmt.Fprintf(w, "gradegate `%s`, %s %s/%s\n", v, v.Go, v.OS, v.Arch)
	return err
}
