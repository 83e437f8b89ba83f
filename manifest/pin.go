package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

type pinTarget struct{ section, fileKey string }

// pinTargets lists the sections Pin can rewrite, with the key naming the
// file whose digest each one pins.
func pinTargets() []pinTarget {
	return []pinTarget{
		{"dataset", "path"},
		{"samples", "path"},
		{"rubric", "path"},
		{"grader", "source"},
		{"preprocess", "source"},
	}
}

// Pin rewrites the sha256 values of a manifest's sections to the given
// digests and returns the new manifest bytes. digests is keyed by section:
// "dataset", "samples", "rubric", "grader" (for a multi grader, its first
// python sub-grader), "preprocess", and PartKey(name) for a multi grader's further python
// sub-graders; a section not in the map is left alone. Only the digest values change: comments, quoting, key order and
// layout stay as the user wrote them. A section with a file but no sha256 key
// gets a `sha256: "<hex>"` line right after its path (or source) line.
func Pin(data []byte, digests map[string]string) ([]byte, error) {
	for name, d := range digests {
		if !slices.ContainsFunc(pinTargets(), func(t pinTarget) bool { return t.section == name }) && !isPartKey(name) {
			return nil, fmt.Errorf("pin: unknown section %q: expected dataset, samples, rubric, grader, preprocess or a python sub-grader", name)
		}
		if !ValidDigest(d) {
			return nil, fmt.Errorf("pin: %s digest %q is not 64 lowercase hex digits", name, d)
		}
	}
	root, err := parseYAML(data, "")
	if err != nil {
		return nil, err
	}
	if root.Kind != yaml.MappingNode {
		return nil, &Error{Line: root.Line, Msg: "manifest must be a mapping"}
	}
	t := text{data: data, lineStart: lineStarts(data)}
	var edits []edit
	for _, target := range pinTargets() {
		digest, ok := digests[target.section]
		if !ok {
			continue
		}
		e, err := t.pinSection(root, target.section, target.fileKey, NormalizeDigest(digest))
		if err != nil {
			return nil, err
		}
		edits = append(edits, e)
	}
	for _, key := range slices.Sorted(maps.Keys(digests)) {
		if !isPartKey(key) {
			continue
		}
		e, err := t.pinNode(partNode(root, key), key, "source", NormalizeDigest(digests[key]))
		if err != nil {
			return nil, err
		}
		edits = append(edits, e)
	}
	out := apply(data, edits)
	if err := checkPinned(out, digests); err != nil {
		return nil, err
	}
	return out, nil
}

// edit replaces data[off:off+del] with text.
type edit struct {
	off, del int
	text     string
}

func apply(data []byte, edits []edit) []byte {
	// Later offsets first, so earlier offsets stay valid.
	slices.SortFunc(edits, func(a, b edit) int { return b.off - a.off })
	out := bytes.Clone(data)
	for _, e := range edits {
		out = slices.Concat(out[:e.off], []byte(e.text), out[e.off+e.del:])
	}
	return out
}

// text locates yaml.Node positions (1-based line, 1-based column counted in
// characters) as byte offsets in the original bytes.
type text struct {
	data      []byte
	lineStart []int
}

