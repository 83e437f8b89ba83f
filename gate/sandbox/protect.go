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

// init runs the probe: the launcher (package confine, whose
// initialisation runs every other launch) execs gradegate with LauncherArg
// and probeArg once it has applied the layers, and the probe reports what
// a grader would meet and exits.
func init() {
	if len(os.Args) > 2 && os.Args[1] == LauncherArg && os.Args[2] == probeArg {
		os.Exit(probeMain(os.Args[3:], os.Stdout))
	}
}

// Init is the first thing every gradegate process runs, the command and
// the test binaries that stand in for it alike: it makes the process
// non-dumpable (ProtectSelf) before any secret is read. A launcher never
// gets here (see init); args are for the other systems' Init, which
// refuses to act as one.
func Init(args []string) error {
	return ProtectSelf()
}
