package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ReadResultsHeader decodes a results document without its case rows: the
// rows are skipped one at a time, so a document of any size costs the
// memory of one row. Results.Cases is left nil.
func ReadResultsHeader(r io.Reader) (*Results, error) {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 1<<20))
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	var doc bytes.Buffer
	doc.WriteByte('{')
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil {
			return nil, err
		}
		if key == "cases" {
			if err := skipArray(dec); err != nil {
				return nil, fmt.Errorf("cases: %w", err)
			}
			continue
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		if doc.Len() > 1 {
			doc.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		doc.Write(k)
		doc.WriteByte(':')
		doc.Write(v)
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the results document")
	}
	doc.WriteByte('}')
	var res Results
	if err := json.Unmarshal(doc.Bytes(), &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// CaseReader reads the "cases" array of a results document one row at a
// time.
type CaseReader struct {
	dec  *json.Decoder
	in   bool // inside the array
	done bool
	sum  *rowDigest
}

// Integrity is the Integrity of the rows read, once Next has returned the
// last one; nil before.
func (c *CaseReader) Integrity() *Integrity {
	if !c.done || c.sum == nil {
		return nil
	}
	return c.sum.integrity()
}

// NewCaseReader reads the case rows of the document r.
func NewCaseReader(r io.Reader) *CaseReader {
	return &CaseReader{dec: json.NewDecoder(bufio.NewReaderSize(r, 1<<20)), sum: newRowDigest()}
}

// Next returns the next row; ok is false after the last one.
func (c *CaseReader) Next() (CaseResult, bool, error) {
	if c.done {
		return CaseResult{}, false, nil
	}
	if !c.in {
		found, err := c.seek()
		if err != nil || !found {
			c.done = true
			return CaseResult{}, false, err
		}
		c.in = true
	}
	if !c.dec.More() {
		c.done = true
		return CaseResult{}, false, expectDelim(c.dec, ']')
	}
	var raw json.RawMessage
	if err := c.dec.Decode(&raw); err != nil {
		c.done = true
		return CaseResult{}, false, fmt.Errorf("cases: %w", err)
	}
	var row CaseResult
	if err := json.Unmarshal(raw, &row); err != nil {
		c.done = true
		return CaseResult{}, false, fmt.Errorf("cases: %w", err)
	}
	if err := c.sum.add(raw); err != nil {
		c.done = true
		return CaseResult{}, false, fmt.Errorf("cases: %w", err)
	}
	return row, true, nil
}

// seek moves to the first row of the top-level "cases" array.
func (c *CaseReader) seek() (bool, error) {
	if err := expectDelim(c.dec, '{'); err != nil {
		return false, err
	}
	for c.dec.More() {
		key, err := objectKey(c.dec)
		if err != nil {
			return false, err
		}
		if key == "cases" {
			tok, err := c.dec.Token()
			if err != nil || tok == nil {
				return false, err
			}
			if d, ok := tok.(json.Delim); !ok || d != '[' {
				return false, fmt.Errorf("cases: want an array, got %v", tok)
			}
			return true, nil
		}
		var skip json.RawMessage
		if err := c.dec.Decode(&skip); err != nil {
			return false, fmt.Errorf("%s: %w", key, err)
		}
	}
	return false, nil // a document without rows
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, got %v", want, tok)
	}
	return nil
}

func objectKey(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	key, ok := tok.(string)
	if !ok {
		return "", errors.New("want an object key")
	}
	return key, nil
}

// skipArray reads past an array, one element at a time.
func skipArray(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil || tok == nil { // "cases": null holds no rows
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return fmt.Errorf("want an array, got %v", tok)
	}
	for dec.More() {
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
	}
	return expectDelim(dec, ']')
}
