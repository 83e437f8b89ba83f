package gate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// caseSpool holds the case rows of a run on disk, already formatted as the
// results document's "cases" array shows them, so that the document can be
// written with every case while memory holds only the kept ones. The file
// is unlinked as soon as it is created: nothing is left behind, whatever
// ends the process.
type caseSpool struct {
	f    *os.File
	w    *bufio.Writer
	buf  bytes.Buffer
	n    int
	size int64
}

func newCaseSpool(dir string) (*caseSpool, error) {
	f, err := os.CreateTemp(dir, "gradegate-cases-*.json")
	if err != nil {
		return nil, fmt.Errorf("creating the case spool: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("creating the case spool: %w", err)
	}
	return &caseSpool{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// caseIndent is the indentation of a case inside the results document.
const caseIndent = "    "

// add writes one row. The row's own compact JSON is indented once, as an
// indenting encoder without HTML escaping would write it inside the
// document, without the encoder's second pass that re-checks and compacts
// what MarshalJSON already wrote compact: at 100k cases that pass was a
// quarter of the spool's CPU.
func (s *caseSpool) add(c CaseResult) error {
	row, err := c.MarshalJSON()
	if err != nil {
		return fmt.Errorf("spooling case %s: %w", c.CaseID, err)
	}
	s.buf.Reset()
	if s.n > 0 {
		s.buf.WriteString(",\n")
	}
	s.buf.WriteString(caseIndent)
	if err := json.Indent(&s.buf, row, caseIndent, "  "); err != nil {
		return fmt.Errorf("spooling case %s: %w", c.CaseID, err)
	}
	n, err := s.w.Write(s.buf.Bytes())
	s.size += int64(n)
	if err != nil {
		return fmt.Errorf("spooling case %s: %w", c.CaseID, err)
	}
	s.n++
	return nil
}

// flush makes every row written readable.
func (s *caseSpool) flush() error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("spooling cases: %w", err)
	}
	return nil
}

// writeTo copies the formatted rows to w.
func (s *caseSpool) writeTo(w io.Writer) error {
	_, err := io.Copy(w, io.NewSectionReader(s.f, 0, s.size))
	return err
}

func (s *caseSpool) close() error { return s.f.Close() }

// writeResults writes res as render.JSON would (indented, HTML characters
// as they are), taking the cases from spool when there is one.
func writeResults(w io.Writer, res *Results, spool *caseSpool) error {
	if spool == nil || spool.n == 0 {
		return encodeIndented(w, res)
	}
	doc := *res
	doc.Cases = []CaseResult{}
	doc.Rows = nil
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
