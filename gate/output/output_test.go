//go:build linux

package output

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/gradegate/gradegate/manifest"
)

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestOutputWrite: every file gradegate writes is complete or absent, never
// written through a symlink, and in the Action never outside the workspace.
func TestOutputWrite(t *testing.T) {
	failing := func(w io.Writer) error {
		// Half a document, then the disk is full.
		w.Write([]byte(`{"schema": "gradegate.results/v1", "cases": [`))
		return syscall.ENOSPC
	}
	data := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) (o Writer, target string)
		fill  func(io.Writer) error
		// want: "" for success; otherwise a part of the error. wantInput:
		// the error is the user's to fix (exit 2).
		want      string
		wantInput bool
		// after checks the folder.
		after func(t *testing.T, dir, target string)
	}{
		{
			name: "new file in a new folder",
			setup: func(t *testing.T, dir string) (Writer, string) {
				return Writer{}, filepath.Join(dir, "out", "results.json")
			},
			fill: data("new"),
			after: func(t *testing.T, dir, target string) {
				if got := readString(t, target); got != "new" {
					t.Errorf("target holds %q", got)
				}
			},
		},
		{
			name: "replacing keeps the mode",
			setup: func(t *testing.T, dir string) (Writer, string) {
				p := filepath.Join(dir, "gradegate.yaml")
				os.WriteFile(p, []byte("old"), 0o600)
				return Writer{}, p
			},
			fill: data("new"),
			after: func(t *testing.T, dir, target string) {
				st, _ := os.Stat(target)
				if readString(t, target) != "new" || st.Mode().Perm() != 0o600 {
					t.Errorf("target %q mode %v", readString(t, target), st.Mode().Perm())
				}
				if got := names(t, dir); !slices.Equal(got, []string{"gradegate.yaml"}) {
					t.Errorf("folder holds %v", got)
				}
			},
		},
		{
			name: "a failed write leaves the old file and no temporary",
			setup: func(t *testing.T, dir string) (Writer, string) {
				p := filepath.Join(dir, "results.json")
				os.WriteFile(p, []byte("old"), 0o644)
				return Writer{}, p
			},
			fill: failing,
			want: "no space left on device",
			after: func(t *testing.T, dir, target string) {
				if got := readString(t, target); got != "old" {
					t.Errorf("target holds %q, want the old bytes", got)
				}
				if got := names(t, dir); !slices.Equal(got, []string{"results.json"}) {
					t.Errorf("folder holds %v", got)
				}
			},
		},
		{
			name:  "a failed write of a new file leaves nothing",
			setup: func(t *testing.T, dir string) (Writer, string) { return Writer{}, filepath.Join(dir, "results.json") },
			fill:  failing,
			want:  "no space left on device",
			after: func(t *testing.T, dir, target string) {
				if got := names(t, dir); len(got) != 0 {
					t.Errorf("folder holds %v", got)
				}
			},
		},
		{
			name: "a planted symlink is refused",
			setup: func(t *testing.T, dir string) (Writer, string) {
				victim := filepath.Join(dir, "event.json")
				os.WriteFile(victim, []byte("victim"), 0o644)
				p := filepath.Join(dir, "shard-1.json")
				os.Symlink("event.json", p)
				return Writer{}, p
			},
			fill:      data("new"),
			want:      "is a symbolic link",
			wantInput: true,
			after: func(t *testing.T, dir, target string) {
				if got := readString(t, filepath.Join(dir, "event.json")); got != "victim" {
					t.Errorf("the link's target was written: %q", got)
				}
				if fi, err := os.Lstat(target); err != nil || fi.Mode()&os.ModeSymlink == 0 {
					t.Errorf("the link was replaced")
				}
			},
		},
		{
			name:      "a directory is refused",
			setup:     func(t *testing.T, dir string) (Writer, string) { return Writer{}, dir },
			fill:      data("new"),
			want:      "is a directory",
			wantInput: true,
		},
		{
			name: "outside the workspace in the Action",
			setup: func(t *testing.T, dir string) (Writer, string) {
				ws := filepath.Join(dir, "ws")
				os.Mkdir(ws, 0o755)
				return Writer{Roots: []string{ws}}, filepath.Join(dir, "elsewhere.json")
			},
			fill:      data("new"),
			want:      "is outside the workspace",
			wantInput: true,
		},
		{
			name: "a symlinked folder leading out of the workspace",
			setup: func(t *testing.T, dir string) (Writer, string) {
				ws := filepath.Join(dir, "ws")
				out := filepath.Join(dir, "runner")
				os.Mkdir(ws, 0o755)
				os.Mkdir(out, 0o755)
				os.Symlink(out, filepath.Join(ws, "results"))
				return Writer{Roots: []string{ws}}, filepath.Join(ws, "results", "shard-1.json")
			},
			fill:      data("new"),
			want:      "outside the workspace through a symbolic link",
			wantInput: true,
			after: func(t *testing.T, dir, target string) {
				if got := names(t, filepath.Join(dir, "runner")); len(got) != 0 {
					t.Errorf("wrote outside the workspace: %v", got)
				}
			},
		},
		{
			name: "inside the workspace in the Action",
			setup: func(t *testing.T, dir string) (Writer, string) {
				ws := filepath.Join(dir, "ws")
				os.Mkdir(ws, 0o755)
				return Writer{Roots: []string{ws}}, filepath.Join(ws, "results", "shard-1.json")
			},
			fill: data("new"),
			after: func(t *testing.T, dir, target string) {
				if got := readString(t, target); got != "new" {
					t.Errorf("target holds %q", got)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			o, target := tc.setup(t, dir)
			err := o.Write(target, 0o644, tc.fill)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("write: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("write = %v, want %q", err, tc.want)
			case tc.want != "" && errors.Is(err, manifest.ErrInput) != tc.wantInput:
				t.Errorf("write = %v: input error %v, want %v", err, errors.Is(err, manifest.ErrInput), tc.wantInput)
			}
			if tc.after != nil {
				tc.after(t, dir, target)
			}
		})
	}
}

// tinyDisk mounts a 64 KiB tmpfs and fills it, leaving old.json (4 KiB) in
// it; it skips unless the test may mount (root).
func tinyDisk(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount a small tmpfs to fill (needs root): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	if err := os.WriteFile(filepath.Join(dir, "old.json"), bytes.Repeat([]byte("o"), 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := f.Write(make([]byte, 1024)); err != nil {
			break
		}
	}
	f.Close()
	return dir
}

// TestOutputFullDisk: on a disk that is really full, every file gradegate
// writes (results, a command's report, the manifest pin rewrites) fails
// whole: the old file keeps its bytes and no half-written file remains.
func TestOutputFullDisk(t *testing.T) {
	dir := tinyDisk(t)
	big := map[string]string{"cases": strings.Repeat("x", 32<<10)}
	for _, target := range []string{"old.json", "new.json"} {
		err := Writer{}.WriteJSON(filepath.Join(dir, target), big)
		if !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("writeJSON(%s) on a full disk = %v, want ENOSPC", target, err)
		}
	}
	if err := (Writer{}).WriteBytes(filepath.Join(dir, "old.json"), 0o644, bytes.Repeat([]byte("p"), 32<<10)); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("writeBytes on a full disk = %v, want ENOSPC", err)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"filler", "old.json"}) {
		t.Errorf("the full disk holds %v, want only filler and old.json", got)
	}
	if got := readString(t, filepath.Join(dir, "old.json")); got != strings.Repeat("o", 4096) {
		t.Errorf("old.json changed: %d bytes", len(got))
	}
}
