//go:build !unix

package worker

import (
	"os"
	"os/exec"
	"syscall"
)

// startPortableGroup does nothing: there are no process groups here, so a
// kill reaches the worker but not a process the grader started.
func startPortableGroup(cmd *exec.Cmd) {}

// killPortableGroup kills the worker (TerminateProcess on Windows).
func killPortableGroup(p *os.Process) { _ = p.Kill() }

// signalPortableStack reports false: without SIGUSR1 a timed-out grader's
// stack cannot be asked for.
func signalPortableStack(p *os.Process) bool { return false }

// portableSignalName names a signal the way crash messages do.
func portableSignalName(s syscall.Signal) string { return s.String() }
