package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/gradegate/gradegate/manifest"
)

// row is a Case while it is being read: the item's top-level fields (spans
// of the line, valid until the next line) and the findings the row earned
// on its own.
type caseRow struct {
	Case
	fields   []member
	hasID    bool
	ref      sampleRef // where a samples-file sample came from
	findings []manifest.Finding
	// reasonRaw is the adjudicated label's reason as written (a JSON
	// string, a span of the line like fields); labelFromReviewers says the
	// label is the agreeing reviewers' score.
	reasonRaw          []byte
	labelFromReviewers bool
	// sampleSum is the sample's digest when the samples file's parse
	// already took it (a sample taken in step); "" otherwise.
	sampleSum string
}

// field returns the item field named name (the last one when repeated).
func (r *caseRow) field(name string) ([]byte, bool) {
	for i := len(r.fields) - 1; i >= 0; i-- {
		if r.fields[i].key == name {
			return r.fields[i].val, true
		}
	}
	return nil, false
}

// object decodes a line that must be one JSON object into its fields; msg
// says what is wrong otherwise. It is the slow path, for lines the scanner
// refused, so that messages are encoding/json's.
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
func jsonKind(v []byte) string {
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
		if len(v) == 2 {
			return "an empty string"
		}
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

func isObject(v []byte) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && v[0] == '{'
}

func isNull(v []byte) bool {
	return bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

// parseCase reads one dataset line: `{"item": {...}, "sample": {...}?}`,
// scanning it once.
func (r *Reader) parseCase(st *parseState, line []byte, n int) (caseRow, error) {
	lineErr := func(key, msg string) error {
		return &manifest.Error{File: r.file, Line: n, Key: key, Msg: msg}
	}
	sc := scanLineKeys(line, "item", &st.keys)
	if sc.syntax {
		top, msg := object(line)
		if msg != "" {
			return caseRow{}, lineErr("", msg)
		}
		// The scanner refused what encoding/json accepts: read it the slow
		// way rather than refuse a good line.
		sc = scanned{}
		for _, k := range sortedKeys(top) {
			sc.top = append(sc.top, member{key: k, kraw: strconv.AppendQuote(nil, k), val: top[k]})
		}
		if item, ok := top["item"]; ok && isObject(item) {
			sc.item = slowMembers(item)
		}
	}
	if k, ok := repeatedKey(sc.top); ok {
		return caseRow{}, lineErr(k, repeatedMsg)
	}
	if k, ok := repeatedKey(sc.item); ok {
		return caseRow{}, lineErr("item."+k, repeatedMsg)
	}
	var item, sample []byte
	var hasItem, hasSample bool
	unknown := ""
	for _, mb := range sc.top {
		switch mb.key {
		case "item":
			item, hasItem = mb.val, true
		case "sample":
			sample, hasSample = mb.val, true
		default:
			// The first unknown key in sorted order is the one named.
			if unknown == "" || mb.key < unknown {
				unknown = mb.key
			}
		}
	}
	rw := caseRow{Case: Case{File: r.file, Line: n}}
	if sc.unreadable == "" {
		if unknown != "" {
			return caseRow{}, lineErr(unknown, `unknown key; a dataset line holds only "item" and an optional "sample"`)
		}
		switch {
		case !hasItem:
			return caseRow{}, lineErr("item", "missing; every dataset line needs an item object")
		case !isObject(item):
			return caseRow{}, lineErr("item", "must be an object, not "+jsonKind(item))
		case hasSample && !isObject(sample):
			return caseRow{}, lineErr("sample", "must be an object, not "+jsonKind(sample))
		}
	} else {
		// Well-formed JSON that Python refuses: the row is counted and named,
		// never graded. What the scan could read before it stopped is kept.
		rw.Unreadable = true
		rw.findings = append(rw.findings, manifest.Finding{
			Code: CodeDatasetInvalid, Severity: manifest.SeverityHold, File: r.file, Line: n,
			Message: "the row is not sent to the grader: " + sc.unreadable,
		})
		if !isObject(item) {
			item = []byte("{}")
		}
		if hasSample && !isObject(sample) {
			hasSample = false
		}
	}
	rw.Item = append(json.RawMessage(nil), item...)
	rw.fields = sc.item
	if hasSample {
		rw.Sample = append(json.RawMessage(nil), sample...)
		rw.SampleFile, rw.SampleLine = r.file, n
	}
	r.readFields(st, &rw)
	if rw.Unreadable && len(rw.findings) > 0 {
		rw.findings[0].CaseID = rw.ID
	}
	rw.GraderItem = r.graderItem(rw.Item, sc.item)
	return rw, nil
}

// slowMembers lists an object's members with encoding/json.
func slowMembers(obj []byte) []member {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return nil
	}
	out := make([]member, 0, len(m))
	for _, k := range sortedKeys(m) {
		out = append(out, member{key: k, kraw: strconv.AppendQuote(nil, k), val: m[k]})
	}
	return out
}

