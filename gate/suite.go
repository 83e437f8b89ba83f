package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/gradegate/gradegate/gate/judge"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gradegate/gradegate/gate/lint"
	"github.com/gradegate/gradegate/gate/multi"
	"github.com/gradegate/gradegate/gate/worker"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
	"github.com/gradegate/gradegate/manifest/input"
)

// Suite is a loaded manifest with the bytes its digests were checked against.
type Suite struct {
	Manifest *manifest.Manifest
	// FS opens paths exactly as the user wrote them: relative to the
	// working directory, absolute, or climbing with "..", every read
	// through the input package, which refuses anything but a regular file.
	FS     input.Host
	source []byte
	// preSource is the preprocessor's bytes, read once as source is.
	preSource []byte
	// partSources are a multi grader's further python sub-graders' bytes,
	// by sub-grader name, read once as source is; partsMu guards them, as
	// the lint reads them while the pools start.
	partsMu     sync.Mutex
	partSources map[string][]byte
	// tree is the manifest's repository tree (see repoTree).
	tree   repoTree
	python worker.Python // resolved by runner
	// models asks a multi grader's model sub-graders; every runner of the
	// suite shares it, so each request is asked once.
	models *multi.Models
	// broker makes a Python grader's ctx model calls for the run, and
	// memo keeps their answers for the stages that replay them.
	broker *judge.Broker
	memo   *judge.Memo
}

// LoadSuite loads the manifest at path.
func LoadSuite(path string, limits input.Limits) (*Suite, error) {
	fsys := input.Host{}
	tree := treeOf(path)
	m, err := manifest.Load(fsys, filepath.ToSlash(path), manifest.WithLimits(limits), manifest.WithTree(tree.root, tree.inside))
	if err != nil {
		return nil, err
	}
	return &Suite{Manifest: m, FS: fsys, tree: tree}, nil
}

// trusted refuses a grader source outside the repository tree whose bytes
// are not the pinned ones: it could be any file the runner can read, and
// Python's errors on loading it would quote its lines. Inside the tree a
// mismatch only holds the run, which still grades, so that a change can be
// tried before it is pinned.
func (s *Suite) trusted(name, key, pin string, src []byte) error {
	if s.tree.inside(name) {
		return nil
	}
	sum, _ := manifest.Digest(bytes.NewReader(src))
	if sum == strings.ToLower(manifest.NormalizeDigest(strings.TrimSpace(pin))) {
		return nil
	}
	return &manifest.Error{File: s.Manifest.File, Line: s.Manifest.Line(key), Key: key, Msg: fmt.Sprintf(
		"%s is outside the repository tree (%s) and its bytes are not the ones %s pins; gradegate loads a grader from outside the tree only when its digest matches", name, s.tree.root, strings.TrimSuffix(key, ".source")+".sha256")}
}

// loadCases reads the dataset and the samples whole and checks the dataset
// contract. The grader and the rubric, which are read later, are checked to
// be readable now, so every file problem of the run is reported at once.
func (s *Suite) loadCases() (*dataset.Set, error) {
	set, err := dataset.Load(s.FS, s.Manifest)
	if ferr := s.LaterFiles(); ferr != nil {
		return nil, errors.Join(err, ferr)
	}
	return set, err
}

// largeDatasetBytes is the dataset size from which a run starts every
// grader process with its pool (about 5,000 rows of typical size): below
// it, the processes beyond the first start only when cases wait for them,
// and a small suite of a fast grader is done before a second could load.
const largeDatasetBytes = 1 << 20

// largeDataset says whether the dataset file is at least largeDatasetBytes.
func (s *Suite) largeDataset() bool {
	fi, err := fs.Stat(s.FS, s.Manifest.Path(s.Manifest.Dataset.Path))
	return err == nil && fi.Size() >= largeDatasetBytes
}

// LaterFiles checks that the files read after the dataset, the rubric and
// the grader, can be read, without reading them: with the dataset's own
// problems they make every file problem of a run one report.
func (s *Suite) LaterFiles() error {
	return s.Manifest.CheckFiles(s.FS, "rubric.path", "grader.source", "preprocess.source")
}

// graderSource reads the grader once: these exact bytes are both the ones
// whose digest the gate checks and the ones the worker loads.
func (s *Suite) graderSource() ([]byte, error) {
	if s.source != nil {
		return s.source, nil
	}
	name := s.Manifest.Path(s.Manifest.Grader.Source)
	b, err := input.ReadFile(s.FS, name, input.Grader, s.Manifest.Limits.Of(input.Grader))
	if err != nil {
		return nil, manifest.ReadError(s.Manifest.File, s.Manifest.Line("grader.source"), "grader.source", "cannot read "+name, err)
	}
	if err := s.trusted(name, "grader.source", s.Manifest.Grader.SHA256, b); err != nil {
		return nil, err
	}
	s.source = b
	return b, nil
}

// part is one Python source of the grader: the grader's own (for a multi
// grader its first python sub-grader), or a further python sub-grader of a
// multi grader.
type part struct {
	// name is the sub-grader's name; "" for a python grader.
	name string
	// g is the grader the part runs as: its source, digest, image tag and
	// limits.
	g manifest.Grader
	// path is the source's path as the suite reads it; key the manifest
	// key that names it.
	path, key string
	src       []byte
}

