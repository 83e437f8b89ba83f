package results

import (
	"fmt"
	"io"
	"strings"
)

// AllRows returns every case row of the results: from the spool on disk in
// a streamed run, from Cases otherwise. Each call starts again at the first
// row.
func (r *Results) AllRows() (CaseIter, error) {
	if r.Rows == nil {
		return RowsOf(r.Cases), nil
	}
	s := r.Rows.spool
	if s == nil {
		return nil, fmt.Errorf("reading the case rows: they were released (Results.Close)")
	}
	if err := s.Flush(); err != nil {
		return nil, err
	}
	// The spool holds the rows as the "cases" array shows them, commas
	// included: wrapped in an object it is a document CaseReader reads.
	doc := io.MultiReader(strings.NewReader(`{"cases":[`), io.NewSectionReader(s.f, 0, s.size), strings.NewReader(`]}`))
	return NewCaseReader(doc), nil
}

// CaseIter yields the case rows of a results document one at a time.
type CaseIter interface {
	Next() (CaseResult, bool, error)
}

// RowsOf yields rows held in memory.
func RowsOf(rows []CaseResult) CaseIter { return &sliceIter{rows: rows} }

// sliceIter yields rows held in memory.
type sliceIter struct {
	rows []CaseResult
	i    int
}

func (s *sliceIter) Next() (CaseResult, bool, error) {
	if s.i >= len(s.rows) {
		return CaseResult{}, false, nil
	}
	s.i++
	return s.rows[s.i-1], true, nil
}
