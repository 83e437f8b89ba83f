//go:build linux

package sandbox

import (
	"fmt"
	"os"

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

// Init is the first thing every gradegate process runs, the command and
// the test binaries that stand in for it alike. Started as the launcher
// (args[1] == LauncherArg) it applies the layers and execs the grader, and
// never returns: a launch that fails exits with its launcher code. Otherwise
// it makes the process non-dumpable (ProtectSelf) before any secret is read.
func Init(args []string) error {
	if len(args) > 1 && args[1] == LauncherArg {
		os.Exit(Launch(args[2:]))
	}
	return ProtectSelf()
}
