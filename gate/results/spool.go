package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
)

// Spool holds the case rows of a run on disk, already formatted as the
// results document's "cases" array shows them, so that the document can be
// written with every case while memory holds only the kept ones. The file
// is unlinked as soon as it is created: nothing is left behind, whatever
// ends the process.
type Spool struct {
	f    *os.File
	w    *bufio.Writer
	buf  bytes.Buffer
	row  []byte // the fast path's formatted row
	n    int
	size int64
	sum  *rowDigest // the rows' Integrity, as they are written
}

// NewSpool starts a spool of case rows in a file in dir, unlinked at once.
func NewSpool(dir string) (*Spool, error) {
	f, err := os.CreateTemp(dir, "gradegate-cases-*.json")
	if err != nil {
		return nil, fmt.Errorf("creating the case spool: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("creating the case spool: %w", err)
	}
	return &Spool{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// caseIndent is the indentation of a case inside the results document.
const caseIndent = "    "

// Add writes one row.
func (s *Spool) Add(c CaseResult) error {
	row, err := s.Format(&c)
	if err != nil {
		return err
	}
	return s.Write(c.CaseID, row)
}

// Format returns c's row as Add writes it, after ",\n" unless it is the
// first. The row's own compact JSON is indented once, as an indenting
// encoder without HTML escaping would write it inside the document, without
// the encoder's second pass that re-checks and compacts what MarshalJSON
// already wrote compact: at 100k cases that pass was a quarter of the
// spool's CPU. The bytes are valid until the next call.
func (s *Spool) Format(c *CaseResult) ([]byte, error) {
	var ok bool
	if s.row, ok = appendCaseIndented(s.row[:0], s.n > 0, c); ok {
		return s.row, nil
	}
	row, err := c.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("spooling case %s: %w", c.CaseID, err)
	}
	s.buf.Reset()
	if s.n > 0 {
		s.buf.WriteString(",\n")
	}
	s.buf.WriteString(caseIndent)
	if err := json.Indent(&s.buf, row, caseIndent, "  "); err != nil {
		return nil, fmt.Errorf("spooling case %s: %w", c.CaseID, err)
	}
	return s.buf.Bytes(), nil
}

// Write appends one row that Format returned to the file.
func (s *Spool) Write(id string, b []byte) error {
	if s.sum == nil {
		s.sum = newRowDigest()
	}
	if err := s.sum.add(bytes.TrimPrefix(b, []byte(",\n"))); err != nil {
		return fmt.Errorf("spooling case %s: %w", id, err)
	}
	n, err := s.w.Write(b)
	s.size += int64(n)
	if err != nil {
		return fmt.Errorf("spooling case %s: %w", id, err)
	}
	s.n++
	return nil
}

// appendCaseIndented appends the row as add's slow path formats it (the
// row's MarshalJSON, indented inside the document, after ",\n" when not
// first), for the rows every run has by the thousand: plain ASCII strings,
// finite numbers, no error, no judge, no dropped scores. ok is false for any other row, which
// the slow path then formats; a test holds the two to the same bytes.
func appendCaseIndented(b []byte, notFirst bool, c *CaseResult) (_ []byte, ok bool) {
	if c.Error != nil || c.Judge != nil || c.DroppedScores != nil || c.ExtractedOutput != nil || c.ModelCalls != nil {
		return b, false
	}
	const in1, in2 = caseIndent + "  ", caseIndent + "    "
	if notFirst {
		b = append(b, ",\n"...)
	}
	b = append(b, caseIndent+"{\n"+in1+`"case_id": `...)
	if b, ok = appendPlainString(b, c.CaseID); !ok {
		return b, false
	}
	b = append(b, ",\n"+in1+`"slices": `...)
	switch {
	case c.Slices == nil:
		b = append(b, "null"...)
	case len(c.Slices) == 0:
		b = append(b, "[]"...)
	default:
		b = append(b, "[\n"...)
		for i, sl := range c.Slices {
			if i > 0 {
				b = append(b, ",\n"...)
			}
			b = append(b, in2...)
			if b, ok = appendPlainString(b, sl); !ok {
				return b, false
			}
		}
		b = append(b, "\n"+in1+"]"...)
	}
	b = append(b, ",\n"+in1+`"family": `...)
	if b, ok = appendPlainString(b, c.Family); !ok {
		return b, false
	}
	b = append(b, ",\n"+in1+`"status": `...)
	if b, ok = appendPlainString(b, c.Status); !ok {
		return b, false
	}
	if c.Reason != "" {
		b = append(b, ",\n"+in1+`"reason": `...)
		if b, ok = appendPlainString(b, c.Reason); !ok {
			return b, false
		}
	}
	b = append(b, ",\n"+in1+`"score": `...)
	if c.Score == nil {
		b = append(b, "null"...)
	} else if b, ok = appendFloat(b, *c.Score); !ok {
		return b, false
	}
	b = append(b, ",\n"+in1+`"scores": `...)
	switch {
	case c.Scores == nil:
		b = append(b, "null"...)
	case len(c.Scores) == 0:
		b = append(b, "{}"...)
	default:
		keys := make([]string, 0, len(c.Scores))
		for k := range c.Scores {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, "{\n"...)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ",\n"...)
			}
			b = append(b, in2...)
			if b, ok = appendPlainString(b, k); !ok {
				return b, false
			}
			b = append(b, ": "...)
			if b, ok = appendFloat(b, c.Scores[k]); !ok {
				return b, false
			}
		}
		b = append(b, "\n"+in1+"}"...)
	}
	b = append(b, ",\n"+in1+`"judge": null,`+"\n"+in1+`"human_score": `...)
	if c.HumanScore == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*c.HumanScore), 10)
	}
	b = append(b, ",\n"+in1+`"error": null`...)
	if c.Output != "" {
		b = append(b, ",\n"+in1+`"output": `...)
		if b, ok = appendPlainString(b, c.Output); !ok {
			return b, false
		}
	}
	b = append(b, ",\n"+in1+`"duration_ms": `...)
	if b, ok = appendFloat(b, c.DurationMS); !ok {
		return b, false
	}
	b = append(b, ",\n"+in1+`"sample_sha256": `...)
	if b, ok = appendPlainString(b, c.SampleSHA256); !ok {
		return b, false
	}
	b = append(b, ",\n"+in1+`"line": `...)
	b = strconv.AppendInt(b, int64(c.Line), 10)
	if c.LabelStatus != "" {
		b = append(b, ",\n"+in1+`"label_status": `...)
		if b, ok = appendPlainString(b, c.LabelStatus); !ok {
			return b, false
		}
	}
	if c.RubricVersion != "" {
		b = append(b, ",\n"+in1+`"rubric_version": `...)
		if b, ok = appendPlainString(b, c.RubricVersion); !ok {
			return b, false
		}
	}
	if c.StaleLabel {
		b = append(b, ",\n"+in1+`"stale_label": true`...)
	}
	if len(c.ReviewerLabels) > 0 {
		const in3 = in2 + "  "
		b = append(b, ",\n"+in1+`"reviewer_labels": [`...)
		for i, l := range c.ReviewerLabels {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, "\n"+in2+"{\n"+in3+`"reviewer": `...)
			if b, ok = appendPlainString(b, l.Reviewer); !ok {
				return b, false
			}
			b = append(b, ",\n"+in3+`"score": `...)
			b = strconv.AppendInt(b, int64(l.Score), 10)
			if l.Reason != "" {
				b = append(b, ",\n"+in3+`"reason": `...)
				if b, ok = appendPlainString(b, l.Reason); !ok {
					return b, false
				}
			}
			b = append(b, "\n"+in2+"}"...)
		}
		b = append(b, "\n"+in1+"]"...)
	}
	b = append(b, ",\n"+in1+`"class": `...)
	if c.Class == "" {
		b = append(b, "null"...)
	} else if b, ok = appendPlainString(b, string(c.Class)); !ok {
		return b, false
	}
	return append(b, "\n"+caseIndent+"}"...), true
}

