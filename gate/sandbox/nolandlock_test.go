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

// The test filters' instructions: a load of struct seccomp_data's word at
// off (nr at 0, the low half of args[n] at 16+8n), a jump that skips jt
// instructions when the word is k and jf when not, and a return.
const bpfOffNR = 0

func bpfLoad(off uint32) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off}
}

func bpfJEQ(k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: jt, Jf: jf, K: k}
}

func bpfRet(k uint32) unix.SockFilter { return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k} }

// denyLandlock installs, on every thread of the process, a seccomp filter
// under which the landlock_* syscalls fail with ENOSYS, as on a kernel
// built without Landlock.
func denyLandlock() error {
	f := []unix.SockFilter{
		bpfLoad(bpfOffNR),
		bpfJEQ(unix.SYS_LANDLOCK_CREATE_RULESET, 3, 0),
		bpfJEQ(unix.SYS_LANDLOCK_ADD_RULE, 2, 0),
		bpfJEQ(unix.SYS_LANDLOCK_RESTRICT_SELF, 1, 0),
		bpfRet(unix.SECCOMP_RET_ALLOW),
		bpfRet(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)),
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
