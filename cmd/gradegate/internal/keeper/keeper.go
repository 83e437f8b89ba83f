// Package keeper starts gradegate's keeper process (sandbox.Keep) from its
// initialisation. main imports it for that alone.
//
// A keeper's work is a subreaper, a child and a wait: it needs none of the
// program's other packages, and Go initialises those after this one (a
// package's dependencies first, then in the order of import paths): their
// initialisation is CPU the keeper would otherwise spend before it starts
// the command, on the critical path of every run. The command, its child,
// still initialises everything before main; TestStartBeforeInit checks
// both.
package keeper

import (
	"os"
	"testing"

	"github.com/gradegate/gradegate/gate/sandbox"
)

func init() {
	// A test binary that stands in for gradegate is never a keeper: its
	// tests and testscript's commands report no exit code to one.
	if testing.Testing() {
		return
	}
	sandbox.KeepFirst(os.Args, os.Stderr)
}
