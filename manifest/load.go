package manifest

import (
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/gradegate/gradegate/manifest/input"
)

// LoadOption changes how Load reads.
type LoadOption func(*loadConfig)

type loadConfig struct {
	limits input.Limits
	tree   *tree
}

// tree is the repository tree a manifest's unpinned files must be in.
type tree struct {
	root   string
	inside func(file string) bool
}

// WithTree has Load refuse every file the manifest names without pinning
// its digest (the schema, the canaries file, a samples file without
// samples.sha256) when inside says it is not in the repository tree, whose
// folder root names: such a file could be any file the runner can read
// (a path that climbs with ".." to a credentials file), and its parse errors
// would quote it. A pinned file outside the tree is read only once its bytes
// match the pin, which its content cannot be made to do.
func WithTree(root string, inside func(file string) bool) LoadOption {
	return func(c *loadConfig) { c.tree = &tree{root: root, inside: inside} }
}

// WithLimits sets the size limits of the files the suite reads (the
// manifest, its canaries file, and later the dataset and the rest, which
// read them from Manifest.Limits).
func WithLimits(l input.Limits) LoadOption {
	return func(c *loadConfig) { c.limits = l }
}

// Load reads the manifest name from fsys and parses it. File is set to name
// and Dir to its folder. When the canaries live in their own file, Load reads
// that file too and checks the canary set. A file that cannot be read is an
// *Error like any other unusable input.
//
// Every file goes through the input package: a manifest that is not a regular
// file, or is over its size limit, is refused before it is read.
func Load(fsys fs.FS, name string, opts ...LoadOption) (*Manifest, error) {
	var cfg loadConfig
	for _, o := range opts {
		o(&cfg)
	}
	// fs.FS rejects "./gradegate.yaml"; the user's spelling stays in File.
	data, err := input.ReadFile(fsys, path.Clean(name), input.Manifest, cfg.limits.Of(input.Manifest))
	if err != nil {
		return nil, ReadError(name, 0, "", "cannot read manifest", err)
	}
	m, err := Parse(data, name)
	if err != nil {
		return nil, err
	}
	m.File, m.Dir = name, path.Dir(name)
	m.Limits = cfg.limits
	if cfg.tree != nil {
		if err := m.checkTree(*cfg.tree); err != nil {
			return nil, err
		}
	}
	if m.CanariesFile == "" {
		return m, nil
	}
	canariesKey := m.Line("canaries.path")
	file := m.Path(m.CanariesFile)
	data, err = input.ReadFile(fsys, file, input.Canaries, m.Limits.Of(input.Canaries))
	if err != nil {
		// The other files the manifest names are checked too, so a second
		// path typo is reported in the same run.
		others := m.CheckFiles(fsys, "dataset.path", "dataset.schema", "samples.path", "rubric.path", "grader.source")
		return nil, errors.Join(ReadError(name, canariesKey, "canaries.path", "cannot read canaries file "+file, err), others)
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

// ReadError is the *Error of a file that could not be read: what says which
// file, and the reason follows (a FIFO, a file over its limit, a missing
// file), without the path the reason would repeat.
func ReadError(file string, line int, key, what string, err error) *Error {
	var pe *fs.PathError
	cause := err
	if errors.As(err, &pe) {
		cause = pe.Err
	}
	return &Error{File: file, Line: line, Key: key, Msg: fmt.Sprintf("%s: %v", what, cause), Err: err}
}

// Path returns a path written in the manifest as a path in the file system
// the manifest was loaded from. Every path key follows the one rule: it is
// relative to the folder holding the manifest, and joined to the manifest's
// path as it was given (absolute, ./x or ../x alike), so the same manifest
// names the same files whatever the working directory and however it was
// named. Path keys may climb with ".." (evals/x may use ../shared/cases.jsonl);
// an absolute path key is refused when the manifest is parsed.
func (m *Manifest) Path(rel string) string {
	return path.Join(m.Dir, rel)
}
