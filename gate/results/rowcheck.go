package results

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/manifest"
)

// validClasses are the outcome classes a graded row may carry.
var validClasses = map[grading.Class]bool{
	grading.ClassOK: true, grading.ClassInvalidReturn: true, grading.ClassGraderException: true, grading.ClassTimeout: true,
	grading.ClassMemoryExceeded: true, grading.ClassSandboxViolation: true, grading.ClassWorkerCrash: true,
}

// CheckRow checks one case row of a results file against what a run writes,
// so merge refuses a row no run could have written instead of counting it:
// a status outside pass, fail, error and omitted; a pass or fail without a
// finite score, with a class other than ok, or on the wrong side of
// threshold; an error without an error class; an omitted row with a class,
// a score or no reason. file names the results file and i the row (from 0)
// in the message; every problem of the row is reported, each an input error
// (exit 2) that names the file, the row and the field.
func CheckRow(file string, i int, c CaseResult, threshold float64) error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &manifest.Error{File: file, Key: fmt.Sprintf("cases[%d].%s", i, field),
			Msg: fmt.Sprintf(format, args...) + " (case_id " + quoted(c.CaseID) + ")"})
	}
	if c.CaseID == "" {
		bad("case_id", "must not be empty")
	}
	switch c.Status {
	case StatusPass, StatusFail:
		if c.Class != grading.ClassOK {
			bad("class", "a %s row has class ok, got %s", c.Status, quoted(string(c.Class)))
		}
		switch {
		case c.Score == nil:
			bad("score", "a %s row has a score, got null", c.Status)
		case math.IsNaN(*c.Score) || math.IsInf(*c.Score, 0):
			bad("score", "must be a finite number, got %v", *c.Score)
		case c.Status == StatusPass && *c.Score < threshold:
			bad("score", "%v is below pass_threshold %v, so the row cannot be a pass", *c.Score, threshold)
		case c.Status == StatusFail && *c.Score >= threshold:
			bad("score", "%v meets pass_threshold %v, so the row cannot be a fail", *c.Score, threshold)
		}
	case StatusError:
		if c.Class == grading.ClassOK || !validClasses[c.Class] {
			bad("class", "an error row has one of invalid_return, grader_exception, timeout, memory_exceeded, sandbox_violation, worker_crash, got %s", quoted(string(c.Class)))
		}
		if c.Score != nil {
			bad("score", "an error row has no score, got %v", *c.Score)
		}
	case StatusOmitted:
		if c.Class != "" {
			bad("class", "an omitted row was never graded, so its class is null, got %s", quoted(string(c.Class)))
		}
		if c.Score != nil {
			bad("score", "an omitted row has no score, got %v", *c.Score)
		}
		if c.Reason == "" {
			bad("reason", "an omitted row says why it was omitted")
		}
	default:
		bad("status", "must be pass, fail, error or omitted, got %s", quoted(c.Status))
	}
	return errors.Join(errs...)
}

// CheckShard checks every row of a results file with CheckRow, its canaries'
// status and class, and that its counts add up to its rows: passed, failed
// and errored are the rows of that status, graded is passed plus failed,
// intended is graded plus errored plus omitted, and omitted counts at least
// the omitted rows (the rest are intended cases missing from the dataset).
func CheckShard(file string, r *Results, threshold float64) error {
	sc := NewShardCheck(file, r, threshold)
	var errs []error
	for _, c := range r.Cases {
		if err := sc.Row(c); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(append(errs, sc.Done())...)
}

// ShardCheck is CheckShard over rows that stream past: Row checks each row
// and counts it, Done checks the header's canaries and counts against them.
type ShardCheck struct {
	file      string
	head      *Results
	threshold float64
	i         int
	rows      Counts
}

// NewShardCheck checks the rows of the results file whose header is head.
func NewShardCheck(file string, head *Results, threshold float64) *ShardCheck {
	return &ShardCheck{file: file, head: head, threshold: threshold}
}

// Row checks the next row with CheckRow and counts it.
func (s *ShardCheck) Row(c CaseResult) error {
	err := CheckRow(s.file, s.i, c, s.threshold)
	s.i++
	switch c.Status {
	case StatusPass:
		s.rows.Passed++
	case StatusFail:
		s.rows.Failed++
	case StatusError:
		s.rows.Errored++
	case StatusOmitted:
		s.rows.Omitted++
	}
	return err
}

// Done checks the canaries and that the header's counts add up to the rows
// Row saw.
func (s *ShardCheck) Done() error {
	var errs []error
	file, rows := s.file, s.rows
	for i, c := range s.head.Canaries {
		key := fmt.Sprintf("canaries[%d]", i)
		if c.Status != StatusPass && c.Status != StatusFail {
			errs = append(errs, &manifest.Error{File: file, Key: key + ".status", Msg: "must be pass or fail, got " + quoted(c.Status)})
		}
		if !validClasses[c.Class] {
			errs = append(errs, &manifest.Error{File: file, Key: key + ".class", Msg: "must be an outcome class (ok, invalid_return, grader_exception, timeout, memory_exceeded, sandbox_violation, worker_crash), got " + quoted(string(c.Class))})
		}
	}
	n := s.head.Counts
	for _, cc := range []struct {
		field     string
		got, want int
		what      string
	}{
		{"passed", n.Passed, rows.Passed, "the rows with status pass"},
		{"failed", n.Failed, rows.Failed, "the rows with status fail"},
		{"errored", n.Errored, rows.Errored, "the rows with status error"},
		{"graded", n.Graded, n.Passed + n.Failed, "passed plus failed"},
		{"intended", n.Intended, n.Graded + n.Errored + n.Omitted, "graded plus errored plus omitted"},
	} {
		if cc.got != cc.want {
			errs = append(errs, &manifest.Error{File: file, Key: "counts." + cc.field, Msg: fmt.Sprintf("is %d, but %s make %d", cc.got, cc.what, cc.want)})
		}
	}
	if n.Omitted < rows.Omitted {
		errs = append(errs, &manifest.Error{File: file, Key: "counts.omitted", Msg: fmt.Sprintf("is %d, fewer than the %d rows with status omitted", n.Omitted, rows.Omitted)})
	}
	return errors.Join(errs...)
}

// quoted is a value from a results file as a message shows it: quoted, with
// its control and invisible characters escaped, cut to 200 characters.
func quoted(s string) string {
	const limit = 200
	if r := []rune(s); len(r) > limit {
		return strconv.QuoteToGraphic(string(r[:limit])) + fmt.Sprintf("… (%d characters)", len(r))
	}
	return strconv.QuoteToGraphic(s)
}
