//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// UIDBlockSize is how many consecutive uids one block holds. A Sandbox that
// switches uids reserves one or more blocks for its lifetime, so no other
// gradegate process on the machine runs graders under the same uids: the
// kernel counts RLIMIT_NPROC per real uid across all processes
// (kernel/fork.c copy_process), and a scratch directory owned by a shared
// uid would be open to another run's graders.
const UIDBlockSize = 64

// maxUIDBlocks bounds the search: blocks 0-511 span uids 60000-92767, below
// the 100000 where /etc/subuid ranges for rootless containers start by
// default (useradd(8), SUB_UID_MIN).
const maxUIDBlocks = 512

// DefaultUIDLockDir is where a root gradegate keeps one lock file per uid
// block. /run is a tmpfs writable only by root on systemd and Debian
// systems, so no other user can plant files there.
const DefaultUIDLockDir = "/run/gradegate/uids"

// uidReservation is a block of uids held through flock(2) locks, which the
// kernel releases when the descriptors close, at the latest when the
// process dies.
type uidReservation struct {
	base  int
	slots int
	locks []*os.File
}

func (r *uidReservation) release() error {
	if r == nil {
		return nil
	}
	var errs []error
	for _, f := range r.locks {
		errs = append(errs, f.Close())
	}
	r.locks = nil
	return errors.Join(errs...)
}

// uidLockDir returns the directory for the lock files: dir when set, else
// DefaultUIDLockDir, or gradegate-uids in the temporary directory on a
// system without /run. It creates the directory and checks that it belongs
// to the caller alone, since whoever can write there can block or fake a
// reservation.
func uidLockDir(dir string) (string, error) {
	if dir == "" {
		dir = DefaultUIDLockDir
		if fi, err := os.Stat("/run"); err != nil || !fi.IsDir() {
			dir = filepath.Join(os.TempDir(), "gradegate-uids")
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("sandbox: uid lock directory: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return "", fmt.Errorf("sandbox: uid lock directory: %w", err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return "", fmt.Errorf("sandbox: uid lock directory %s is not a directory", dir)
	case int(st.Uid) != os.Geteuid():
		return "", fmt.Errorf("sandbox: uid lock directory %s belongs to uid %d, not %d", dir, st.Uid, os.Geteuid())
	case st.Mode&0o022 != 0:
		return "", fmt.Errorf("sandbox: uid lock directory %s (mode %#o) is writable by others", dir, st.Mode&0o777)
	}
	return dir, nil
}

// reserveUIDs reserves the first run of consecutive free blocks that holds
// slots uids. A block is free when its lock file is not locked and no task
// runs under one of its uids (graders of a crashed gradegate may outlive
// its lock), and when its uids are mapped in this user namespace.
func reserveUIDs(lockDir string, slots int) (*uidReservation, error) {
	blocks := (slots + UIDBlockSize - 1) / UIDBlockSize
	if blocks < 1 || blocks > maxUIDBlocks {
		return nil, fmt.Errorf("sandbox: %d slots: at most %d", slots, maxUIDBlocks*UIDBlockSize)
	}
	mapped := func(b int) bool {
		first := BaseUID + b*UIDBlockSize
		return idsMapped("/proc/self/uid_map", first, UIDBlockSize) && idsMapped("/proc/self/gid_map", first, UIDBlockSize)
	}
	if !mapped(0) {
		return nil, fmt.Errorf("%w: uid %d", ErrUIDsUnmapped, BaseUID)
	}
	dir, err := uidLockDir(lockDir)
	if err != nil {
		return nil, err
	}
	busy := busyUIDs(BaseUID, BaseUID+maxUIDBlocks*UIDBlockSize)
	r := &uidReservation{slots: blocks * UIDBlockSize}
	for b := 0; b+blocks <= maxUIDBlocks; b++ {
		r.base = BaseUID + b*UIDBlockSize
		ok := true
		for i := b; i < b+blocks && ok; i++ {
			if !mapped(i) || busy[i] || holdsNobody(i) {
				ok = false
				break
			}
			f, err := lockBlock(dir, i)
			if err != nil {
				_ = r.release()
				return nil, err
			}
			if f == nil {
				ok = false
				break
			}
			r.locks = append(r.locks, f)
		}
		if ok {
			return r, nil
		}
		_ = r.release()
	}
	return nil, fmt.Errorf("sandbox: no free block of %d uids from %d (lock files in %s)", r.slots, BaseUID, dir)
}

// holdsNobody reports whether block b holds 65534, the overflow uid that
// stands for "nobody" (/proc/sys/kernel/overflowuid), or 65535, which
// 16-bit interfaces read as -1.
func holdsNobody(b int) bool {
	first := BaseUID + b*UIDBlockSize
	return first <= 65535 && first+UIDBlockSize > 65534
}

// lockBlock takes block b's lock without waiting; nil, nil means another
// process holds it.
func lockBlock(dir string, b int) (*os.File, error) {
	// O_NOFOLLOW: the directory is the caller's alone, but a symlink there
	// must still not redirect the open. os.OpenFile adds O_CLOEXEC, so no
	// grader inherits the lock.
	f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("block-%d.lock", b)), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sandbox: uid block lock: %w", err)
	}
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		f.Close()
		return nil, nil
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("sandbox: uid block lock %s: %w", f.Name(), err)
	}
	return f, nil
}

