//go:build linux

package confine

import "golang.org/x/sys/unix"

// auditArch is the only architecture the filter admits; 32-bit ARM
// compat calls report AUDIT_ARCH_ARM and are killed.
const auditArch = unix.AUDIT_ARCH_AARCH64

// x32SyscallBit is an x86-64 notion; arm64 has no such ABI.
const x32SyscallBit = 0

// archDeniedSyscalls: arm64's generic table has only the *at forms that
// deniedSyscalls already lists.
var archDeniedSyscalls []struct {
	name string
	nr   uint32
}
