package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/gradegate/gradegate/gate/sandbox"
	"github.com/gradegate/gradegate/gate/sandbox/sandboxtest"
	"github.com/gradegate/gradegate/gate/worker"
)

// TestMain lets the test binary act as the gradegate command inside
// testscript scripts. The sandbox re-executes this binary (os.Executable)
// as its launcher, which package confine's init runs before this.
func TestMain(m *testing.M) {
	// As main does.
	if err := sandbox.Init(os.Args); err != nil {
		panic(err)
	}
	// Only the tests reap orphans and choose the interpreter; gradegate run
	// as a command of a script leaves orphans to its parent, the test
	// process, and inherits its PATH.
	testscript.Main(sandboxtest.ReapingM{M: reachablePython{m}}, map[string]func(){
		"gradegate": func() {
			os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
		},
	})
}

// reachablePython runs the tests with, first on PATH, the python3 that
// gradegate would fall back to (see Host.Python): as root, graders run as
// other uids, which cannot execute an interpreter under a private home
// (pyenv's shims under /root), and every command would otherwise find that
// out again, at most a second a run. TestPythonFallback keeps the fallback
// itself tested.
type reachablePython struct{ m *testing.M }

func (r reachablePython) Run() int {
	if dir := fallbackPythonDir(); dir != "" {
		os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	return r.m.Run()
}

// fallbackPythonDir is the directory of the interpreter gradegate would
// grade with instead of python3 on PATH, or "" when it would grade with
// that one.
func fallbackPythonDir() string {
	sb, err := sandbox.New(sandbox.WithLauncher(os.Args[0]))
	if err != nil {
		return ""
	}
	defer sb.Close()
	if py, err := worker.ResolvePython(context.Background(), "python3"); err != nil || sb.CheckInterpreter(py.Executable) == nil {
		return ""
	}
	for _, p := range systemPythons {
		if sb.CheckInterpreter(p) == nil {
			return filepath.Dir(p)
		}
	}
	return ""
}

// systemPythons are where gradegate looks for a system interpreter when the
// one on PATH is out of the graders' reach.
var systemPythons = []string{"/usr/local/bin/python3", "/usr/bin/python3"}

// TestScripts runs the end-to-end scripts in testdata/script: the binary as a
// user runs it, in testscript's scrubbed environment.
func TestScripts(t *testing.T) {
	t.Parallel()
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			// Scripts reach the shipped example suites through $REPO.
			env.Setenv("REPO", repo)
			env.Setenv("NO_COLOR", "1")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// exits N PROG ARGS... runs PROG and checks its exit code is exactly N,
			// so a script can tell a hold (1) from unusable input (2) from a
			// tool failure (3).
			"exits": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) < 2 {
					ts.Fatalf("usage: exits CODE PROGRAM [ARGS...]")
				}
				want, err := strconv.Atoi(args[0])
				if err != nil {
					ts.Fatalf("exits: bad code %q", args[0])
				}
				got := 0
				if err := ts.Exec(args[1], args[2:]...); err != nil {
					var ee *exec.ExitError
					if !errors.As(err, &ee) {
						ts.Fatalf("exits: %v", err)
					}
					got = ee.ExitCode()
				}
				if got != want {
					ts.Fatalf("exit code %d, want %d", got, want)
				}
			},
		},
	})
}
