package worker

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/gradegate/gradegate/gate/grading"
)

// Preprocessor contracts (manifest preprocess.contract).
const (
	PreprocessRow   = "row"   // transform(row): the new row, or None to drop it
	PreprocessBatch = "batch" // transform_batch(rows): the rows to keep
)

// Preprocess is a preprocessor the worker runs before the grader, in the
// grader's own process: each task's item goes through it, and a row it
// drops comes back as an omitted outcome (preprocessed_out).
type Preprocess struct {
	Source     []byte // the exact bytes whose digest was checked
	SourceName string // the file name its tracebacks and messages show
	Contract   string // PreprocessRow (default) or PreprocessBatch
	// TimeoutSeconds bounds one transform or transform_batch call; the
	// worker stops the call there, and the request's own deadline grows
	// by it.
	TimeoutSeconds int
	// IDField is the item field that holds the case id (dataset.fields.id):
	// a row transform_batch returns as a copy is matched to its case by it.
	IDField string
}

// omittedPreprocessedOut is the omission reason of a dropped row; it is
// results.OmittedPreprocessedOut, which this package cannot import.
const omittedPreprocessedOut = "preprocessed_out"

// fill checks p and applies its defaults.
func (p *Preprocess) fill() error {
	if p == nil {
		return nil
	}
	var errs []error
	if p.SourceName == "" {
		p.SourceName = "preprocess.py"
	}
	if p.Contract == "" {
		p.Contract = PreprocessRow
	}
	if p.Contract != PreprocessRow && p.Contract != PreprocessBatch {
		errs = append(errs, fmt.Errorf("preprocess contract %q: want row or batch", p.Contract))
	}
	if p.TimeoutSeconds <= 0 {
		p.TimeoutSeconds = DefaultTimeout
	}
	return errors.Join(errs...)
}

// initField is the preprocessor as the worker's init request carries it.
func (p *Preprocess) initField() map[string]any {
	return map[string]any{
		"source":   p.Source, // base64, as the grader's
		"name":     p.SourceName,
		"contract": p.Contract,
		"timeout":  p.TimeoutSeconds,
		"id_field": p.IDField,
	}
}

// extraSeconds is how much longer a request may take for its
// preprocessor's call: its timeout and a second for the worker to report
// it, so that the worker, which names the preprocessor, is the one that
// stops it.
func (p *Preprocess) extraSeconds() int {
	if p == nil {
		return 0
	}
	return p.TimeoutSeconds + 1
}

// droppedOutcome is the outcome of a task whose row the preprocessor
// dropped: omitted, never graded, with what the preprocessor printed.
func droppedOutcome(output string, dur float64) grading.Outcome {
	return grading.Outcome{Omitted: omittedPreprocessedOut, Output: output, DurationMS: dur}
}

// preprocessRunning reads a stack dump (faulthandler's, most recent call
// first) and says whether the preprocessor was running, with its line:
// its file shows before any frame of the grader's.
func (p *Preprocess) preprocessRunning(dump []byte, graderName string) (int, bool) {
	if p == nil {
		return 0, false
	}
	pre := bytes.Index(dump, []byte(`File "`+p.SourceName+`"`))
	if pre < 0 {
		return 0, false
	}
	if g := bytes.Index(dump, []byte(`File "`+graderName+`"`)); g >= 0 && g < pre {
		return 0, false
	}
	return tracebackLine(dump, p.SourceName), true
}

// timeoutError is the error of a request killed while its preprocessor ran.
func (p *Preprocess) timeoutError(line int) grading.CaseError {
	msg := fmt.Sprintf("the preprocessor %s ran past preprocess.timeout_seconds=%d; its process was killed", p.SourceName, p.TimeoutSeconds)
	if line > 0 {
		msg += fmt.Sprintf(" (%s line %d)", p.SourceName, line)
	}
	return grading.CaseError{Class: grading.ClassTimeout, Message: msg}
}
