//go:build linux

package confine

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// SetLimits sets each limit, soft and hard, so the grader cannot raise it
// again.
func SetLimits(limits []Rlimit) error {
	p, err := prepareLimits(limits)
	if err != nil {
		return err
	}
	for i := range p {
		if errno := p[i : i+1].set(); errno != 0 {
			return fmt.Errorf("setrlimit %s=%d: %w", p[i].name, p[i].want.Cur, errno)
		}
	}
	return nil
}

// preparedLimits are limits ready to be set without allocating.
type preparedLimits []preparedLimit

type preparedLimit struct {
	name     string
	resource int
	want     unix.Rlimit
}

// prepareLimits computes each limit's soft and hard values. A hard limit
// already below the wanted value is kept: the point is a ceiling, and an
// unprivileged process may not raise its hard limit.
func prepareLimits(limits []Rlimit) (preparedLimits, error) {
	p := make(preparedLimits, 0, len(limits))
	for _, l := range limits {
		var cur unix.Rlimit
		if err := unix.Getrlimit(l.Resource, &cur); err != nil {
			return nil, fmt.Errorf("getrlimit %s: %w", l.Name, err)
		}
		hard := min(max(l.Value, l.Hard), cur.Max)
		p = append(p, preparedLimit{name: l.Name, resource: l.Resource, want: unix.Rlimit{Cur: min(l.Value, hard), Max: hard}})
	}
	return p, nil
}

// set applies the limits with raw prlimit64 calls on this process, which
// allocate nothing; it returns the first failure.
func (p preparedLimits) set() unix.Errno {
	for i := range p {
		_, _, errno := unix.RawSyscall6(unix.SYS_PRLIMIT64, 0, uintptr(p[i].resource), uintptr(unsafe.Pointer(&p[i].want)), 0, 0, 0)
		if errno != 0 {
			return errno
		}
	}
	return 0
}
