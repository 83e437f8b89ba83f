package digest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"strings"

	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/input"
)

// DigestMismatch is one pinned file whose bytes differ from its pin.
type DigestMismatch struct {
	Name string // dataset | samples | grader | rubric | preprocess
	File string // path.Join(manifest dir, path as written)
	Key  string // the manifest key that pins it, e.g. "grader.sha256"
	Want string // "sha256:<hex>" from the manifest; "" when a required pin is missing
	Got  string // "sha256:<hex>" of the bytes, or "" when the results do not record it
	// Concealed: the file is outside the repository tree, so Got is not
	// told (Conceal).
	Concealed bool
}

// Conceal keeps the digest of every file outside the repository tree whose
// bytes are not the ones pinned (or that is not pinned) out of d and out
// of the mismatches: a pull request writes both the path and the pin, so
// the path may name any file the runner can read, and its digest would let
// guesses at a short secret in it be tested offline, and then pinned to have
// the file parsed. A file whose bytes match its pin tells no more than the
// pin the manifest already shows. inside says whether a file (as the
// mismatches name it) is in the tree; nil conceals nothing.
func Conceal(d *Digests, mismatches []DigestMismatch, inside func(file string) bool) {
	if inside == nil {
		return
	}
	for i := range mismatches {
		mm := &mismatches[i]
		if mm.Got == "" || inside(mm.File) {
			continue
		}
		mm.Got, mm.Concealed = "", true
		d.set(mm.Name, "")
	}
}

// pinnedFile is one file the manifest pins by digest.
type pinnedFile struct {
	name     string // results "digests" key
	path     string // as written in the manifest
	pin      string // manifest sha256, as written
	required bool   // a missing pin is a mismatch, not a skip
}

// pinnedFiles lists the files a run depends on. The canaries need only the
// grader and the rubric; the dataset and samples are read only when cases
// are graded.
func pinnedFiles(m *manifest.Manifest, withDataset bool) []pinnedFile {
	var files []pinnedFile
	if withDataset {
		files = append(files, pinnedFile{"dataset", m.Dataset.Path, m.Dataset.SHA256, true})
		if m.Samples != nil && m.Samples.Path != "" {
			// samples.sha256 is optional in the manifest: compared only when set.
			files = append(files, pinnedFile{"samples", m.Samples.Path, m.Samples.SHA256, false})
		}
	}
	if m.Grader.Judge == nil && m.Grader.Source != "" {
		// A model grader (and a multi grader without a python part) is
		// written in the manifest itself: it has no source file to pin,
		// and its digest is of its keys.
		files = append(files, pinnedFile{"grader", m.Grader.Source, m.Grader.SHA256, true})
	}
	// A multi grader's further python sub-graders are pinned each by its
	// own digest.
	for i, sg := range m.Grader.Multi.PythonParts() {
		if i > 0 {
			files = append(files, pinnedFile{manifest.PartKey(sg.Name), sg.Source, sg.SHA256, true})
		}
	}
	if m.Rubric != nil && m.Rubric.Path != "" {
		files = append(files, pinnedFile{"rubric", m.Rubric.Path, m.Rubric.SHA256, true})
	}
	if m.Preprocess != nil {
		// The canaries pass through the preprocessor too.
		files = append(files, pinnedFile{"preprocess", m.Preprocess.Source, m.Preprocess.SHA256, true})
	}
	return files
}

// CheckDigests hashes the files the manifest pins, read from fsys at
// path.Join(m.Dir, p), and compares each with its pin. withDataset false
// checks only what the canaries use (grader, rubric).
//
// A mismatch is a finding for the verdict (digest_mismatch), not an error.
// The error is for a file that cannot be read: an input error (exit 2) when
// it does not exist, otherwise the tool failed.
func CheckDigests(fsys fs.FS, m *manifest.Manifest, withDataset bool) (Digests, []DigestMismatch, error) {
	return CheckDigestsKnown(fsys, m, withDataset, Digests{})
}

// CheckDigestsKnown is CheckDigests for files some of whose digests are
// known already: the dataset's and the samples file's in known (the
// dataset reader hashes both as it checks their pins, before a line is
// parsed), "" for one that is not. A known digest stands for its file,
// which is not read again: at a million rows that is 290 MB.
func CheckDigestsKnown(fsys fs.FS, m *manifest.Manifest, withDataset bool, known Digests) (Digests, []DigestMismatch, error) {
	var d Digests
	var errs []error
	for _, f := range pinnedFiles(m, withDataset) {
		if sum := known.get(f.name); sum != "" && (f.name == "dataset" || f.name == "samples") {
			d.set(f.name, sum)
			continue
		}
		file := path.Join(m.Dir, f.path)
		kind := input.ForKey(f.name)
		if strings.HasPrefix(f.name, manifest.PartKey("")) {
			kind = input.Grader
		}
		sum, err := fileDigest(fsys, file, kind, m.Limits.Of(kind))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, &manifest.Error{File: file, Key: f.name, Msg: "file does not exist"})
			} else {
				errs = append(errs, fmt.Errorf("reading %s: %w", file, err))
			}
			continue
		}
		d.set(f.name, sum)
	}
	if len(errs) > 0 {
		return Digests{}, nil, errors.Join(errs...)
	}
	if parts := m.Grader.Multi.PythonParts(); len(parts) > 1 {
		// The results name every python part's digest, the first too.
		d.Graders[parts[0].Name] = d.Grader
	}
	if m.Grader.Judge != nil || m.Grader.Source == "" {
		d.Grader = manifest.GraderDigest(m.Grader)
	}
	return d, CompareDigests(m, d, withDataset), nil
}

