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
	if os.Geteuid() != 0 {
		t.Skip("needs root: only then do graders run as other uids")
	}
	t.Parallel()
	system := ""
	for _, p := range systemPythons {
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o005 == 0o005 {
			system = p
			break
		}
	}
	if system == "" {
		t.Skip("no system python3 (.ci/run installs one)")
	}
	// t.TempDir is private to root (mode 0700), like /root.
	private := filepath.Join(t.TempDir(), "bin")
	if err := os.Mkdir(private, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(system, filepath.Join(private, "python3")); err != nil {
		t.Fatal(err)
	}
	example, err := filepath.Abs(filepath.Join("..", "..", exampleManifest))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(gradegateBinary(t), "canary", example)
	cmd.Env = []string{"PATH=" + private + ":/usr/bin:/bin", "TMPDIR=" + os.TempDir(), "HOME=/nonexistent", "NO_COLOR=1"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", ee.ExitCode(), stdout.String(), stderr.String())
	}
	want := "(" + system + "): the grader uids cannot reach " + filepath.Join(private, "python3")
	if !strings.Contains(stderr.String(), want) || strings.Count(stderr.String(), "the grader uids cannot reach") != 1 {
		t.Errorf("stderr does not say once, briefly, that it grades with %s instead:\n%s", system, stderr.String())
	}
}

// TestPythonFallbackUnstarted: the default python3 that the grader uids
// cannot reach is not even started to be asked its version (it would not
// grade anyway): a python3 that leaves a mark when it runs leaves none, and
// gradegate grades with the system interpreter.
func TestPythonFallbackUnstarted(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: only then do graders run as other uids")
	}
	t.Parallel()
	system := ""
	for _, p := range systemPythons {
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o005 == 0o005 {
			system = p
			break
		}
	}
	if system == "" {
		t.Skip("no system python3 (.ci/run installs one)")
	}
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
	example, err := filepath.Abs(filepath.Join("..", "..", exampleManifest))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(gradegateBinary(t), "canary", example)
	cmd.Env = []string{"PATH=" + private + ":/usr/bin:/bin", "TMPDIR=" + os.TempDir(), "HOME=/nonexistent", "NO_COLOR=1"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "("+system+"): the grader uids cannot reach "+filepath.Join(private, "python3")) {
		t.Errorf("stderr does not say it grades with %s:\n%s", system, stderr.String())
	}
	if b, err := os.ReadFile(mark); err == nil {
		t.Errorf("the unreachable python3 was started (%q)", b)
	}
}
