//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// deepChain makes levels directories named name inside dir, one in the
// next, by descriptors (the path of the last is past PATH_MAX when
// levels*len(name) is), and writes size bytes to a file in the last.
// Each directory gets mode perm once what it holds is made.
func deepChain(t *testing.T, dir, name string, levels, size int, perm uint32) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	var fds []int
	for range levels {
		if err := unix.Mkdirat(fd, name, 0o700); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fds = append(fds, fd)
		fd = next
	}
	f, err := unix.Openat(fd, "data", unix.O_CREAT|unix.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := unix.Write(f, make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	unix.Close(f)
	fds = append(fds, fd)
	for i := len(fds) - 1; i > 0; i-- {
		// fds[i] is the directory named name inside fds[i-1].
		if err := unix.Fchmodat(fds[i-1], name, perm, 0); err != nil {
			t.Fatal(err)
		}
		unix.Close(fds[i])
	}
	unix.Close(fds[0])
}

// TestMeasureScratch: the walk counts what a walk by path skipped (files
// past PATH_MAX), each inode once, a link as itself and not what it points
// to, and stops at the bounds on entries and depth.
func TestMeasureScratch(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "big"), make([]byte, 4<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	// The bounds a Guard holds (65,536 entries, 256 levels) are these
	// smaller ones scaled, which keeps the test fast.
	small := scratchBounds{entries: 1000, depth: 30}
	tests := []struct {
		name        string
		make        func(t *testing.T, dir string)
		min, max    int64 // bytes
		wantProblem string
	}{
		{"empty", func(*testing.T, string) {}, 0, 64 << 10, ""},
		{"a file", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "f"), 1<<20)
		}, 1 << 20, 1<<20 + 64<<10, ""},
		{"past PATH_MAX", func(t *testing.T, dir string) {
			deepChain(t, dir, strings.Repeat("d", 200), 25, 2<<20, 0o700)
		}, 2 << 20, 2<<20 + 1<<20, ""},
		{"hard links once", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "f"), 1<<20)
			for _, n := range []string{"g", "h"} {
				if err := os.Link(filepath.Join(dir, "f"), filepath.Join(dir, n)); err != nil {
					t.Fatal(err)
				}
			}
		}, 1 << 20, 1<<20 + 64<<10, ""},
		{"a link to a file outside", func(t *testing.T, dir string) {
			if err := os.Symlink(filepath.Join(outside, "big"), filepath.Join(dir, "l")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(dir, "d")); err != nil {
				t.Fatal(err)
			}
		}, 0, 64 << 10, ""},
		{"too many entries", func(t *testing.T, dir string) {
			for i := range small.entries + 1 {
				f, err := os.Create(filepath.Join(dir, "e"+strconv.Itoa(i)))
				if err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
		}, 0, 64 << 20, "held more than 1000 files, directories and links"},
		{"too deep", func(t *testing.T, dir string) {
			deepChain(t, dir, "d", small.depth+1, 0, 0o700)
		}, 0, 64 << 20, "nested directories more than 30 deep"},
		{"deep enough", func(t *testing.T, dir string) {
			deepChain(t, dir, "d", small.depth, 0, 0o700)
		}, 0, 64 << 20, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.make(t, dir)
			u := measureScratch(dir, small)
			if u.problem != tt.wantProblem {
				t.Errorf("problem = %q, want %q", u.problem, tt.wantProblem)
			}
			if tt.wantProblem == "" && (u.bytes < tt.min || u.bytes > tt.max) {
				t.Errorf("bytes = %d, want %d to %d", u.bytes, tt.min, tt.max)
			}
		})
	}
}

// TestRemoveAllDeepUnreadable: directories without permissions nested
// past PATH_MAX are removed, and a link among them to a directory outside
// leaves that directory's mode as it was (a chmod by name followed it).
func TestRemoveAllDeepUnreadable(t *testing.T) {
	outside := t.TempDir()
	victim := filepath.Join(outside, "locked")
	if err := os.Mkdir(victim, 0o555); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "scratch")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, "y")); err != nil {
		t.Fatal(err)
	}
	deepChain(t, dir, strings.Repeat("d", 200), 25, 1<<10, 0)
	// flatten is what removeAll falls back on; as root os.RemoveAll alone
	// would succeed, so it is called directly.
	if err := flatten(dir); err != nil {
		t.Fatalf("flatten: %v", err)
	}
	left, err := os.ReadDir(dir)
	if err != nil || len(left) != 0 {
		t.Errorf("after flatten the directory holds %v (%v), want nothing", left, err)
	}
	if err := removeAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("scratch directory still there: %v", err)
	}
	if fi, err := os.Stat(victim); err != nil || fi.Mode().Perm() != 0o555 {
		t.Errorf("the directory outside is %v (%v), want mode 0555 as it was", fi.Mode(), err)
	}
}

func write(t *testing.T, path string, size int) {
	t.Helper()
	if err := os.WriteFile(path, make([]byte, size), 0o600); err != nil {
		t.Fatal(err)
	}
}
