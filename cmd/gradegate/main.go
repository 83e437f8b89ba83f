// Command gradegate gates evaluation graders in CI. See README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/gradegate/gradegate/gate/sandbox"
)

func main() {
	// The sandbox re-executes this binary as its launcher; that path must not
	// touch anything else first.
	if len(os.Args) > 1 && os.Args[1] == sandbox.LauncherArg {
		os.Exit(sandbox.Launch(os.Args[2:]))
	}
	// The gate holds tokens in its environment: make /proc/<pid>/environ and
	// mem unreadable to every other process, graders of the same uid
	// included, before anything else runs.
	if err := sandbox.ProtectSelf(); err != nil {
		fmt.Fprintf(os.Stderr, "gradegate: %v\n", err)
		os.Exit(exitInternal)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
