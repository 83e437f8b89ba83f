//go:build !linux

package worker

import (
	"context"
	"fmt"
	"runtime"

	"github.com/gradegate/gradegate/gate"
)

// This file is the worker pool on every system but Linux. Resolving the
// interpreter (ResolvePython) and running gradegate's own scripts
// (RunScript) work everywhere; grading does not yet: the pool controls its
// grader processes with Linux's pidfds, pipe2 and waitid, so New returns
// ErrNotAvailable.

// ErrNotAvailable means this operating system cannot run graders.
var ErrNotAvailable = fmt.Errorf("worker: grading is not available on %s: gradegate controls grader processes with Linux's pidfds and waitid; grade in the gradegate Action (a Linux container) or on Linux", runtime.GOOS)

// Pool is never made here: New refuses.
type Pool struct{}

// New returns ErrNotAvailable.
func New(ctx context.Context, cfg Config) (*Pool, error) { return nil, ErrNotAvailable }

// Sandbox reports that no layer is in force.
func (p *Pool) Sandbox() gate.Sandbox { return gate.Sandbox{UID: -1, Unsandboxed: true} }

// Close does nothing.
func (p *Pool) Close() error { return nil }

// Grade returns ErrNotAvailable.
func (p *Pool) Grade(ctx context.Context, tasks []gate.Task) ([]gate.Outcome, error) {
	return nil, ErrNotAvailable
}
