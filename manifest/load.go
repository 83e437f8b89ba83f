package manifest

import (
	"io/fs"
	"path"
)

// Load reads the manifest name from fsys and parses it. File is set to name
// and Dir to its folder. When the canaries live in their own file, Load reads
// that file too and checks the canary set. A file that cannot be read is an
// *Error like any other unusable input.
func Load(fsys fs.FS, name string) (*Manifest, error) {
	// fs.FS rejects "./gradegate.yaml"; the user's spelling stays in File.
	data, err := fs.ReadFile(fsys, path.Clean(name))
	if err != nil {
		return nil, &Error{File: name, Msg: "cannot read manifest: " + err.Error(), Err: err}
	}
	m, err := Parse(data, name)
	if err != nil {
		return nil, err
	}
	m.File, m.Dir = name, path.Dir(name)
	if m.CanariesFile == "" {
		return m, nil
	}
	canariesKey := m.Line("canaries.path")
	file := m.Path(m.CanariesFile)
	if !fs.ValidPath(file) {
		return nil, &Error{File: name, Line: canariesKey, Key: "canaries.path", Msg: "points outside the folder gradegate reads: " + file}
	}
	data, err = fs.ReadFile(fsys, file)
	if err != nil {
		return nil, &Error{File: name, Line: canariesKey, Key: "canaries.path", Msg: "cannot read canaries file: " + err.Error(), Err: err}
	}
	list, errs := parseCanaries(data, file)
	if len(errs) == 0 {
		errs = checkCanaries(list, m.Grader.PassThreshold, name, m.Line("canaries"))
	}
	if err := joinErrors(errs); err != nil {
		return nil, err
	}
	m.Canaries = list
	return m, nil
}

// Path returns a path written in the manifest (relative to its folder) as a
// path in the file system the manifest was loaded from.
func (m *Manifest) Path(rel string) string {
	return path.Join(m.Dir, rel)
}
