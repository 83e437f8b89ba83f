package main

import (
	"context"
	"fmt"
	"io"

	"github.com/gradegate/gradegate/gate"
)

// outcome is what one command produced: its exit code and, for the commands
// that grade, the results the action reports.
type outcome struct {
	command string        // run, validate, canary, …
	results *gate.Results // nil when the command produces none
	code    int
}

// run is the whole command line tool; main only wires the process to it.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 && getenv("GITHUB_ACTIONS") == "true" {
		return runAction(ctx, getenv, stdout, stderr)
	}
	return execute(ctx, args, getenv, stdout, stderr).code
}

// execute runs one command line (without the program name).
func execute(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) outcome {
	fmt.Fprintln(stderr, "gradegate: not built yet")
	return outcome{code: exitInternal}
}
