package gate

import (
	"bytes"
	"io/fs"
	"path"
	"time"
)

// loadedFS serves the suite's files as s.FS does, except the grader's
// Python sources, which it serves from the bytes the workers loaded
// (Suite.parts):
// the digest the gate checks is then the digest of what runs, and a grader
// that rewrites its own file once loaded (to the pinned content, say)
// changes nothing.
type loadedFS struct{ s *Suite }

func (l loadedFS) Open(name string) (fs.File, error) {
	if !l.isSource(name) {
		return l.s.FS.Open(name)
	}
	parts, err := l.s.parts()
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	for _, p := range parts {
		if p.path == name {
			return &memFile{Reader: bytes.NewReader(p.src), name: path.Base(name), size: int64(len(p.src))}, nil
		}
	}
	return l.s.FS.Open(name)
}

// isSource reports whether name is one of the grader's Python sources.
func (l loadedFS) isSource(name string) bool {
	if name == l.s.Manifest.Path(l.s.Manifest.Grader.Source) {
		return true
	}
	for _, sg := range l.s.Manifest.Grader.Multi.PythonParts() {
		if name == l.s.Manifest.Path(sg.Source) {
			return true
		}
	}
	return false
}

// memFile is a read-only file held in memory.
type memFile struct {
	*bytes.Reader
	name string
	size int64
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f, nil }
func (f *memFile) Close() error               { return nil }
func (f *memFile) Name() string               { return f.name }
func (f *memFile) Size() int64                { return f.size }
func (f *memFile) Mode() fs.FileMode          { return 0o444 }
func (f *memFile) ModTime() time.Time         { return time.Time{} }
func (f *memFile) IsDir() bool                { return false }
func (f *memFile) Sys() any                   { return nil }
