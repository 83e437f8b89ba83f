//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOthersCanRun tells, without a sandbox, whether uids that are neither
// owner nor group can run an interpreter file: every folder above it
// searchable and the file readable and executable, through a link too.
func TestOthersCanRun(t *testing.T) {
	tests := []struct {
		name    string
		dirMode os.FileMode // the folder holding the file
		mode    os.FileMode // the file
		link    bool        // reached through a link from an open folder
		ok      bool
	}{
		{name: "open folder, 0755 file", dirMode: 0o755, mode: 0o755, ok: true},
		{name: "private folder", dirMode: 0o700, mode: 0o755},
		{name: "file not executable by others", dirMode: 0o755, mode: 0o750},
		{name: "link into a private folder", dirMode: 0o700, mode: 0o755, link: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Not t.TempDir: its parent folder is private.
			open, err := os.MkdirTemp("", "gradegate-othersrun-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(open) })
			if err := os.Chmod(open, 0o755); err != nil {
				t.Fatal(err)
			}
			// The temporary folder's parents must be open for the others.
			for d := filepath.Dir(open); ; d = filepath.Dir(d) {
				fi, err := os.Stat(d)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Mode().Perm()&0o001 == 0 {
					t.Skipf("%s is not searchable by others", d)
				}
				if d == "/" {
					break
				}
			}
			dir := filepath.Join(open, "bin")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, "python3")
			if err := os.WriteFile(file, []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(file, tt.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, tt.dirMode); err != nil {
				t.Fatal(err)
			}
			path := file
			if tt.link {
				path = filepath.Join(open, "python3")
				if err := os.Symlink(file, path); err != nil {
					t.Fatal(err)
				}
			}
			err = OthersCanRun(path)
			if (err == nil) != tt.ok {
				t.Fatalf("OthersCanRun = %v, want ok %v", err, tt.ok)
			}
		})
	}
}
