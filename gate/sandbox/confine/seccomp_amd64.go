//go:build linux

package confine

import "golang.org/x/sys/unix"

// auditArch is the only architecture the filter admits. On x86-64 the
// i386 entry points (int 0x80, sysenter) report AUDIT_ARCH_I386 and use
// other syscall numbers, so a denylist written for x86-64 numbers would
// not match them: the filter kills such calls instead.
const auditArch = unix.AUDIT_ARCH_X86_64

// x32SyscallBit marks x32 ABI calls, which share AUDIT_ARCH_X86_64 but
// number syscalls from 0x40000000 (arch/x86/include/uapi/asm/unistd.h
// __X32_SYSCALL_BIT); the filter kills them too.
const x32SyscallBit = 0x40000000

// archDeniedSyscalls are the x86-64 entry points for what deniedSyscalls
// refuse that newer architectures (arm64's generic table) never had.
var archDeniedSyscalls = []struct {
	name string
	nr   uint32
}{
	{"chmod", unix.SYS_CHMOD},
	{"chown", unix.SYS_CHOWN},
	{"lchown", unix.SYS_LCHOWN},
	{"utime", unix.SYS_UTIME},
	{"utimes", unix.SYS_UTIMES},
	{"futimesat", unix.SYS_FUTIMESAT},
	{"inotify_init", unix.SYS_INOTIFY_INIT},
}
