//go:build linux

package confine

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Securebits (include/uapi/linux/securebits.h). With NOROOT, execve by uid 0
// no longer fills the permitted and effective sets from the bounding set
// (security/commoncap.c handle_privileged_root); NO_SETUID_FIXUP stops the
// kernel from adjusting capabilities when uids change; KEEP_CAPS stays off;
// NO_CAP_AMBIENT_RAISE forbids raising ambient capabilities. The _LOCKED
// bits make each setting permanent for the process and its children.
const (
	secbitNoRoot                  = 1 << 0
	secbitNoRootLocked            = 1 << 1
	secbitNoSetuidFixup           = 1 << 2
	secbitNoSetuidFixupLocked     = 1 << 3
	secbitKeepCapsLocked          = 1 << 5
	secbitNoCapAmbientRaise       = 1 << 6
	secbitNoCapAmbientRaiseLocked = 1 << 7

	// GraderSecurebits are the securebits of a grader that runs as uid 0.
	GraderSecurebits = secbitNoRoot | secbitNoRootLocked |
		secbitNoSetuidFixup | secbitNoSetuidFixupLocked |
		secbitKeepCapsLocked |
		secbitNoCapAmbientRaise | secbitNoCapAmbientRaiseLocked
)

// ThreadCaps returns the calling thread's effective, permitted and
// inheritable capability sets (capget(2), _LINUX_CAPABILITY_VERSION_3,
// whose two 32-bit words hold capabilities 0-31 and 32-63).
func ThreadCaps() (eff, prm, inh uint64, err error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return 0, 0, 0, fmt.Errorf("capget: %w", err)
	}
	join := func(lo, hi uint32) uint64 { return uint64(hi)<<32 | uint64(lo) }
	return join(data[0].Effective, data[1].Effective), join(data[0].Permitted, data[1].Permitted), join(data[0].Inheritable, data[1].Inheritable), nil
}

// lastCap returns the highest capability number the kernel knows.
func lastCap() int {
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			return n
		}
	}
	// Without /proc: PR_CAPBSET_READ answers EINVAL past the last one.
	n := 0
	for ; n < 64; n++ {
		if _, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(n), 0, 0, 0); err != nil {
			break
		}
	}
	return n - 1
}

// clearBoundingSet drops every capability from the bounding set, so that no
// later execve can grant one (capabilities(7), "Capability bounding set").
// Dropping needs CAP_SETPCAP, which only a privileged launcher has; an
// unprivileged one keeps its bounding set, which no_new_privs then makes
// inert: under it execve never raises the permitted set (security/
// commoncap.c cap_bprm_creds_from_file).
func clearBoundingSet(setpcap bool) error {
	last := lastCap()
	for c := 0; c <= last; c++ {
		in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0)
		if err != nil {
			return fmt.Errorf("PR_CAPBSET_READ %d: %w", c, err)
		}
		if in == 0 {
			continue
		}
		if !setpcap {
			return nil
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			return fmt.Errorf("PR_CAPBSET_DROP %d: %w", c, err)
		}
	}
	return nil
}

// dropCapabilities empties the calling thread's capability sets for good.
// The launcher calls it after the uid switch: a switch from uid 0 to
// another uid already clears the permitted and effective sets
// (capabilities(7), "Effect of user ID changes on capabilities"), but a
// launcher that stays uid 0 (no uid switch, a rootless container) would
// otherwise hand the grader CAP_DAC_OVERRIDE, CAP_KILL, CAP_SYS_ADMIN and
// the rest. Only the calling thread changes, which is enough: it is the one
// that calls execve, and execve ends every other thread (fs/exec.c
// de_thread).
func dropCapabilities() error {
	eff, prm, inh, err := ThreadCaps()
	if err != nil {
		return err
	}
	const capSetpcap = 1 << unix.CAP_SETPCAP
	if eff&capSetpcap != 0 && os.Geteuid() == 0 {
		// Setting securebits needs CAP_SETPCAP, so it comes before
		// capset; without it (a container run with --cap-drop ALL)
		// no_new_privs alone keeps execve from granting capabilities.
		cur, err := unix.PrctlRetInt(unix.PR_GET_SECUREBITS, 0, 0, 0, 0)
		if err != nil {
			return fmt.Errorf("PR_GET_SECUREBITS: %w", err)
		}
		if cur&GraderSecurebits != GraderSecurebits {
			if err := unix.Prctl(unix.PR_SET_SECUREBITS, uintptr(cur|GraderSecurebits), 0, 0, 0); err != nil {
				return fmt.Errorf("PR_SET_SECUREBITS: %w", err)
			}
		}
	}
	// Ambient capabilities survive execve of an unprivileged program;
	// EINVAL means a kernel before 4.3, which has none.
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("PR_CAP_AMBIENT_CLEAR_ALL: %w", err)
	}
	if eff|prm|inh != 0 {
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			return fmt.Errorf("capset: %w", err)
		}
	}
	if eff, prm, inh, err = ThreadCaps(); err != nil {
		return err
	}
	if eff|prm|inh != 0 {
		return fmt.Errorf("capabilities remain: effective %#x, permitted %#x, inheritable %#x", eff, prm, inh)
	}
	return nil
}

// hasSetpcap reports whether the calling thread may change its bounding set
// and securebits.
func hasSetpcap() bool {
	eff, _, _, err := ThreadCaps()
	return err == nil && eff&(1<<unix.CAP_SETPCAP) != 0
}
