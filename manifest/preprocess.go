package manifest

import (
	"fmt"
	"path"
)

// Preprocessor contracts (preprocess.contract).
const (
	// PreprocessRow runs transform(row) on each row: it returns the new
	// row, or None to drop it.
	PreprocessRow = "row"
	// PreprocessBatch runs transform_batch(rows) on a list of rows: it
	// returns the rows to keep, transformed.
	PreprocessBatch = "batch"
)

// DefaultPreprocessTimeoutSeconds is preprocess.timeout_seconds when the
// manifest leaves it out, as MKA1 sets it.
const DefaultPreprocessTimeoutSeconds = 120

// Preprocess is the manifest's preprocess section: Python that rewrites
// each dataset row (the item, canaries' items too) before the grader sees
// it, in the grader's own sandboxed process. A row it drops is omitted with
// reason preprocessed_out.
type Preprocess struct {
	Type     string `json:"type"`     // python, the only type
	Contract string `json:"contract"` // row (default) | batch
	Source   string `json:"source"`   // path, relative to the manifest's folder
	SHA256   string `json:"sha256"`   // digest of Source's bytes
	// TimeoutSeconds bounds one transform call (row) or one
	// transform_batch call (batch); default 120.
	TimeoutSeconds int `json:"timeout_seconds"`
}

// Name is the preprocessor's file name as its messages show it.
func (p *Preprocess) Name() string {
	if p == nil {
		return ""
	}
	return path.Base(p.Source)
}

// Function is the Python function the contract calls.
func (p *Preprocess) Function() string {
	if p != nil && p.Contract == PreprocessBatch {
		return "transform_batch(rows)"
	}
	return "transform(row)"
}

func (d *decoder) preprocess(top *section) *Preprocess {
	n := top.node("preprocess")
	if n == nil {
		return nil
	}
	s, ok := d.mapping(n, "preprocess", d.lines["preprocess"], "type", "contract", "source", "sha256", "timeout_seconds")
	if !ok {
		return nil
	}
	s.require("type", "source", "sha256")
	p := &Preprocess{Contract: PreprocessRow, TimeoutSeconds: DefaultPreprocessTimeoutSeconds}
	p.Type, _ = s.enum("type", "python")
	if v, ok := s.enum("contract", PreprocessRow, PreprocessBatch); ok {
		p.Contract = v
	}
	p.Source, _ = s.relPath("source")
	p.SHA256, _ = s.digest("sha256")
	if v, ok := s.integer("timeout_seconds", 1, MaxTimeoutSeconds); ok {
		p.TimeoutSeconds = v
	}
	return p
}

// checkPreprocess refuses a preprocessor beside a grader that has no Python
// process to run it in: it runs in the grader's own worker, before grade.
func (d *decoder) checkPreprocess(m *Manifest) {
	if m.Preprocess == nil {
		return
	}
	if m.Grader.Type != "" && m.Grader.Type != "python" {
		d.fail(d.lines["preprocess"], "preprocess", "needs grader.type python: the preprocessor runs in the Python grader's own sandboxed process, and a %s grader has none", m.Grader.Type)
	}
	if m.Preprocess.Source != "" && m.Preprocess.Source == m.Grader.Source {
		d.fail(d.lines["preprocess.source"], "preprocess.source", "names the grader's own source (%s); a preprocessor is a file of its own", quote(m.Grader.Source))
	}
}

// PreprocessNote describes the preprocessor for a report line, or "".
func (m *Manifest) PreprocessNote() string {
	if m == nil || m.Preprocess == nil {
		return ""
	}
	return fmt.Sprintf("%s %s, timeout %ds", m.Preprocess.Name(), m.Preprocess.Function(), m.Preprocess.TimeoutSeconds)
}