func lineStarts(data []byte) []int {
	starts := []int{0}
	for i, b := range data {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

func (t text) offset(line, column int) (int, error) {
	if line < 1 || line > len(t.lineStart) {
		return 0, fmt.Errorf("pin: line %d is outside the manifest", line)
	}
	off := t.lineStart[line-1]
	for c := 1; c < column; c++ {
		if off >= len(t.data) || t.data[off] == '\n' {
			return 0, fmt.Errorf("pin: column %d is outside line %d", column, line)
		}
		_, size := utf8.DecodeRune(t.data[off:])
		off += size
	}
	return off, nil
}

// lineEnd returns the offset just past the newline ending the line that
// holds off, and that newline ("" at the end of a file without one).
func (t text) lineEnd(off int) (int, string) {
	i := bytes.IndexByte(t.data[off:], '\n')
	if i < 0 {
		return len(t.data), ""
	}
	end := off + i + 1
	if i > 0 && t.data[off+i-1] == '\r' {
		return end, "\r\n"
	}
	return end, "\n"
}

// scalarEnd returns the offset just past a single-line scalar that starts at
// off, as the scanner read it.
func (t text) scalarEnd(off int, n *yaml.Node) (int, error) {
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		for i := off + 1; i < len(t.data); i++ {
			switch t.data[i] {
			case '\\':
				i++
			case '"':
				return i + 1, nil
			}
		}
	case n.Style&yaml.SingleQuotedStyle != 0:
		for i := off + 1; i < len(t.data); i++ {
			if t.data[i] == '\'' {
				if i+1 < len(t.data) && t.data[i+1] == '\'' {
					i++
					continue
				}
				return i + 1, nil
			}
		}
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0:
		if bytes.HasPrefix(t.data[off:], []byte(n.Value)) {
			return off + len(n.Value), nil
		}
	}
	return 0, &Error{Line: n.Line, Msg: "pin can only rewrite a value written on one line"}
}

func (t text) pinSection(root *yaml.Node, section, fileKey, digest string) (edit, error) {
	_, sec := lookup(root, section)
	if section == "grader" {
		sec = pythonGraderNode(sec)
	}
	return t.pinNode(sec, section, fileKey, digest)
}

// pinNode pins the section sec, named section in errors.
func (t text) pinNode(sec *yaml.Node, section, fileKey, digest string) (edit, error) {
	if sec == nil || isNull(sec) {
		return edit{}, &Error{Key: section, Msg: "cannot pin: the manifest has no " + section + " section"}
	}
	if sec.Kind != yaml.MappingNode {
		return edit{}, &Error{Line: sec.Line, Key: section, Msg: "cannot pin: must be a mapping"}
	}
	fileK, fileV := lookup(sec, fileKey)
	if fileV == nil || isNull(fileV) {
		return edit{}, &Error{Line: sec.Line, Key: section + "." + fileKey, Msg: "cannot pin: no file named"}
	}
	shaK, shaV := lookup(sec, "sha256")
	if shaV != nil {
		return t.replace(shaK, shaV, section, digest)
	}
	return t.insert(sec, fileK, fileV, section, digest)
}

// lookup returns a mapping's key and value nodes for key.
func lookup(m *yaml.Node, key string) (k, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// replace rewrites an existing sha256 value, keeping its quoting and its
// "sha256:" prefix if it had one.
func (t text) replace(k, v *yaml.Node, section, digest string) (edit, error) {
	key := section + ".sha256"
	if v.Kind != yaml.ScalarNode {
		return edit{}, &Error{Line: v.Line, Key: key, Msg: "cannot pin: must be a plain string value"}
	}
	off, err := t.offset(v.Line, v.Column)
	if err != nil {
		return edit{}, err
	}
	if isNull(v) && v.Value == "" {
		// An empty value sits just past the key's colon: add one.
		return edit{off: off, text: ` "` + digest + `"`}, nil
	}
	end, err := t.scalarEnd(off, v)
	if err != nil {
		if e, ok := errors.AsType[*Error](err); ok {
			e.Key = key
		}
		return edit{}, err
	}
	if strings.HasPrefix(v.Value, digestPrefix) {
		digest = digestPrefix + digest
	}
	var s string
	switch {
	case v.Style&yaml.DoubleQuotedStyle != 0:
		s = `"` + digest + `"`
	case v.Style&yaml.SingleQuotedStyle != 0:
		s = `'` + digest + `'`
	case plainIsString(digest) && !isNull(v):
		s = digest
	default:
		// A plain digest of only digits (and an "e") would read as a number.
		s = `"` + digest + `"`
	}
	return edit{off: off, del: end - off, text: s}, nil
}

// plainIsString reports whether a digest written unquoted still reads as a
// string: it must hold a hex letter other than "e".
func plainIsString(digest string) bool {
	return strings.ContainsAny(NormalizeDigest(digest), "abcdf")
}

// insert adds a sha256 key next to the section's file key.
func (t text) insert(sec, k, v *yaml.Node, section, digest string) (edit, error) {
	start, err := t.offset(v.Line, v.Column)
	if err != nil {
		return edit{}, err
	}
	end, err := t.scalarEnd(start, v)
	if err != nil {
		return edit{}, err
	}
	if sec.Style&yaml.FlowStyle != 0 {
		return edit{off: end, text: `, sha256: "` + digest + `"`}, nil
	}
	keyOff, err := t.offset(k.Line, k.Column)
	if err != nil {
		return edit{}, err
	}
	indent := t.data[t.lineStart[k.Line-1]:keyOff]
	if len(bytes.Trim(indent, " ")) != 0 {
		return edit{}, &Error{Line: k.Line, Key: section, Msg: "cannot pin: put the section's keys on their own lines, or add a sha256 key by hand"}
	}
	at, eol := t.lineEnd(end)
	line := string(indent) + `sha256: "` + digest + `"`
	if eol == "" {
		// The file ends on the path line without a newline.
		return edit{off: at, text: "\n" + line + "\n"}, nil
	}
	return edit{off: at, text: line + eol}, nil
}

// checkPinned re-reads the rewritten manifest and confirms that each pinned
// section now holds its digest; anything else is a bug in Pin, not in the
// user's input.
func checkPinned(out []byte, digests map[string]string) error {
	root, err := parseYAML(out, "")
	if err != nil {
		return fmt.Errorf("pin: rewritten manifest does not parse: %w", err)
	}
	for section, want := range digests {
		_, sec := lookup(root, section)
		switch {
		case section == "grader":
			sec = pythonGraderNode(sec)
		case isPartKey(section):
			sec = partNode(root, section)
		}
		if sec == nil {
			return fmt.Errorf("pin: rewritten manifest lost section %s", section)
		}
		_, v := lookup(sec, "sha256")
		if v == nil || v.ShortTag() != "!!str" || NormalizeDigest(v.Value) != NormalizeDigest(want) {
			return fmt.Errorf("pin: rewritten manifest does not hold the %s digest", section)
		}
	}
	return nil
}

// PinnedFiles returns, for each section Pin can rewrite, the file it names
// (as written, relative to the manifest's folder). It reads only those keys,
// leniently: `gradegate pin` must work on a manifest whose sha256 values are
// still missing or placeholders, which Parse rightly refuses.
func PinnedFiles(data []byte, file string) (map[string]string, error) {
	root, err := parseYAML(data, file)
	if err != nil {
		return nil, err
	}
	if root.Kind != yaml.MappingNode {
		return nil, &Error{File: file, Line: root.Line, Msg: "manifest must be a mapping"}
	}
	out := map[string]string{}
	for _, target := range pinTargets() {
		section := mappingValue(root, target.section)
		if target.section == "grader" {
			section = pythonGraderNode(section)
		}
		if section == nil || section.Kind != yaml.MappingNode {
			continue
		}
		if v := mappingValue(section, target.fileKey); v != nil && v.Kind == yaml.ScalarNode && v.Value != "" {
			out[target.section] = v.Value
		}
	}
	for _, name := range furtherPythonParts(mappingValue(root, "grader")) {
		if v := mappingValue(partNode(root, PartKey(name)), "source"); v != nil && v.Kind == yaml.ScalarNode && v.Value != "" {
			out[PartKey(name)] = v.Value
		}
	}
	return out, nil
}

// mappingValue is the value node of key in mapping n, or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