// busyUIDs returns, by block number, the blocks in [lo, hi) that some task
// runs under: any of its real, effective, saved or filesystem uids.
func busyUIDs(lo, hi int) map[int]bool {
	busy := map[int]bool{}
	for _, p := range procIDs() {
		for _, uid := range p.uids[:p.nuids] {
			if uid >= lo && uid < hi {
				busy[(uid-BaseUID)/UIDBlockSize] = true
			}
		}
	}
	return busy
}

// statusIDs is what the sandbox reads of a process's /proc/PID/status: its
// "Uid:" line (real, effective, saved and filesystem uid) and its thread
// count.
type statusIDs struct {
	uids    [4]int
	nuids   int // how many of uids the line held
	threads int
}

// procIDs returns the statusIDs of every process; one that cannot be read
// (it has exited since the listing) is left out, and without /proc there
// is none. The kernel writes each status file when it is read, tens of
// microseconds a process: the list is read in two halves at once.
func procIDs() []statusIDs {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []string
	for _, e := range entries {
		if n := e.Name(); n[0] >= '0' && n[0] <= '9' {
			pids = append(pids, n)
		}
	}
	half := len(pids) / 2
	var first []statusIDs
	var wg sync.WaitGroup
	wg.Go(func() { first = readStatusIDs(pids[:half]) })
	rest := readStatusIDs(pids[half:])
	wg.Wait()
	return append(first, rest...)
}

// readStatusIDs reads the statusIDs of each pid.
func readStatusIDs(pids []string) []statusIDs {
	out := make([]statusIDs, 0, len(pids))
	buf := make([]byte, 4096) // a status file is about 1.5 KB
	for _, pid := range pids {
		b, err := readStatus(pid, buf)
		if err != nil {
			continue
		}
		out = append(out, parseStatusIDs(b))
	}
	return out
}

// readStatus reads /proc/pid/status into buf, or whole when buf cannot
// hold it.
func readStatus(pid string, buf []byte) ([]byte, error) {
	path := "/proc/" + pid + "/status"
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	n, err := unix.Read(fd, buf)
	unix.Close(fd)
	if err != nil {
		return nil, err
	}
	if n == len(buf) {
		return os.ReadFile(path)
	}
	return buf[:n], nil
}

// parseStatusIDs picks the "Uid:" and "Threads:" lines of a status file;
// a field it does not find stays zero.
func parseStatusIDs(status []byte) statusIDs {
	var p statusIDs
	for line := range bytes.Lines(status) {
		if v, ok := bytes.CutPrefix(line, []byte("Uid:")); ok {
			for _, f := range bytes.Fields(v) {
				uid, err := strconv.Atoi(string(f))
				if err != nil || p.nuids == len(p.uids) {
					break
				}
				p.uids[p.nuids] = uid
				p.nuids++
			}
		} else if v, ok := bytes.CutPrefix(line, []byte("Threads:")); ok {
			p.threads, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
		}
		if p.nuids > 0 && p.threads > 0 {
			break // the rest of the file is memory and signal state
		}
	}
	return p
}

// idsMapped reports whether ids [first, first+n) all lie in one extent of
// the id map at path (user_namespaces(7): each line is "inside outside
// count"). Without the file (no user namespaces) every id exists.
func idsMapped(path string, first, n int) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	for _, line := range strings.Split(string(b), "\n") {
		var inside, outside, count int
		if _, err := fmt.Sscan(line, &inside, &outside, &count); err != nil {
			continue
		}
		if first >= inside && first+n <= inside+count {
			return true
		}
	}
	return false
}
