// Command gradegate gates evaluation graders in CI. See README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/gradegate/gradegate/gate"
	"github.com/gradegate/gradegate/gate/sandbox"
)

func main() {
	// Before anything else: the sandbox re-executes this binary as its
	// launcher, and the gate, which holds tokens in its environment, makes
	// its /proc/<pid>/environ and memory unreadable to every other process.
	if err := sandbox.Init(os.Args); err != nil {
		fmt.Fprintf(os.Stderr, "gradegate: %v\n", err)
		os.Exit(exitInternal)
	}
	// A keeper process outlives this one: whatever ends it (a Go runtime
	// failure, SIGKILL), no grader process survives it, and the exit is 3
	// unless run chose the code.
	exit := sandbox.Keep(os.Args, os.Stderr)
	// Orphaned grader processes are collected at once (in the Action's
	// container gradegate is PID 1, and nothing else would).
	sandbox.ReapOrphans()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	gate.TuneGC(ctx, os.Getenv)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	exit(code)
}
