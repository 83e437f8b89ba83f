//go:build linux

package confine

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock is driven through golang.org/x/sys/unix rather than
// github.com/landlock-lsm/go-landlock: go-landlock enforces on every thread
// through kernel.org/.../libcap/psx before ABI 8, which gradegate does not
// need, because the launcher enforces on the one locked thread that then
// calls execve, and execve leaves only that thread (fs/exec.c de_thread).
// The ABI table below follows Documentation/userspace-api/landlock.rst.

// MaxLandlockABI is the newest Landlock ABI whose access rights gradegate
// knows; a newer kernel is used at this ABI.
const MaxLandlockABI = 10

// FSPolicy is the Landlock part of a Spec.
type FSPolicy struct {
	ABI       int      `json:"abi"`
	ReadExec  []string `json:"read_exec"`  // read and execute, beneath each path
	ReadWrite []string `json:"read_write"` // every handled right, beneath each path
}

// rulesetAttr is struct landlock_ruleset_attr up to the scoped field
// (ABI 6); the size passed to the kernel depends on the ABI, so an older
// kernel never sees fields it does not know.
type rulesetAttr struct {
	handledFS  uint64
	handledNet uint64
	scoped     uint64
}

const (
	readExecRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	// fileRights are the rights that apply to a file (not a directory);
	// a rule on a file with any other right is EINVAL.
	fileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

// handledFS returns the filesystem rights ABI abi can restrict: ABI 1 the
// thirteen basic ones, 2 adds REFER, 3 TRUNCATE, 5 IOCTL_DEV, 9
// RESOLVE_UNIX (connecting to pathname UNIX sockets).
func handledFS(abi int) uint64 {
	r := uint64(unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG | unix.LANDLOCK_ACCESS_FS_MAKE_SOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM)
	if abi >= 2 {
		r |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		r |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		r |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	if abi >= 9 {
		r |= unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX
	}
	return r
}

// handledNet returns the network rights ABI abi can restrict: TCP bind and
// connect from ABI 4, UDP from ABI 10. No rule grants any port, so these
// refuse TCP and UDP even if the seccomp filter were bypassed.
func handledNet(abi int) uint64 {
	var r uint64
	if abi >= 4 {
		r |= unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	if abi >= 10 {
		r |= unix.LANDLOCK_ACCESS_NET_BIND_UDP | unix.LANDLOCK_ACCESS_NET_CONNECT_SEND_UDP
	}
	return r
}

// scoped returns the IPC scopes of ABI abi: from ABI 6 a grader can neither
// signal processes outside its domain (gradegate, other graders) nor connect
// to abstract UNIX sockets created outside it.
func scoped(abi int) uint64 {
	if abi >= 6 {
		return unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	return 0
}

// KernelLandlockABI returns the kernel's Landlock ABI version, 0 when
// Landlock is missing or disabled (landlock_create_ruleset(2) with
// LANDLOCK_CREATE_RULESET_VERSION).
func KernelLandlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// buildRuleset creates a ruleset for pol and returns its descriptor.
// Paths that do not exist are skipped.
func buildRuleset(pol FSPolicy) (int, error) {
	if pol.ABI < 1 || pol.ABI > MaxLandlockABI {
		return -1, fmt.Errorf("unsupported ABI %d", pol.ABI)
	}
	attr := rulesetAttr{handledFS: handledFS(pol.ABI), handledNet: handledNet(pol.ABI), scoped: scoped(pol.ABI)}
	size := unsafe.Sizeof(attr.handledFS)
	switch {
	case pol.ABI >= 6:
		size = unsafe.Sizeof(attr)
	case pol.ABI >= 4:
		size = unsafe.Offsetof(attr.scoped)
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return -1, fmt.Errorf("landlock_create_ruleset (ABI %d): %w", pol.ABI, errno)
	}
	ruleset := int(fd)
	var errs []error
	for _, p := range pol.ReadExec {
		errs = append(errs, addPathRule(ruleset, p, readExecRights&attr.handledFS))
	}
	for _, p := range pol.ReadWrite {
		errs = append(errs, addPathRule(ruleset, p, attr.handledFS))
	}
	if err := errors.Join(errs...); err != nil {
		unix.Close(ruleset)
		return -1, err
	}
	return ruleset, nil
}

// addPathRule allows access beneath path (or to path, for a file).
func addPathRule(ruleset int, path string, access uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fileRights
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("landlock_add_rule %s: %w", path, errno)
	}
	return nil
}

// restrictSelf enforces the ruleset on the calling thread, which is the
// thread that will execve the grader. no_new_privs must already be set.
func restrictSelf(ruleset, abi int) error {
	_, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0)
	if errno != 0 {
		return fmt.Errorf("landlock_restrict_self (ABI %d): %w", abi, errno)
	}
	return nil
}
