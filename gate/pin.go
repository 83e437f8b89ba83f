package gate

import (
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing/fstest"

	"github.com/gradegate/gradegate/gate/render"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/input"
)

// PinSchema names the document of `gradegate pin --format json`.
const PinSchema = "gradegate.pin/v1"

// PinReport is `gradegate pin --format json`.
type PinReport struct {
	Schema   string    `json:"schema"` // gradegate.pin/v1
	Manifest string    `json:"manifest"`
	Changed  bool      `json:"changed"`
	Files    []PinFile `json:"files"`
}

// PinFile is one file the manifest pins.
type PinFile struct {
	Section string `json:"section"` // dataset | samples | rubric | grader | preprocess | grader.graders.NAME
	Path    string `json:"path"`
	SHA256  string `json:"sha256"`
	Was     string `json:"was"` // the digest the manifest held; "" when none
	Changed bool   `json:"changed"`
}

// Pin returns the manifest file with its sha256 fields set to the current
// digests of the files it names, keeping the user's comments and layout,
// and the report of what changed. It reads the file keys leniently, so it
// also fills in a new manifest whose digests are still missing or
// placeholders; the pinned manifest must then load, or Pin fails and the
// caller writes nothing.
func Pin(file string, limits input.Limits) (*PinReport, []byte, error) {
	data, err := input.ReadFile(input.Host{}, filepath.ToSlash(file), input.Manifest, limits.Of(input.Manifest))
	if err != nil {
		return nil, nil, manifest.ReadError(file, 0, "", "cannot read manifest", err)
	}
	name := filepath.ToSlash(file)
	files, err := manifest.PinnedFiles(data, name)
	if err != nil {
		return nil, nil, err
	}
	old := map[string]string{}
	if m, err := manifest.Parse(data, name); err == nil {
		old["dataset"], old["grader"] = m.Dataset.SHA256, m.Grader.SHA256
		if m.Samples != nil {
			old["samples"] = m.Samples.SHA256
		}
		if m.Rubric != nil {
			old["rubric"] = m.Rubric.SHA256
		}
		if m.Preprocess != nil {
			old["preprocess"] = m.Preprocess.SHA256
		}
		for _, sg := range m.Grader.Multi.PythonParts() {
			old[manifest.PartKey(sg.Name)] = sg.SHA256
		}
	}
	rep := &PinReport{Schema: PinSchema, Manifest: name, Files: []PinFile{}}
	digests := map[string]string{}
	dir := path.Dir(name)
	sections := []string{"dataset", "samples", "rubric", "grader", "preprocess"}
	// A multi grader's further python sub-graders, each pinned in its own
	// section (grader.graders.NAME).
	for _, k := range slices.Sorted(maps.Keys(files)) {
		if !slices.Contains(sections, k) {
			sections = append(sections, k)
		}
	}
	for _, section := range sections {
		rel, ok := files[section]
		if !ok {
			continue
		}
		p := path.Join(dir, rel)
		kind := input.ForKey(section)
		if !slices.Contains(sections[:5], section) {
			kind = input.Grader
		}
		d, err := manifest.DigestFile(input.Host{}, p, kind, limits.Of(kind))
		if err != nil {
			return nil, nil, err
		}
		digests[section] = d
		was := manifest.NormalizeDigest(old[section])
		rep.Files = append(rep.Files, PinFile{Section: section, Path: p, SHA256: d, Was: was, Changed: was != d})
	}
	out, err := manifest.Pin(data, digests)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	rep.Changed = string(out) != string(data)
	// The pinned manifest must be usable as it is, and nothing is written
	// when it is not: a manifest with other problems keeps its old digests.
	if _, err := manifest.Load(pinnedFS{name: path.Clean(name), data: out}, name); err != nil {
		return nil, nil, err
	}
	return rep, out, nil
}

// WriteText writes the report as lines for a terminal.
func (rep *PinReport) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, pf := range rep.Files {
		fmt.Fprintf(&b, "%-8s %s  sha256:%s  %s\n", pf.Section, render.Text(pf.Path), pf.SHA256, pinState(pf))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMarkdown writes the report as a markdown table.
func (rep *PinReport) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("| file | sha256 | state |\n|---|---|---|\n")
	for _, pf := range rep.Files {
		fmt.Fprintf(&b, "| %s | `%s` | %s |\n", render.MarkdownCell(pf.Path), short(pf.SHA256), pinState(pf))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func pinState(pf PinFile) string {
	switch {
	case !pf.Changed:
		return "unchanged"
	case pf.Was == "":
		return "pinned"
	}
	return "pinned (was " + short(pf.Was) + ")"
}

// short abbreviates a digest for messages.
func short(d string) string {
	d = manifest.NormalizeDigest(d)
	if d == "" {
		return "none"
	}
	if len(d) > 12 {
		return d[:12] + "…"
	}
	return d
}

// pinnedFS is the host file system with the manifest replaced by the bytes
// pin is about to write, so they are checked before anything is written.
type pinnedFS struct {
	name string
	data []byte
}

func (p pinnedFS) Open(name string) (fs.File, error) {
	if name != p.name {
		return input.Host{}.Open(name)
	}
	// The key is any valid fs path: the manifest's own may be absolute.
	return fstest.MapFS{"manifest": &fstest.MapFile{Data: p.data, Mode: 0o644}}.Open("manifest")
}
