package dataset

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gradegate/gradegate/manifest"
)

// sampleLine is one line of the samples file.
type sampleLine struct {
	file   string
	line   int
	caseID string
	sample json.RawMessage
}

// readSamples reads the samples file: one `{"case_id": "...", "sample": {...}}`
// a line. The key is always "case_id", whatever dataset.fields.id says: it
// names the join, not an item field.
func (l *loader) readSamples(file string) ([]sampleLine, error) {
	data, err := readFile(l.fsys, file, l.m, "samples.path")
	if err != nil {
		return nil, err
	}
	var (
		out  []sampleLine
		errs []error
	)
	for _, line := range splitLines(data) {
		lineErr := func(key, msg string) {
			errs = append(errs, &manifest.Error{File: file, Line: line.n, Key: key, Msg: msg})
		}
		top, msg := object(line.data)
		if msg != "" {
			lineErr("", msg)
			continue
		}
		bad := false
		for _, k := range sortedKeys(top) {
			if k != "case_id" && k != "sample" {
				lineErr(k, `unknown key; a samples line holds only "case_id" and "sample"`)
				bad = true
			}
		}
		var id string
		if raw, ok := top["case_id"]; !ok {
			lineErr("case_id", "missing")
			bad = true
		} else if json.Unmarshal(raw, &id) != nil || id == "" {
			lineErr("case_id", "must be a non-empty string, not "+jsonKind(raw))
			bad = true
		}
		sample, ok := top["sample"]
		if !ok {
			lineErr("sample", "missing")
			bad = true
		} else if !isObject(sample) {
			lineErr("sample", "must be an object, not "+jsonKind(sample))
			bad = true
		}
		if !bad {
			out = append(out, sampleLine{file: file, line: line.n, caseID: id, sample: append(json.RawMessage(nil), sample...)})
		}
	}
	return out, errors.Join(errs...)
}

// join attaches each line of the samples file to its case. A sample for an
// unknown case_id, a second sample for a case, or a samples-file line for a
// case that already has an inline sample is an input error; all are listed.
func (l *loader) join(rows []row, samples []sampleLine) error {
	byID := map[string][]int{}
	var noID []int // lines of rows without a usable case_id
	for i, r := range rows {
		if r.hasID {
			byID[r.ID] = append(byID[r.ID], i)
		} else {
			noID = append(noID, r.Line)
		}
	}
	// The likely cause of an unknown sample is a row whose case_id is
	// missing or not a string: say so, or the message hides the real fault.
	hint := ""
	if len(noID) > 0 {
		hint = fmt.Sprintf(" (%d row(s) of %s have no usable %s, first on line %d)", len(noID), l.file, l.fields.ID, noID[0])
	}
	var errs []error
	for _, s := range samples {
		idx, ok := byID[s.caseID]
		if !ok {
			errs = append(errs, &manifest.Error{File: s.file, Line: s.line, Key: "case_id",
				Msg: fmt.Sprintf("%q is not a case in %s%s", s.caseID, l.file, hint)})
			continue
		}
		// A duplicated case_id (its own finding) gets the sample on every row.
		for _, i := range idx {
			r := &rows[i]
			var msg string
			switch {
			case r.Sample != nil && r.SampleFile == r.File && r.SampleLine == r.Line:
				msg = fmt.Sprintf("case %q already has an inline sample at %s:%d; keep one of the two", s.caseID, r.File, r.Line)
			case r.Sample != nil:
				msg = fmt.Sprintf("second sample for case %q (the first is on line %d)", s.caseID, r.SampleLine)
			}
			if msg != "" {
				errs = append(errs, &manifest.Error{File: s.file, Line: s.line, Key: "case_id", Msg: msg})
				break
			}
			r.Sample = s.sample
			r.SampleFile, r.SampleLine = s.file, s.line
		}
	}
	return errors.Join(errs...)
}

// sampleDigest is the hex sha256 of the sample's compacted JSON, so that
// re-indenting a samples file does not change any case's output identity.
func sampleDigest(sample json.RawMessage) (string, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, sample); err != nil {
		return "", fmt.Errorf("compacting sample: %w", err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:]), nil
}
