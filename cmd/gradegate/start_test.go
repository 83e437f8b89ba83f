//go:build linux

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestStartBeforeInit: the launcher and the keeper do their work from
// their packages' initialisation, before the packages that come after them
// in Go's order initialise (about 240 packages, the libraries for YAML,
// HTTP and GitHub among them, in every process that gets that far). The
// launcher (package confine) initialises no library outside the standard
// library but golang.org/x/sys/unix; only the command itself, the keeper's
// child, initialises everything. The order follows from the import graph
// and the import paths, so a new import can silently undo it;
// GODEBUG=inittrace=1 shows it. The test binary cannot stand in here: it
// is never a keeper.
func TestStartBeforeInit(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the go command builds the binary under test: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "gradegate")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	const late = "init github.com/gradegate/gradegate/manifest/dataset/internal/jsonschema "
	traced := func(env []string, args ...string) (string, int) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(append(env, os.Environ()...), "GODEBUG=inittrace=1")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("%v: %v", args, err)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}

	// As the sandbox starts it (confine.Env).
	out, code := traced([]string{"GOGC=off"}, "__gradegate-launch", "not-a-spec")
	if code != 120 || !strings.Contains(out, "gradegate launcher: usage") {
		t.Fatalf("launcher with a bad spec: exit %d, output:\n%s\nwant exit 120 and its usage line", code, out)
	}
	for line := range strings.Lines(out) {
		pkg, ok := strings.CutPrefix(line, "init ")
		if !ok {
			continue
		}
		pkg, _, _ = strings.Cut(pkg, " ")
		if first, _, _ := strings.Cut(pkg, "/"); strings.Contains(first, ".") && pkg != "golang.org/x/sys/unix" {
			t.Errorf("the launcher initialised %s before it ran:\n%s", pkg, out)
		}
	}
	// Without GOGC=off first it would collect garbage, and refuses.
	out, code = traced(nil, "__gradegate-launch", "not-a-spec")
	if code != 120 || !strings.Contains(out, "gradegate launcher: started without GOGC=off") {
		t.Errorf("launcher without GOGC=off: exit %d, output:\n%s\nwant exit 120 and the line that says so", code, out)
	}

	out, code = traced(nil, "version")
	if code != 0 {
		t.Fatalf("version: exit %d:\n%s", code, out)
	}
	// Two processes trace their start, the keeper and the command; the
	// keeper stops at the keeper package.
	if n := strings.Count(out, "init runtime "); n != 2 {
		t.Errorf("version traced %d process starts, want 2 (the keeper and the command):\n%s", n, out)
	}
	if n := strings.Count(out, late); n != 1 {
		t.Errorf("the JSON Schema package initialised %d times, want once (the command's, not the keeper's):\n%s", n, out)
	}
}
