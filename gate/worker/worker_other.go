//go:build !linux

package worker

import (
	"context"
	"fmt"
	"runtime"

	"github.com/gradegate/gradegate/gate"
	"github.com/gradegate/gradegate/gate/sandbox"
)

// This file is the worker pool on every system but Linux. Resolving the
// interpreter (ResolvePython) and running gradegate's own scripts
// (RunScript) work everywhere; grading does not yet: the pool controls its
// grader processes with Linux's pidfds, pipe2 and waitid, so New returns
// ErrNotAvailable.

// ErrNotAvailable means this operating system cannot run graders.
var ErrNotAvailable = fmt.Errorf("worker: grading is not available on %s: gradegate controls grader processes with Linux's pidfds and waitid; grade in the gradegate Action (a Linux container) or on Linux", runtime.GOOS)

// Isolation modes (manifest grader.isolation).
const (
	IsolationWorker = "worker"
	IsolationCase   = "case"
)

// Contracts (manifest grader.contract).
const (
	ContractSample = "sample"
	ContractBatch  = "batch"
)

// Defaults for zero Config fields.
const (
	DefaultOutputLimit  = 8 << 10
	DefaultRecycleAfter = 500
	DefaultTimeout      = 120
	DefaultMetric       = "score"
)

// Config is what a Pool needs to run one grader (see the Linux pool).
type Config struct {
	Source             []byte
	SourceName         string
	Contract           string
	Metric             string
	TimeoutSeconds     int
	MemoryMB           int
	Isolation          string
	Workers            int
	Python             Python
	Sandbox            *sandbox.Sandbox
	OutputLimit        int
	RecycleAfter       int
	LoadTimeoutSeconds int
	BatchSize          int
	HashSeed           string
}

// LoadError is a grader that cannot be loaded (see the Linux pool).
type LoadError struct {
	Err    gate.CaseError
	Output string
}

func (e *LoadError) Error() string {
	msg := fmt.Sprintf("grader failed to load (%s): %s", e.Err.Class, e.Err.Message)
	if e.Err.Line > 0 {
		msg += fmt.Sprintf(" (line %d)", e.Err.Line)
	}
	return msg
}

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
