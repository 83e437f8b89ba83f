// Package dataset reads a suite's cases and stored samples as streams and
// checks the dataset contract.
//
// The reader (Open, and Load on top of it) separates two kinds of problem.
// A line that cannot be read as a case or a sample at all (bad JSON, a
// missing "item", an unknown top-level key, a sample for a case that does
// not exist) is an input error: the suite cannot be used and the caller
// exits 2. A row that reads fine but breaks the
// contract (a duplicate case_id, a schema violation, a label outside {0, 1})
// is a Finding: the row is kept, and the gate decides what the finding does.
package dataset

import (
	"encoding/json"
	"errors"
	"io/fs"

	"github.com/gradegate/gradegate/manifest"
)

// Case is one dataset row with its sample joined in.
type Case struct {
	// ID is the item's case_id. When the item has no usable id (a
	// missing_field finding), ID is "<file>:<line>" so the row is still
	// counted and can be named.
	ID     string
	Slices []string // slice names in item order, without repeats; nil: no slice
	Family string
	Label  *int            // human_score, when present (0 or 1)
	Item   json.RawMessage // the whole item, byte for byte as in the file
	// GraderItem is the item the grader receives: Item without the label
	// field and the fields of dataset.hidden_fields (Item itself when it has
	// none of them).
	GraderItem json.RawMessage
	// Unreadable: the row or its sample is well-formed JSON that Python
	// would refuse (invalid UTF-8, nesting deeper than MaxDepth). A
	// dataset_invalid finding names it; it is never sent to the grader.
	Unreadable bool
	// Sample is the stored candidate output; nil when the case has none
	// (it is then omitted with reason missing_sample).
	Sample json.RawMessage
	// SampleSHA256 is the hex sha256 of the sample's compacted JSON
	// (json.Compact), so a whitespace-only change keeps the digest;
	// "" when Sample is nil.
	SampleSHA256 string
	// File is the dataset file as read from the file system
	// (path.Join of the manifest's folder and dataset.path), Line its line.
	File string
	Line int
	// SampleFile and SampleLine say where the sample was written: the
	// dataset line for an inline sample, or a samples.jsonl line.
	SampleFile string
	SampleLine int
	// RubricVersion and LabelStatus are the row's dataset.fields
	// rubric_version and label_status; "" when absent.
	RubricVersion string
	LabelStatus   string
	// Reviewers are the row's independent reviewer labels
	// (dataset.fields.reviewer_labels), as written; Label stays the
	// adjudicated one, or the reviewers' score when they agree and no
	// adjudicated label is written.
	Reviewers []ReviewerLabel
	// StaleLabel: the row is labeled under another rubric version than
	// rubric.version.
	StaleLabel bool
}

// Set is a loaded dataset: every row, and what the contract checks found.
type Set struct {
	// Cases holds every row in file order; none is dropped, whatever its
	// findings.
	Cases []Case
	// Intended is dataset.intended_cases, or len(Cases) when that is 0.
	Intended int
	// Findings are the dataset contract findings (hold or warn), in a stable
	// order: row findings by line, then duplicate ids, missing controls,
	// unknown fields and near duplicates.
	Findings []manifest.Finding
}

// Dataset finding codes.
const (
	CodeDuplicateCaseID = "duplicate_case_id"
	CodeSchemaViolation = "schema_violation"
	CodeMissingField    = "missing_field"
	CodeLabelDomain     = "label_domain"
	CodeMissingControls = "missing_controls"
	CodeNearDuplicate   = "near_duplicate"
	CodeUnknownField    = "unknown_field"
)

// Holds reports whether any finding has severity hold.
func (s *Set) Holds() bool {
	for _, f := range s.Findings {
		if f.Severity == manifest.SeverityHold {
			return true
		}
	}
	return false
}

// Load reads the dataset the manifest names (and its samples file, when
// there is one) from fsys into memory and checks the dataset contract. It
// is for small suites and tests; a run streams with Open.
//
// Paths are m.Dir joined with the paths written in the manifest. The error,
// when not nil, joins one *manifest.Error per problem (errors.Is(err,
// manifest.ErrInput) holds); every bad line is reported, not just the first.
func Load(fsys fs.FS, m *manifest.Manifest) (*Set, error) {
	if m == nil {
		return nil, errors.New("dataset: no manifest")
	}
	r := Open(fsys, m)
	var cases []Case
	for {
		c, ok := r.Next()
		if !ok {
			break
		}
		cases = append(cases, c)
	}
	sum, err := r.Close()
	if err != nil {
		return nil, err
	}
	return &Set{Cases: cases, Intended: sum.Intended, Findings: sum.Findings}, nil
}

// ItemForGrader is the item the grader receives: GraderItem, or Item for a
// Case built by hand without one.
func (c Case) ItemForGrader() json.RawMessage {
	if c.GraderItem != nil {
		return c.GraderItem
	}
	return c.Item
}
