// Command gradegate gates evaluation graders in CI. See README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	// First: the keeper starts the command before the rest initialises.
	_ "github.com/gradegate/gradegate/cmd/gradegate/internal/keeper"
	"github.com/gradegate/gradegate/gate"
	"github.com/gradegate/gradegate/gate/sandbox"
)

func main() {
	// The launcher and the keeper have run by now, from their packages'
	// initialisation (confine's and keeper's). Before anything else the
	// gate, which holds tokens in its environment, makes its
	// /proc/<pid>/environ and memory unreadable to every other process.
	if err := sandbox.Init(os.Args); err != nil {
		fmt.Fprintf(os.Stderr, "gradegate: %v\n", err)
		os.Exit(exitInternal)
	}
	// A keeper process outlives this one: whatever ends it (a Go runtime
	// failure, SIGKILL), no grader process survives it, and the exit is 3
	// unless run chose the code. The keeper started this process from
	// package keeper's init; Keep returns the exit that reports to it.
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
