//go:build linux

package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// noLandlockEnv makes the test binary install denyLandlock's filter before
// anything else, so it and every process it starts see a kernel without
// Landlock. Only the test binary reads it.
const noLandlockEnv = "GRADEGATE_SANDBOX_TEST_NO_LANDLOCK"

// denyLandlock installs, on every thread of the process, a seccomp filter
// under which the landlock_* syscalls fail with ENOSYS, as on a kernel
// built without Landlock.
func denyLandlock() error {
	var p bpfProgram
	p.load(offNR)
	p.jump(unix.BPF_JEQ, unix.SYS_LANDLOCK_CREATE_RULESET, "enosys", "")
	p.jump(unix.BPF_JEQ, unix.SYS_LANDLOCK_ADD_RULE, "enosys", "")
	p.jump(unix.BPF_JEQ, unix.SYS_LANDLOCK_RESTRICT_SELF, "enosys", "")
	p.ret(unix.SECCOMP_RET_ALLOW)
	p.label("enosys")
	p.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
	f, err := p.assemble()
	if err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog))); errno != 0 {
		return fmt.Errorf("seccomp: %w", errno)
	}
	return nil
}
