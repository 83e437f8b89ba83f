// Command gradegate gates evaluation graders in CI. See README.md.
package main

import (
	"context"
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