// appendPlainString appends s quoted when JSON writes it as it is: printable
// ASCII without a quote or a backslash. ok is false otherwise.
func appendPlainString(b []byte, s string) (_ []byte, ok bool) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return b, false
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), true
}

// appendFloat appends f as encoding/json writes a float64; ok is false for
// a value JSON cannot hold.
func appendFloat(b []byte, f float64) (_ []byte, ok bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 is written e-9.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// flush makes every row written readable.
func (s *Spool) Flush() error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("spooling cases: %w", err)
	}
	return nil
}

// writeTo copies the formatted rows to w. The file is read from its start
// through an io.LimitedReader, which a destination *os.File (through a
// flushed bufio.Writer) copies in the kernel (copy_file_range) instead of
// through gradegate's memory.
func (s *Spool) writeTo(w io.Writer) error {
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	// Rows written later (none are, today) go after these.
	defer s.f.Seek(0, io.SeekEnd)
	n, err := io.Copy(w, &io.LimitedReader{R: s.f, N: s.size})
	if err == nil && n != s.size {
		err = fmt.Errorf("the case spool holds %d bytes, %d were written", n, s.size)
	}
	return err
}

// Close releases the spool's file.
func (s *Spool) Close() error { return s.f.Close() }

// writeResults writes res as render.JSON would (indented, HTML characters
// as they are), taking the cases from spool when there is one.
func writeResults(w io.Writer, res *Results, spool *Spool) error {
	if spool == nil || spool.n == 0 {
		doc := *res
		sum, err := rowsIntegrity(doc.Cases)
		if err != nil {
			return fmt.Errorf("writing results: %w", err)
		}
		doc.Integrity = withRun(sum, res)
		return encodeIndented(w, &doc)
	}
	doc := *res
	doc.Cases = []CaseResult{}
	doc.Rows = nil
	doc.Integrity = withRun(spool.sum.integrity(), res)
	var buf bytes.Buffer
	if err := encodeIndented(&buf, &doc); err != nil {
		return err
	}
	// The array is empty in doc; the rest of the line is a comma or nothing.
	const empty = "\n  \"cases\": []"
	head, tail, ok := bytes.Cut(buf.Bytes(), []byte(empty))
	if !ok {
		return errors.New("writing results: no cases array in the document")
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.Write(head)
	bw.WriteString("\n  \"cases\": [\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	if err := spool.writeTo(bw); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	bw.WriteString("\n  ]")
	bw.Write(tail)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	return nil
}

func encodeIndented(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	return nil
}

// Rows are the spooled rows as a results document holds them.
func (s *Spool) Rows() *CaseRows { return &CaseRows{spool: s} }
