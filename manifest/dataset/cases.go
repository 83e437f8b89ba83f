package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/gradegate/gradegate/manifest"
)

// row is a Case while it is being loaded: the decoded item fields and the
// findings the row earned on its own.
type row struct {
	Case
	fields   map[string]json.RawMessage // the item's top-level fields
	hasID    bool                       // the item carries a usable case_id
	findings []manifest.Finding
}

// jsonLine is one non-blank line of a JSON Lines file.
type jsonLine struct {
	n    int // 1-based line number
	data []byte
}

// splitLines cuts a JSON Lines file into its non-blank lines, tolerating
// CRLF endings and a UTF-8 byte order mark.
func splitLines(data []byte) []jsonLine {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var out []jsonLine
	for i, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		out = append(out, jsonLine{n: i + 1, data: line})
	}
	return out
}

// object decodes a line that must be one JSON object into its fields; msg
// says what is wrong otherwise.
func object(data []byte) (fields map[string]json.RawMessage, msg string) {
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		return nil, fmt.Sprintf("not valid JSON: %v", err)
	}
	if data[0] != '{' {
		return nil, fmt.Sprintf("a line must be a JSON object, not %s", jsonKind(data))
	}
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, fmt.Sprintf("not a JSON object: %v", err)
	}
	return fields, ""
}

// jsonKind names the JSON type of a valid value, for messages.
func jsonKind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

func isObject(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && v[0] == '{'
}

func isNull(v json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

// readCases reads the dataset file. The error joins one *manifest.Error per
// line that is not a case at all.
func (l *loader) readCases() ([]row, error) {
	data, err := readFile(l.fsys, l.file, l.m, "dataset.path")
	if err != nil {
		return nil, err
	}
	var (
		rows []row
		errs []error
	)
	for _, line := range splitLines(data) {
		r, err := l.parseCase(line)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 && len(errs) == 0 {
		// Nothing to grade would make every rate vacuous; refuse it rather
		// than let an empty export pass.
		errs = append(errs, &manifest.Error{File: l.file, Msg: "holds no cases"})
	}
	return rows, errors.Join(errs...)
}

// parseCase reads one dataset line: `{"item": {...}, "sample": {...}?}`.
func (l *loader) parseCase(line jsonLine) (row, error) {
	lineErr := func(key, msg string) error {
		return &manifest.Error{File: l.file, Line: line.n, Key: key, Msg: msg}
	}
	top, msg := object(line.data)
	if msg != "" {
		return row{}, lineErr("", msg)
	}
	for _, k := range sortedKeys(top) {
		if k != "item" && k != "sample" {
			return row{}, lineErr(k, `unknown key; a dataset line holds only "item" and an optional "sample"`)
		}
	}
	item, ok := top["item"]
	if !ok {
		return row{}, lineErr("item", "missing; every dataset line needs an item object")
	}
	if !isObject(item) {
		return row{}, lineErr("item", "must be an object, not "+jsonKind(item))
	}
	r := row{Case: Case{Item: append(json.RawMessage(nil), item...), File: l.file, Line: line.n}}
	if sample, ok := top["sample"]; ok {
		if !isObject(sample) {
			return row{}, lineErr("sample", "must be an object, not "+jsonKind(sample))
		}
		r.Sample = append(json.RawMessage(nil), sample...)
		r.SampleFile, r.SampleLine = l.file, line.n
	}
	if err := json.Unmarshal(item, &r.fields); err != nil {
		return row{}, lineErr("item", err.Error())
	}
	l.readFields(&r)
	return r, nil
}

// readFields fills the fields gradegate reads (id, slice, family, label)
// from the item, and records a finding for each one that breaks the contract.
//
// Code choices: a missing or non-string id is missing_field (the row has no
// identity); a slice or family of the wrong type is schema_violation (the
// field is present but has the wrong shape); a label other than 0 or 1 is
// label_domain. A null slice, family or label counts as absent.
func (l *loader) readFields(r *row) {
	add := func(code, msg string) {
		r.findings = append(r.findings, manifest.Finding{
			Code: code, Severity: manifest.SeverityHold,
			File: r.File, Line: r.Line, CaseID: r.ID, Message: msg,
		})
	}
	f := l.fields

	var id string
	if raw, ok := r.fields[f.ID]; ok && json.Unmarshal(raw, &id) == nil && id != "" {
		r.ID, r.hasID = id, true
	} else {
		r.ID = fmt.Sprintf("%s:%d", r.File, r.Line)
		switch {
		case !ok:
			add(CodeMissingField, fmt.Sprintf("item has no %q; every case needs a unique string id", f.ID))
		default:
			add(CodeMissingField, fmt.Sprintf("item.%s must be a non-empty string, not %s", f.ID, jsonKind(raw)))
		}
	}

	if raw, ok := r.fields[f.Slice]; ok && !isNull(raw) {
		slices, err := sliceNames(raw)
		if err != nil {
			add(CodeSchemaViolation, fmt.Sprintf("item.%s %v", f.Slice, err))
		}
		r.Slices = slices
	}

	if raw, ok := r.fields[f.Family]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &r.Family); err != nil {
			r.Family = ""
			add(CodeSchemaViolation, fmt.Sprintf("item.%s must be a string, not %s", f.Family, jsonKind(raw)))
		}
	}

	if raw, ok := r.fields[f.Label]; ok && !isNull(raw) {
		// A boolean is not a label: true == 1 is exactly the confusion the
		// gate exists to catch, so only the numbers 0 and 1 count.
		var v float64
		if json.Unmarshal(raw, &v) == nil && (v == 0 || v == 1) {
			label := int(v)
			r.Label = &label
		} else {
			add(CodeLabelDomain, fmt.Sprintf("item.%s must be 0 or 1, not %s; the label is ignored", f.Label, bytes.TrimSpace(raw)))
		}
	}
}

// sliceNames reads a slice field: a string, or a list of strings. Empty
// names are an error; repeated names are kept once. On error the names that
// were valid are still returned.
func sliceNames(raw json.RawMessage) ([]string, error) {
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		if one == "" {
			return nil, errors.New("must not be an empty string")
		}
		return []string{one}, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("must be a string or a list of strings, not %s", jsonKind(raw))
	}
	var (
		names []string
		bad   bool
	)
	seen := map[string]bool{}
	for _, el := range list {
		var s string
		if json.Unmarshal(el, &s) != nil || s == "" {
			bad = true
			continue
		}
		if !seen[s] {
			seen[s] = true
			names = append(names, s)
		}
	}
	if bad {
		return names, errors.New("must be a string or a list of non-empty strings")
	}
	return names, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
