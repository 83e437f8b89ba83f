//go:build linux

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPythonFallback: as root, when python3 on PATH sits under a directory
// the grader uids cannot search (a version manager under /root), gradegate
// grades with a system interpreter they can execute, and says so.
func TestPythonFallback(t *testing.T) {
	system := rootWithSystemPython(t)
	// t.TempDir is private to root (mode 0700), like /root.
	private := filepath.Join(t.TempDir(), "bin")
	if err := os.Mkdir(private, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(system, filepath.Join(private, "python3")); err != nil {
		t.Fatal(err)
	}
	stderr := canaryWithPath(t, private)
	want := "(" + system + "): the grader uids cannot reach " + filepath.Join(private, "python3")
	if !strings.Contains(stderr, want) || strings.Count(stderr, "the grader uids cannot reach") != 1 {
		t.Errorf("stderr does not say once, briefly, that it grades with %s instead:\n%s", system, stderr)
	}
}

// TestPythonFallbackUnstarted: the default python3 that the grader uids
// cannot reach is not even started to be asked its version (it would not
// grade anyway): a python3 that leaves a mark when it runs leaves none, and
// gradegate grades with the system interpreter.
func TestPythonFallbackUnstarted(t *testing.T) {
	system := rootWithSystemPython(t)
	dir := t.TempDir() // mode 0700, like /root
	private := filepath.Join(dir, "bin")
	if err := os.Mkdir(private, 0o755); err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(dir, "started")
	script := "#!/bin/sh\necho started >> '" + mark + "'\nexec '" + system + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(private, "python3"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	stderr := canaryWithPath(t, private)
	if !strings.Contains(stderr, "("+system+"): the grader uids cannot reach "+filepath.Join(private, "python3")) {
		t.Errorf("stderr does not say it grades with %s:\n%s", system, stderr)
	}
	if b, err := os.ReadFile(mark); err == nil {
		t.Errorf("the unreachable python3 was started (%q)", b)
	}
}

// rootWithSystemPython skips unless the test runs as root (only then do
// graders run as other uids) on a machine with a system python3 the grader
// uids can execute, which it returns.
func rootWithSystemPython(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: only then do graders run as other uids")
	}
	t.Parallel()
	for _, p := range systemPythons {
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o005 == 0o005 {
			return p
		}
	}
	t.Skip("no system python3 (.ci/run installs one)")
	return ""
}

// canaryWithPath runs gradegate canary on the example with bin first on
// PATH (its python3 the default interpreter), wants exit 0, and returns
// its stderr.
func canaryWithPath(t *testing.T, bin string) string {
	t.Helper()
	example, err := filepath.Abs(filepath.Join("..", "..", exampleManifest))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(gradegateBinary(t), "canary", example)
	cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "TMPDIR=" + os.TempDir(), "HOME=/nonexistent", "NO_COLOR=1"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", ee.ExitCode(), stdout.String(), stderr.String())
	}
	return stderr.String()
}
