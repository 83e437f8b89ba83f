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
)

// TestMain lets the test binary act as the gradegate command inside
// testscript scripts, and as the sandbox launcher.
func TestMain(m *testing.M) {
	// As main does. The sandbox re-executes this binary (os.Executable) as
	// its launcher, a name under which testscript would run the tests.
	if err := sandbox.Init(os.Args); err != nil {
		panic(err)
	}
	// Only the tests reap orphans; gradegate run as a command of a script
	// leaves them to its parent, the test process.
	testscript.Main(sandboxtest.ReapingM{M: m}, map[string]func(){
		"gradegate": func() {
			os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
		},
	})
}

// TestScripts runs the end-to-end scripts in testdata/script: the binary as a
// user runs it, in testscript's scrubbed environment.
func TestScripts(t *testing.T) {
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
