package gate

import (
	"os"
	"path/filepath"
	"strings"
)

// repoTree is the repository tree of a manifest: the folder inside which
// gradegate reads a file the manifest names without pinning it, and outside
// which no error quotes a byte of a file. It is the git work tree that
// holds the manifest (the nearest folder, from the manifest's own up, with
// a .git entry: a folder, or the file of a linked work tree or submodule),
// or, when no folder above the manifest is in git, the manifest's folder.
// Paths are compared after symbolic links are resolved, so a link inside
// the tree that leads out of it is outside.
type repoTree struct {
	root string // absolute, links resolved
}

// treeOf finds the repository tree of the manifest at path.
func treeOf(manifestPath string) repoTree {
	dir, err := filepath.Abs(filepath.Dir(manifestPath))
	if err != nil {
		return repoTree{}
	}
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return repoTree{root: d}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return repoTree{root: dir}
		}
		d = parent
	}
}

// inside reports whether the file at path (as gradegate opens it, relative
// to the working directory) is in the tree. A file that does not exist is
// judged by its folder; an unknown tree holds nothing.
func (t repoTree) inside(path string) bool {
	if t.root == "" {
		return false
	}
	abs, err := filepath.Abs(filepath.FromSlash(path))
	if err != nil {
		return false
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	} else if d, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(d, filepath.Base(abs))
	}
	rel, err := filepath.Rel(t.root, abs)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