// parts reads every Python source of the grader, the grader's own first;
// these exact bytes are the ones whose digests the gate checks and the ones
// the workers load.
func (s *Suite) parts() ([]part, error) {
	s.partsMu.Lock()
	defer s.partsMu.Unlock()
	src, err := s.graderSource()
	if err != nil {
		return nil, err
	}
	g := s.Manifest.Grader
	subs := g.Multi.PythonParts()
	first := part{g: g, path: s.Manifest.Path(g.Source), key: "grader.source", src: src}
	if len(subs) == 0 {
		return []part{first}, nil
	}
	first.name = subs[0].Name
	out := []part{first}
	for _, sg := range subs[1:] {
		p := part{name: sg.Name, g: g.Part(sg), path: s.Manifest.Path(sg.Source), key: manifest.PartKey(sg.Name) + ".source"}
		if p.src = s.partSources[sg.Name]; p.src == nil {
			b, err := input.ReadFile(s.FS, p.path, input.Grader, s.Manifest.Limits.Of(input.Grader))
			if err != nil {
				return nil, manifest.ReadError(s.Manifest.File, s.Manifest.Line(p.key), p.key, "cannot read "+p.path, err)
			}
			if err := s.trusted(p.path, p.key, sg.SHA256, b); err != nil {
				return nil, err
			}
			if s.partSources == nil {
				s.partSources = map[string][]byte{}
			}
			s.partSources[sg.Name], p.src = b, b
		}
		out = append(out, p)
	}
	return out, nil
}

// lint reads every Python source of the grader without running it (grade
// signature, size, imports outside the image tag, broad excepts returning
// credit, …). image is the Action image gradegate runs in
// (GRADEGATE_IMAGE).
func (s *Suite) lint(ctx context.Context, image string, opts ...lint.Option) ([]manifest.Finding, error) {
	return s.lintWith(ctx, s.python.Executable, image, opts...)
}

// lintWith is lint with the interpreter python, before s.python is settled.
func (s *Suite) lintWith(ctx context.Context, python, image string, opts ...lint.Option) ([]manifest.Finding, error) {
	parts, err := s.parts()
	if err != nil {
		return nil, err
	}
	opts = append(opts, lint.InImage(lint.ActionImage(image)))
	var all []manifest.Finding
	for _, p := range parts {
		fs, err := lint.Grader(ctx, python, p.src, p.path, p.g, opts...)
		if err != nil {
			return nil, fmt.Errorf("linting the grader %s: %w", p.path, err)
		}
		all = append(all, fs...)
	}
	pf, err := s.lintPreprocess(ctx, python)
	if err != nil {
		return nil, err
	}
	all = append(all, pf...)
	return append(all, lint.Scale(s.Manifest)...), nil
}

// PythonChecks are validate's checks of a Python grader: the lint, and
// whether the interpreter can import the image tag's packages. The two run
// at once, each in a process of its own.
func (s *Suite) PythonChecks(ctx context.Context, h *Host, python, image string) ([]manifest.Finding, error) {
	py, err := h.GradingPython(ctx, python)
	if err != nil {
		return nil, fmt.Errorf("the grader lint needs Python (--python, GRADEGATE_PYTHON): %w", err)
	}
	s.python = py
	var missing []lint.Package
	var pkgErr error
	var checking sync.WaitGroup
	if s.Manifest.Grader.Judge == nil {
		checking.Go(func() { missing, pkgErr = lint.MissingImagePackages(ctx, py.Executable, s.Manifest.Grader.ImageTag) })
	}
	var imported []string
	findings, err := s.lint(ctx, image, lint.ImportsInto(&imported), h.lintCache())
	checking.Wait()
	if err != nil {
		return nil, err
	}
	if pkgErr != nil {
		return nil, pkgErr
	}
	if f := lint.ImagePackagesFinding(py.Executable, s.Manifest, missing, imported); f != nil {
		findings = append(findings, *f)
	}
	return findings, nil
}

// preprocessor reads the manifest's preprocessor once, as graderSource
// reads the grader: these exact bytes are the ones every worker loads. nil
// when the manifest has none.
func (s *Suite) preprocessor() (*worker.Preprocess, error) {
	pre := s.Manifest.Preprocess
	if pre == nil {
		return nil, nil
	}
	s.partsMu.Lock()
	defer s.partsMu.Unlock()
	if s.preSource == nil {
		name := s.Manifest.Path(pre.Source)
		b, err := input.ReadFile(s.FS, name, input.Grader, s.Manifest.Limits.Of(input.Grader))
		if err != nil {
			return nil, manifest.ReadError(s.Manifest.File, s.Manifest.Line("preprocess.source"), "preprocess.source", "cannot read "+name, err)
		}
		if err := s.trusted(name, "preprocess.source", pre.SHA256, b); err != nil {
			return nil, err
		}
		s.preSource = b
	}
	return &worker.Preprocess{
		Source:         s.preSource,
		SourceName:     filepath.Base(pre.Source),
		Contract:       pre.Contract,
		TimeoutSeconds: pre.TimeoutSeconds,
		IDField:        s.Manifest.Dataset.Fields.ID,
	}, nil
}

// lintPreprocess reads the preprocessor without running it: it parses and
// defines the function its contract calls.
func (s *Suite) lintPreprocess(ctx context.Context, python string) ([]manifest.Finding, error) {
	pre, err := s.preprocessor()
	if pre == nil || err != nil {
		return nil, err
	}
	return lint.Preprocess(ctx, python, pre.Source, s.Manifest.Path(s.Manifest.Preprocess.Source), s.Manifest.Preprocess)
}
