package manifest

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/gradegate/gradegate/manifest/input"
)

// FileKeys are the manifest keys that name a file the suite reads, in the
// order a user reads the manifest.
var FileKeys = []string{"dataset.path", "dataset.schema", "samples.path", "rubric.path", "grader.source", "preprocess.source", "canaries.path"}

// FilePath returns the path written under a key of FileKeys, relative to the
// manifest's folder, or "" when the manifest names no file there.
func (m *Manifest) FilePath(key string) string {
	switch key {
	case "dataset.path":
		return m.Dataset.Path
	case "dataset.schema":
		return m.Dataset.Schema
	case "samples.path":
		if m.Samples != nil {
			return m.Samples.Path
		}
	case "rubric.path":
		if m.Rubric != nil {
			return m.Rubric.Path
		}
	case "grader.source":
		return m.Grader.Source
	case "preprocess.source":
		if m.Preprocess != nil {
			return m.Preprocess.Source
		}
	case "canaries.path":
		return m.CanariesFile
	}
	return ""
}

// unpinnedKeys are the keys of FileKeys whose file the manifest names
// without pinning its digest.
func (m *Manifest) unpinnedKeys() []string {
	keys := []string{"dataset.schema", "canaries.path"}
	if m.Samples != nil && m.Samples.SHA256 == "" {
		keys = append(keys, "samples.path")
	}
	return keys
}

// checkTree refuses the unpinned files outside the repository tree, every
// one at once.
func (m *Manifest) checkTree(t tree) error {
	var errs []error
	for _, key := range m.unpinnedKeys() {
		rel := m.FilePath(key)
		if rel == "" || t.inside(m.Path(rel)) {
			continue
		}
		errs = append(errs, &Error{File: m.File, Line: m.Line(key), Key: key, Msg: fmt.Sprintf(
			"%s is outside the repository tree (%s); gradegate reads a file outside it only when the manifest pins its digest, and %s has no sha256",
			m.Path(rel), t.root, key)})
	}
	return errors.Join(errs...)
}

// CheckFiles checks, without reading them, that the files the manifest
// names under keys (every key of FileKeys when none is given) can be opened
// as their kind: present, regular files, within their size limits. Every
// problem is reported, joined, one *Error per key at the line of the key, so
// two path typos show in one run rather than one per run.
func (m *Manifest) CheckFiles(fsys fs.FS, keys ...string) error {
	if len(keys) == 0 {
		keys = FileKeys
	}
	var errs []error
	for _, key := range keys {
		rel := m.FilePath(key)
		if rel == "" {
			continue
		}
		name := m.Path(rel)
		kind := input.ForKey(key)
		f, err := input.Open(fsys, name, kind, m.Limits.Of(kind))
		if err != nil {
			var pe *fs.PathError
			cause := err
			if errors.As(err, &pe) {
				cause = pe.Err // the path is named in the message
			}
			errs = append(errs, &Error{File: m.File, Line: m.Line(key), Key: key, Msg: fmt.Sprintf("cannot read %s: %v", name, cause), Err: err})
			continue
		}
		f.Close()
	}
	return errors.Join(errs...)
}
