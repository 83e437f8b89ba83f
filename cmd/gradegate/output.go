package main

import (
	"path/filepath"

	"github.com/gradegate/gradegate/gate/checkrun/action"
	"github.com/gradegate/gradegate/gate/output"
)

// outputFor is the writer of a's command.
func outputFor(a *app) output.Writer {
	return output.Writer{Roots: a.outputRoots}
}

// actionOutputRoots confines the files the Action writes to GITHUB_WORKSPACE
// and RUNNER_TEMP; without a workspace it confines nothing.
func actionOutputRoots(getenv func(string) string) func(*app) {
	return func(a *app) {
		if getenv("GITHUB_WORKSPACE") == "" {
			return
		}
		// As for the results file: the system's temporary folder stands in
		// for a RUNNER_TEMP that is unset or missing in the container.
		temp := action.TempDir(getenv("RUNNER_TEMP"))
		roots := []string{}
		for _, d := range []string{getenv("GITHUB_WORKSPACE"), temp} {
			if abs, err := filepath.Abs(d); err == nil {
				roots = append(roots, abs)
			}
		}
		a.outputRoots = roots
	}
}