// fileDigest hashes a file as a stream: a dataset of any size costs a
// buffer, not its size.
func fileDigest(fsys fs.FS, name string, kind input.Kind, limit int64) (string, error) {
	f, err := input.Open(fsys, name, kind, limit)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", &fs.PathError{Op: "read", Path: name, Err: err}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// CompareDigests compares recorded digests with the manifest's pins.
func CompareDigests(m *manifest.Manifest, d Digests, withDataset bool) []DigestMismatch {
	var out []DigestMismatch
	for _, f := range pinnedFiles(m, withDataset) {
		got := d.get(f.name)
		want := NormalizeDigest(f.pin)
		if want == "" && !f.required {
			continue
		}
		if want == "" || got != want {
			out = append(out, DigestMismatch{
				Name: f.name,
				File: path.Join(m.Dir, f.path),
				Key:  f.name + ".sha256",
				Want: want,
				Got:  got,
			})
		}
	}
	return out
}

// NormalizeDigest writes a sha256 digest as "sha256:<lowercase hex>", whether
// or not it was written with the prefix; "" stays "".
func NormalizeDigest(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return ""
	}
	return "sha256:" + strings.TrimPrefix(s, "sha256:")
}

func (d *Digests) set(name, v string) {
	if part, ok := strings.CutPrefix(name, manifest.PartKey("")); ok {
		if d.Graders == nil {
			d.Graders = map[string]string{}
		}
		d.Graders[part] = v
		return
	}
	switch name {
	case "dataset":
		d.Dataset = v
	case "samples":
		d.Samples = v
	case "grader":
		d.Grader = v
	case "rubric":
		d.Rubric = v
	case "preprocess":
		d.Preprocess = v
	}
}

func (d Digests) get(name string) string {
	if part, ok := strings.CutPrefix(name, manifest.PartKey("")); ok {
		return d.Graders[part]
	}
	switch name {
	case "dataset":
		return d.Dataset
	case "samples":
		return d.Samples
	case "grader":
		return d.Grader
	case "rubric":
		return d.Rubric
	case "preprocess":
		return d.Preprocess
	}
	return ""
}

// CountRows counts the non-blank lines of a JSON Lines file, without
// decoding them: the number of rows a stream will yield (0 when the file
// cannot be read). A line counts from its first byte that is not a space,
// tab or carriage return; the rest of it is skipped to its newline with
// bytes.IndexByte, so a file of a million rows is counted at the speed
// memory is read, not a byte at a time.
func CountRows(fsys fs.FS, name string) int {
	f, err := fsys.Open(name)
	if err != nil {
		return 0
	}
	defer f.Close()
	buf := make([]byte, 256<<10)
	rows, inLine := 0, false
	for {
		n, err := f.Read(buf)
		for b := buf[:n]; len(b) > 0; {
			if inLine {
				nl := bytes.IndexByte(b, '\n')
				if nl < 0 {
					break // the line goes on in the next read
				}
				b, inLine = b[nl+1:], false
				continue
			}
			switch b[0] {
			case '\n', ' ', '\t', '\r':
			default:
				rows++
				inLine = true
			}
			b = b[1:]
		}
		if err != nil {
			return rows
		}
	}
}

// Digests are the "sha256:<hex>" digests of the bytes a run used.
type Digests struct {
	Dataset string `json:"dataset"`
	Samples string `json:"samples,omitempty"`
	Grader  string `json:"grader"`
	Rubric  string `json:"rubric,omitempty"`
	// Graders holds, for a multi grader with more than one python
	// sub-grader, each one's digest by sub-grader name (Grader is the
	// first's).
	Graders map[string]string `json:"graders,omitempty"`
	// Preprocess is the preprocessor's source (preprocess.source), when
	// the manifest has one.
	Preprocess string `json:"preprocess,omitempty"`
}

// Equal reports whether two runs graded the same files.
func (d Digests) Equal(o Digests) bool {
	return d.Dataset == o.Dataset && d.Samples == o.Samples && d.Grader == o.Grader && d.Rubric == o.Rubric && maps.Equal(d.Graders, o.Graders) && d.Preprocess == o.Preprocess
}
