//go:build unix

package input_test

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/gradegate/gradegate/manifest/input"
)

// TestOpenRefuses: every file that is not a regular file within its limit is
// refused before a byte is read, with a message that says what it is.
func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	link := func(name, target string) string {
		p := filepath.Join(dir, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	big := write("big.yaml", strings.Repeat("x", 2048))
	for _, tc := range []struct {
		name  string
		path  string
		limit int64
		want  string
	}{
		{"symlink to /dev/zero", link("zero", "/dev/zero"), 0, "is a character device, not a regular file"},
		{"fifo", fifo, 0, "is a FIFO (named pipe), not a regular file"},
		{"fifo through a symlink", link("tofifo", fifo), 0, "is a FIFO (named pipe), not a regular file"},
		{"socket", sock, 0, "is a socket, not a regular file"},
		{"directory", dir, 0, "is a directory, not a regular file"},
		{"over the limit", big, 1024, "input_too_large: is 2.0 KiB (2048 bytes), over the 1KiB limit of a manifest file (raise it with --max-input manifest=SIZE)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := input.ReadFile(input.Host{}, filepath.ToSlash(tc.path), input.Manifest, tc.limit)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ReadFile(%s) = %v, want %q", tc.path, err, tc.want)
			}
			if !errors.Is(err, input.ErrUnusable) {
				t.Errorf("%v does not match ErrUnusable", err)
			}
		})
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.yaml")
	if err := os.WriteFile(p, []byte("version: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(p, filepath.Join(dir, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{p, filepath.Join(dir, "link.yaml")} {
		got, err := input.ReadFile(input.Host{}, name, input.Manifest, 11)
		if err != nil || string(got) != "version: 1\n" {
			t.Errorf("ReadFile(%s) = %q, %v", name, got, err)
		}
	}
	if _, err := input.ReadFile(input.Host{}, filepath.Join(dir, "missing"), input.Manifest, 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
}

// TestReadStopsAtLimit: a file that grows after it was opened (the size
// Stat gave is no bound on what a read returns) fails at the limit.
func TestReadStopsAtLimit(t *testing.T) {
	fsys := fstest.MapFS{"d.jsonl": {Data: []byte(strings.Repeat("{}\n", 100))}}
	f, err := input.Open(fsys, "d.jsonl", input.Dataset, 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if b, err := io.ReadAll(f); err != nil || len(b) != 300 {
		t.Fatalf("ReadAll = %d bytes, %v", len(b), err)
	}
	g, err := input.Open(growingFS{}, "d.jsonl", input.Dataset, 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	_, err = io.ReadAll(g)
	if err == nil || !strings.Contains(err.Error(), "grew past the limit") {
		t.Fatalf("reading a file that grows: %v", err)
	}
}

// growingFS holds one file whose Stat says 3 bytes and whose reads never end.
type growingFS struct{}

func (growingFS) Open(string) (fs.File, error) { return growingFile{}, nil }

type growingFile struct{}

func (growingFile) Stat() (fs.FileInfo, error) {
	return fstest.MapFS{"d.jsonl": {Data: []byte("{}\n")}}.Stat("d.jsonl")
}
func (growingFile) Read(p []byte) (int, error) { return len(p), nil }
func (growingFile) Close() error               { return nil }

func TestLimits(t *testing.T) {
	var l input.Limits
	if got := l.Of(input.Dataset); got != input.DefaultLimit(input.Dataset) {
		t.Errorf("zero Limits: dataset %d", got)
	}
	if err := l.Set("dataset=16GiB,manifest=2M"); err != nil {
		t.Fatal(err)
	}
	if l.Of(input.Dataset) != 16<<30 || l.Of(input.Manifest) != 2<<20 {
		t.Errorf("after Set: %v", l.String())
	}
	for _, bad := range []string{"dataset", "nope=1M", "dataset=0", "dataset=2TiB", "dataset=12XB", "dataset=-1"} {
		if err := l.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
}
