package main

import (
	"time"

	"github.com/gradegate/gradegate/gate"
	"github.com/gradegate/gradegate/gate/render"
)

// actionsProgressEvery is how often a run in GitHub Actions logs a
// progress line: often enough to show a long run is alive, rarely enough
// to keep the log readable.
const actionsProgressEvery = 10 * time.Second

// progress picks how a grading run shows its progress on stderr: a bar on
// a terminal, a plain line every 10 seconds in GitHub Actions, and nothing
// with --format json or when stderr is not a terminal outside Actions.
func (a *app) progress(f format) gate.Progress {
	if f == formatJSON {
		return nil
	}
	if a.getenv("GITHUB_ACTIONS") == "true" {
		return render.NewLineProgress(a.stderr, a.now, actionsProgressEvery)
	}
	if !render.IsTerminal(a.tty) {
		return nil
	}
	return render.NewBarProgress(a.tty)
}
