//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// What a scratch directory may hold besides its bytes. Every entry costs
// the walk that measures the directory (every diskInterval, and when a
// case ends) and an inode of the runner's file system, and an empty file
// has no blocks to count: a grader that made 600,000 of them held the
// inodes and kept the Guard walking for half a second at each measure.
// Past either bound the grader's processes are killed (sandbox_violation).
const (
	// MaxScratchEntries bounds the files, directories and links a scratch
	// directory holds, all levels together.
	MaxScratchEntries = 1 << 16
	// MaxScratchDepth bounds how deep its directories nest.
	MaxScratchDepth = 256
)

// scratchUsage is what one walk of a scratch directory found.
type scratchUsage struct {
	bytes   int64 // blocks allocated, each inode once
	entries int
	// problem, when set, is why the directory could not be measured
	// within the bounds, worded to follow "the grader's scratch
	// directory".
	problem string
}

type inodeKey struct{ dev, ino uint64 }

// scratchBounds are the bounds a walk holds a scratch directory to.
type scratchBounds struct{ entries, depth int }

var defaultScratchBounds = scratchBounds{entries: MaxScratchEntries, depth: MaxScratchDepth}

// measureScratch walks dir by descriptors, never by path: every entry is
// opened (O_PATH, not following a link) relative to the directory that
// lists it, and measured and descended through that descriptor. A path
// therefore never grows past PATH_MAX (a grader that nested directories
// deeper had its files skipped by a walk by path), and a name the grader
// swaps for a link between two calls cannot send the walk outside dir.
// A directory the grader made unreadable (mkdir with mode 0; it may not
// chmod) is made 0700 through /proc/self/fd, which reaches the inode the
// descriptor holds, never what a name points to by then.
func measureScratch(dir string, b scratchBounds) scratchUsage {
	w := scratchWalk{seen: map[inodeKey]struct{}{}, bounds: b}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return w.u
	case err != nil:
		w.fail("", err)
		return w.u
	}
	w.node(fd, "", 0)
	return w.u
}

type scratchWalk struct {
	seen   map[inodeKey]struct{}
	bounds scratchBounds
	u      scratchUsage
}

// fail records that name (an entry's own name, "" for the scratch
// directory itself) could not be measured. An entry that is gone was
// removed while the walk went on, and is not a failure.
func (w *scratchWalk) fail(name string, err error) {
	if errors.Is(err, unix.ENOENT) || w.u.problem != "" {
		return
	}
	if name == "" {
		w.u.problem = fmt.Sprintf("could not be measured (%v)", err)
		return
	}
	w.u.problem = fmt.Sprintf("could not be measured: %.200q: %v", name, err)
}

// node measures the inode pfd holds (an O_PATH descriptor, which node
// closes) and, for a directory, everything beneath it.
func (w *scratchWalk) node(pfd int, name string, depth int) {
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		w.fail(name, err)
		return
	}
	k := inodeKey{uint64(st.Dev), st.Ino}
	if _, ok := w.seen[k]; !ok {
		w.seen[k] = struct{}{}
		w.u.bytes += st.Blocks * 512
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return
	}
	if depth > w.bounds.depth {
		w.u.problem = fmt.Sprintf("nested directories more than %d deep", w.bounds.depth)
		return
	}
	f, err := openDirOf(pfd, false)
	if err != nil {
		w.fail(name, err)
		return
	}
	defer f.Close()
	dfd := int(f.Fd())
	for w.u.problem == "" {
		names, rerr := f.Readdirnames(512)
		for _, n := range names {
			w.u.entries++
			if w.u.entries > w.bounds.entries {
				w.u.problem = fmt.Sprintf("held more than %d files, directories and links", w.bounds.entries)
				return
			}
			cfd, err := unix.Openat(dfd, n, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				w.fail(n, err)
				continue
			}
			w.node(cfd, n, depth+1)
		}
		if errors.Is(rerr, io.EOF) || (rerr == nil && len(names) == 0) {
			return
		}
		if rerr != nil {
			w.fail(name, rerr)
			return
		}
	}
}

// openDirOf opens the directory pfd holds for reading. With force, or when
// it cannot be read, it is first made 0700 (the owner's, which gradegate
// is, or root) through /proc/self/fd: the inode pfd holds, whatever its
// name points to by then.
func openDirOf(pfd int, force bool) (*os.File, error) {
	open := func() (*os.File, error) {
		fd, err := unix.Openat(pfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		return os.NewFile(uintptr(fd), ""), nil
	}
	if !force {
		f, err := open()
		if !errors.Is(err, unix.EACCES) {
			return f, err
		}
	}
	if err := unix.Chmod("/proc/self/fd/"+strconv.Itoa(pfd), 0o700); err != nil {
		return nil, fmt.Errorf("making it readable: %w", err)
	}
	return open()
}

// removeAll removes dir and everything in it. When a first attempt fails
// (a grader may have made directories without permissions: mkdir with
// mode 0, or under umask 0777), it empties dir by descriptors: each
// directory in it is made 0700 through its descriptor, what it holds is
// moved up into dir, and it is removed, until dir is empty. That needs
// two descriptors whatever the depth, where a walk by path stops at
// PATH_MAX.
func removeAll(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	if err := flatten(dir); err != nil {
		return fmt.Errorf("sandbox: removing scratch directory: %w", err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("sandbox: removing scratch directory: %w", err)
	}
	return nil
}

// flatten empties dir as removeAll says.
func flatten(dir string) error {
	top, err := unix.Open(dir, unix.O_PATH|unix.O_NOFOLLOW|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(top)
	moved := 0
	for {
		tf, err := openDirOf(top, true)
		if err != nil {
			return err
		}
		names, err := tf.Readdirnames(-1)
		tf.Close()
		if err != nil {
			return err
		}
		if len(names) == 0 {
			return nil
		}
		progress := false
		for _, n := range names {
			ok, err := emptyInto(top, n, &moved)
			if err != nil {
				return err
			}
			progress = progress || ok
		}
		if !progress {
			return fmt.Errorf("%d entries could not be removed", len(names))
		}
	}
}

// emptyInto removes entry n of top: a file or link at once; a directory
// after moving what it holds up into top (under fresh names) for a later
// pass. It says whether anything changed.
func emptyInto(top int, n string, moved *int) (bool, error) {
	if err := unix.Unlinkat(top, n, 0); err == nil || errors.Is(err, unix.ENOENT) {
		return true, nil
	}
	pfd, err := unix.Openat(top, n, unix.O_PATH|unix.O_NOFOLLOW|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, fmt.Errorf("%.200q: %w", n, err)
	}
	defer unix.Close(pfd)
	f, err := openDirOf(pfd, true)
	if err != nil {
		return false, fmt.Errorf("%.200q: %w", n, err)
	}
	defer f.Close()
	inner, err := f.Readdirnames(-1)
	if err != nil {
		return false, fmt.Errorf("%.200q: %w", n, err)
	}
	for _, c := range inner {
		for {
			*moved++
			err := unix.Renameat2(int(f.Fd()), c, top, "gradegate-moved-"+strconv.Itoa(*moved), unix.RENAME_NOREPLACE)
			if errors.Is(err, unix.EEXIST) {
				continue
			}
			if err != nil && !errors.Is(err, unix.ENOENT) {
				return false, fmt.Errorf("%.200q: %w", n, err)
			}
			break
		}
	}
	if err := unix.Unlinkat(top, n, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
		return false, fmt.Errorf("%.200q: %w", n, err)
	}
	return true, nil
}
