package sandbox

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// ProtectSelf makes the calling gradegate process non-dumpable
// (prctl(PR_SET_DUMPABLE, 0)), which puts its /proc/<pid>/environ, mem,
// maps and fd entries out of reach of every other process of the same uid
// that lacks CAP_SYS_PTRACE: the kernel's ptrace access check refuses a
// non-dumpable target (kernel/ptrace.c __ptrace_may_access). That matters
// when graders keep gradegate's uid (gradegate is not root) and Landlock,
// whose domain also blocks such access, is unavailable: without it a grader
// could read GITHUB_TOKEN from gradegate's environment, and New refuses
// with ErrSecretsExposed.
//
// Call it first thing in main, before secrets are read. Children are
// unaffected: execve makes a process dumpable again (fs/exec.c
// begin_new_exec), so the launcher and the graders behave as before. It
// also means gradegate itself writes no core dump.
func ProtectSelf() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: prctl(PR_SET_DUMPABLE, 0): %w", err)
	}
	return nil
}
