package gate

import (
	"fmt"
	"io"

	"github.com/gradegate/gradegate/gate/lint"
)

// Host is what a gate run may touch of the process that runs it: its
// environment (OPENAI_API_KEY, OPENAI_BASE_URL, GRADEGATE_PYTHON, …) and
// the stream it writes notes to. Nothing in gate reads the process
// environment or writes to os.Stderr behind it.
type Host struct {
	getenv func(string) string
	stderr io.Writer

	pythonNoted bool // the interpreter fallback was reported once already
	memoryNoted bool // an unenforced memory_mb was reported once already
	imageNoted  bool // the default image tag was reported once already
}

// runIdentity names the CI run that grades, for the shards' integrity:
// the GitHub Actions repository and run id, or "" outside one. merge
// refuses shards of different runs. The attempt is left out: re-running
// the failed jobs of a run gives them a new attempt while the shards that
// passed keep the first.
func (a *Host) runIdentity() string {
	repo, id := a.getenv("GITHUB_REPOSITORY"), a.getenv("GITHUB_RUN_ID")
	if id == "" {
		return ""
	}
	return repo + "/actions/runs/" + id
}

// NewHost is a Host reading getenv and writing notes to stderr.
func NewHost(getenv func(string) string, stderr io.Writer) *Host {
	return &Host{getenv: getenv, stderr: stderr}
}

// NoteImageTag says once, on stderr, which image a grader without
// image_tag gets.
func (a *Host) NoteImageTag(s *Suite) {
	if s.Manifest.Grader.Judge != nil || a.imageNoted {
		return
	}
	if note := lint.ImageTagNote(s.Manifest.Grader.ImageTag); note != "" {
		fmt.Fprintf(a.stderr, "gradegate: %s\n", note)
		a.imageNoted = true
	}
}
