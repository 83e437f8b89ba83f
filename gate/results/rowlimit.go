package results

import (
	"fmt"
	"strings"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/manifest/input"
)

// Default bounds on what a run writes about its cases. A row holds what the
// grader returned (scores, judge payload, message) and what it printed: a
// model judge's row is a few KiB, and the worker already refuses a result
// over 160 KiB, but nothing else stopped three hundred such rows from
// turning a 28 KB dataset into a 64 MB results file.
const (
	// DefaultRowLimit bounds one case's row in the results, as written.
	DefaultRowLimit = 32 << 10
	// DefaultResultsLimit bounds the case rows of a run together: a
	// million rows of a plain score take about 400 MiB.
	DefaultResultsLimit = 1 << 30
)

// OutputLimits bound the case rows a run writes (the spool, the results
// JSON); a zero field is its default. It is a flag.Value (--max-output):
// each Set takes row=SIZE or results=SIZE, several separated by commas.
type OutputLimits struct {
	Row     int64
	Results int64
}

func (l OutputLimits) row() int64 {
	if l.Row > 0 {
		return l.Row
	}
	return DefaultRowLimit
}

func (l OutputLimits) results() int64 {
	if l.Results > 0 {
		return l.Results
	}
	return DefaultResultsLimit
}

// String lists the limits set, as Set reads them.
func (l *OutputLimits) String() string {
	if l == nil {
		return ""
	}
	var parts []string
	if l.Row > 0 {
		parts = append(parts, "row="+input.FormatSize(l.Row))
	}
	if l.Results > 0 {
		parts = append(parts, "results="+input.FormatSize(l.Results))
	}
	return strings.Join(parts, ",")
}

// Set reads row=SIZE or results=SIZE (such as row=256KiB); several may be
// given at once, separated by commas.
func (l *OutputLimits) Set(s string) error {
	for _, part := range strings.Split(s, ",") {
		name, size, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return fmt.Errorf("want row=SIZE or results=SIZE (for example row=256KiB), got %q", part)
		}
		n, err := input.ParseSize(size)
		if err != nil {
			return err
		}
		switch strings.TrimSpace(name) {
		case "row":
			l.Row = n
		case "results":
			l.Results = n
		default:
			return fmt.Errorf("unknown output limit %q; want row or results", name)
		}
	}
	return nil
}

// RowBounds holds the case rows of a run to its OutputLimits as they are
// folded, before the tally sees them: a graded case whose row would pass
// the row limit, or would take the rows together past the results limit
// (and every graded case after that one), becomes invalid_return, and of what the grader returned and printed
// nothing is written, only the message that says which limit it met.
// Omitted cases, which the grader never saw, keep their rows.
type RowBounds struct {
	limits  OutputLimits
	written int64
	full    bool   // the results limit was reached: every later graded case is bounded
	scratch *Spool // formats rows when the run keeps no spool
}

// NewRowBounds returns the bounds of a run's case rows.
func NewRowBounds(l OutputLimits) *RowBounds { return &RowBounds{limits: l} }

// Bound returns c as its row may be written, and that row as f formats it
// (the spool's Format, so that a row is formatted once).
func (b *RowBounds) Bound(c CaseResult, f func(*CaseResult) ([]byte, error)) (CaseResult, []byte, error) {
	row, err := f(&c)
	if err != nil {
		return c, nil, err
	}
	size := int64(len(row))
	if c.Status != StatusOmitted {
		msg := ""
		switch {
		case size > b.limits.row():
			msg = fmt.Sprintf("the case's row in the results is %d bytes, over the %s limit of one row (raise it with --max-output row=SIZE); what the grader returned and printed was not written",
				size, input.FormatSize(b.limits.row()))
		case b.full || b.written+size > b.limits.results():
			b.full = true
			msg = fmt.Sprintf("the case rows of the results reached their %s limit (raise it with --max-output results=SIZE); what the grader returned and printed was not written",
				input.FormatSize(b.limits.results()))
		}
		if msg != "" {
			c = overLimit(c, msg)
			if row, err = f(&c); err != nil {
				return c, nil, err
			}
			size = int64(len(row))
		}
	}
	b.written += size
	return c, row, nil
}

// Format is the row formatter when no spool is kept: the spool's own,
// writing nowhere.
func (b *RowBounds) Format(c *CaseResult) ([]byte, error) {
	if b.scratch == nil {
		b.scratch = &Spool{}
	}
	return b.scratch.Format(c)
}

// overLimit is c as an invalid_return whose payload is dropped: the row
// keeps what identifies the case (from the dataset) and the message.
func overLimit(c CaseResult, msg string) CaseResult {
	return CaseResult{
		CaseID: c.CaseID, Slices: c.Slices, Family: c.Family,
		Status: StatusError, Class: grading.ClassInvalidReturn,
		HumanScore: c.HumanScore,
		Error:      &grading.CaseError{Class: grading.ClassInvalidReturn, Message: msg},
		DurationMS: c.DurationMS, SampleSHA256: c.SampleSHA256, Line: c.Line,
	}
}
