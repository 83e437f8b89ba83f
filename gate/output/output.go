// Package output is the one writer of every file gradegate writes: written
// whole under a temporary name and renamed, never through a symlink, and,
// when roots are given, only inside them.
package output

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gradegate/gradegate/gate/render"
	"github.com/gradegate/gradegate/manifest"
)

// Writer is the one writer of every file gradegate writes: the results JSON
// of run, canary and merge, the reports of mutate and shadow, and the
// manifest pin rewrites.
//
// A pull request controls the repository the paths point into, so a write
// must not follow what it planted. The file is written to a temporary name
// in the target folder and renamed over the target once complete: a failed
// or interrupted write (a full disk) never leaves a half-written file, and
// the target keeps its old bytes. A symlink at the target is refused rather
// than followed or replaced (a committed shard-1.json -> ../../event.json
// would otherwise have gradegate, as root, overwrite a file of the runner).
// In the GitHub Action, paths must also resolve inside the
// workspace or the runner's temporary folder: the write goes through an os.Root there, which
// refuses a symlinked folder that leads out.
type Writer struct {
	// Roots are the folders a path must resolve inside; nil allows any.
	Roots []string
}

// Refuse is a target gradegate will not write: input the user can fix
// (exit 2), not a failure of the tool.
func Refuse(path, msg string) error {
	return &manifest.Error{File: path, Msg: msg}
}

// Check refuses a target that can never be written, before any work: a
// symlink, a folder or anything else that is not a regular file, or, in the
// Action, a path outside the workspace. A target that does not exist yet is
// fine, and so is no target ("": nothing will be written).
func (o Writer) Check(path string) error {
	if path == "" {
		return nil
	}
	_, _, err := o.place(path)
	if err != nil {
		return err
	}
	info, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return targetKind(path, info)
}

func targetKind(path string, info fs.FileInfo) error {
	switch t := info.Mode().Type(); {
	case t&fs.ModeSymlink != 0:
		return Refuse(path, "is a symbolic link; gradegate does not write through a link at the file it writes (remove it, or name the file it points at)")
	case t&fs.ModeDir != 0:
		return Refuse(path, "is a directory; name a file to write")
	case t != 0:
		return Refuse(path, "is not a regular file ("+t.String()+"); gradegate writes only regular files")
	}
	return nil
}

// place returns the folder to open as the root of the write and the path of
// the target inside it.
func (o Writer) place(path string) (root, rel string, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", fmt.Errorf("writing %s: %w", path, err)
	}
	if o.Roots == nil {
		return filepath.Dir(abs), filepath.Base(abs), nil
	}
	for _, r := range o.Roots {
		if rel, err := filepath.Rel(r, abs); err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return r, rel, nil
		}
	}
	return "", "", Refuse(path, "is outside the workspace; in GitHub Actions gradegate writes only inside GITHUB_WORKSPACE or RUNNER_TEMP")
}

// Write writes the file at path with what fill writes, atomically. perm is
// the mode of a new file; a file it replaces keeps its own.
func (o Writer) Write(path string, perm fs.FileMode, fill func(io.Writer) error) (err error) {
	rootDir, rel, err := o.place(path)
	if err != nil {
		return err
	}
	if o.Roots == nil {
		if err := os.MkdirAll(rootDir, 0o755); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	root, err := os.OpenRoot(rootDir)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer root.Close()
	if dir := filepath.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return refuseEscape(path, err)
		}
	}
	switch info, err := root.Lstat(rel); {
	case err == nil:
		if err := targetKind(path, info); err != nil {
			return err
		}
		perm = info.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return refuseEscape(path, err)
	}
	tmp := filepath.Join(filepath.Dir(rel), "."+filepath.Base(rel)+".tmp-"+rand.Text())
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return refuseEscape(path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			root.Remove(tmp)
		}
	}()
	if err := f.Chmod(perm); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := fill(f); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	// The bytes reach the disk before the name does, so a crash after the
	// rename cannot leave an empty file under it.
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := root.Rename(tmp, rel); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// refuseEscape turns os.Root's refusal of a path that leads out of it into
// an input error; any other failure stays the tool's.
func refuseEscape(path string, err error) error {
	if strings.Contains(err.Error(), "path escapes from parent") {
		return Refuse(path, "resolves outside the workspace through a symbolic link; gradegate does not follow it")
	}
	return fmt.Errorf("writing %s: %w", path, err)
}

// WriteJSON writes v as the indented JSON every results file holds.
func (o Writer) WriteJSON(path string, v any) error {
	write := func(w io.Writer) error { return render.JSON(w, v) }
	// A streamed run's results hold their case rows on disk, and write
	// them all themselves.
	if sw, ok := v.(interface{ WriteJSON(io.Writer) error }); ok {
		write = sw.WriteJSON
	}
	return o.Write(path, 0o644, write)
}

// WriteBytes writes data.
func (o Writer) WriteBytes(path string, perm fs.FileMode, data []byte) error {
	return o.Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
