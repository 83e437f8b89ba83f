package main

import (
	"github.com/gradegate/gradegate/gate/output"
)

// outputFor is the writer of a's command.
func outputFor(a *app) output.Writer {
	return output.Writer{Roots: a.outputRoots}
}
