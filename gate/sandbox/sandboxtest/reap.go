// Package sandboxtest helps tests that start sandboxed grader processes.
package sandboxtest

import "testing"

// TestingM is what testing.M does for Main, so a package's TestMain can
// wrap the M it hands to another harness (testscript.Main takes the same).
type TestingM interface {
	Run() int
}

// ReapingM is a TestingM whose Run first makes the test process reap the
// orphans of its process tree (ReapOrphans).
type ReapingM struct{ M TestingM }

// Run starts reaping orphans, then runs the tests.
func (r ReapingM) Run() int {
	ReapOrphans()
	return r.M.Run()
}

var _ TestingM = (*testing.M)(nil)
