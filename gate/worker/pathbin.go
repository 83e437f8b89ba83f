//go:build linux

package worker

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A grader that runs `python` (subprocess.run(["python", "-c", ...]), an
// execution-based grader) finds the grading interpreter, as in OpenAI's
// image and the Action's: the pool makes a folder holding `python` and
// `python3`, first on the graders' PATH, each a two-line script that execs
// the interpreter by its own path. A script rather than a symbolic link:
// CPython finds a virtual environment's pyvenv.cfg beside the path it was
// started by, and a link from elsewhere would start the base interpreter
// without the environment's packages.

// commandNames are the names the folder answers to.
var commandNames = []string{"python", "python3"}

// newCommandDir makes the folder for interpreter, readable by every uid
// (the graders run as slot uids), and returns it.
func newCommandDir(interpreter string) (string, error) {
	dir, err := os.MkdirTemp("", "gradegate-bin-")
	if err != nil {
		return "", fmt.Errorf("worker: the python command folder: %w", err)
	}
	script := "#!/bin/sh\nexec " + shellQuote(interpreter) + " \"$@\"\n"
	for _, name := range commandNames {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			os.RemoveAll(dir)
			return "", fmt.Errorf("worker: the python command folder: %w", err)
		}
		// WriteFile's mode passes through the umask.
		if err := os.Chmod(filepath.Join(dir, name), 0o755); err != nil {
			os.RemoveAll(dir)
			return "", fmt.Errorf("worker: the python command folder: %w", err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("worker: the python command folder: %w", err)
	}
	return dir, nil
}

// shellQuote quotes s for sh: in single quotes, each quote in s closed,
// escaped and reopened.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