// graderItem is the item without the label field and dataset.hidden_fields:
// item itself when it has none of them.
func (r *Reader) graderItem(item []byte, fields []member) json.RawMessage {
	hide := false
	for _, f := range fields {
		hide = hide || r.hidden[f.key]
	}
	if !hide {
		return item
	}
	out := make([]byte, 0, len(item))
	out = append(out, '{')
	first := true
	for _, f := range fields {
		if r.hidden[f.key] {
			continue
		}
		if !first {
			out = append(out, ", "...)
		}
		first = false
		out = append(out, f.kraw...)
		out = append(out, ": "...)
		out = append(out, f.val...)
	}
	return append(out, '}')
}

// readFields fills the fields gradegate reads (id, slice, family, label)
// from the item, and records a finding for each one that breaks the contract.
//
// Code choices: a missing or non-string id is missing_field (the row has no
// identity); a slice or family of the wrong type is schema_violation (the
// field is present but has the wrong shape); a label other than 0 or 1 is
// label_domain. A null slice, family or label counts as absent.
func (r *Reader) readFields(st *parseState, rw *caseRow) {
	add := func(code, msg string) {
		rw.findings = append(rw.findings, manifest.Finding{
			Code: code, Severity: manifest.SeverityHold,
			File: rw.File, Line: rw.Line, CaseID: rw.ID, Message: msg,
		})
	}
	f := r.fields

	raw, ok := rw.field(f.ID)
	if id, isStr := stringValue(raw); ok && isStr && id != "" {
		rw.ID, rw.hasID = id, true
	} else {
		rw.ID = fmt.Sprintf("%s:%d", rw.File, rw.Line)
		switch {
		case rw.Unreadable:
		case !ok:
			add(CodeMissingField, fmt.Sprintf("item has no %q; every case needs a unique string id", f.ID))
		default:
			add(CodeMissingField, fmt.Sprintf("item.%s must be a non-empty string, not %s", f.ID, jsonKind(raw)))
		}
	}

	if raw, ok := rw.field(f.Slice); ok && !isNull(raw) {
		slices, err := sliceNames(raw)
		if err != nil {
			add(CodeSchemaViolation, fmt.Sprintf("item.%s %v", f.Slice, err))
		}
		rw.Slices = slices
	}

	if raw, ok := rw.field(f.Family); ok && !isNull(raw) {
		if v, isStr := stringValue(raw); isStr {
			rw.Family = v
		} else {
			add(CodeSchemaViolation, fmt.Sprintf("item.%s must be a string, not %s", f.Family, jsonKind(raw)))
		}
	}

	if raw, ok := rw.field(f.Label); ok && !isNull(raw) {
		// A boolean is not a label: true == 1 is exactly the confusion the
		// gate exists to catch, so only the numbers 0 and 1 count.
		if v, err := strconv.ParseFloat(string(raw), 64); err == nil && (v == 0 || v == 1) && jsonKind(raw) == "a number" {
			label := int(v)
			rw.Label = &label
		} else {
			add(CodeLabelDomain, fmt.Sprintf("item.%s must be 0 or 1, not %s; the label is ignored", f.Label, cutValue(string(bytes.TrimSpace(raw)))))
		}
	}
	r.readLabels(st, rw, add)
}

// sliceNames reads a slice field: a string, or a list of strings. Empty
// names are an error; repeated names are kept once. On error the names that
// were valid are still returned.
func sliceNames(raw []byte) ([]string, error) {
	if one, ok := stringValue(raw); ok {
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
	for _, el := range list {
		s, ok := stringValue(el)
		if !ok || s == "" {
			bad = true
			continue
		}
		if !contains(names, s) {
			names = append(names, s)
		}
	}
	if bad {
		return names, errors.New("must be a string or a list of non-empty strings")
	}
	return names, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// maxValueRunes is how much of a value from the dataset a finding's message
// quotes: enough to recognise it, never a megabyte of it. The finding's
// case_id keeps the whole id.
const maxValueRunes = 200

// cutValue is a dataset value as a message quotes it: at most maxValueRunes
// characters, with its full length when it was cut.
func cutValue(s string) string {
	r := []rune(s)
	if len(r) <= maxValueRunes {
		return s
	}
	return fmt.Sprintf("%s… (%d characters)", string(r[:maxValueRunes]), len(r))
}
