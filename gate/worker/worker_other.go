//go:build !linux

package worker

import (
	"context"
	"runtime"

	"github.com/gradegate/gradegate/gate/sandbox"
)

// This file is the worker pool on every system but Linux: the portable pool
// (PortablePool), for unsandboxed grading only. The Linux pool controls its
// grader processes with pidfds, pipe2 and waitid, under a sandbox made of
// seccomp, Landlock and per-grader uids, none of which exist here.

// Pool is the portable pool here.
type Pool = PortablePool

// New starts a portable pool when cfg.Sandbox is unsandboxed, and refuses
// (sandbox.ErrNotAvailable) otherwise: graders never run here under a
// Sandbox whose status claims a layer.
func New(ctx context.Context, cfg Config) (*Pool, error) {
	if cfg.Sandbox == nil || !cfg.Sandbox.Status().Unsandboxed {
		return nil, sandbox.NotAvailable(runtime.GOOS)
	}
	return NewPortable(ctx, cfg)
}
