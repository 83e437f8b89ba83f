// Package dataset reads a suite's cases and stored samples (SPEC section 2)
// and checks the dataset contract (SPEC section 8, dataset finding codes).
//
// Load separates two kinds of problem. A line that cannot be read as a case or
// a sample at all (bad JSON, a missing "item", an unknown top-level key, a
// sample for a case that does not exist) is an input error: the suite cannot
// be used and the caller exits 2. A row that reads fine but breaks the
// contract (a duplicate case_id, a schema violation, a label outside {0, 1})
// is a Finding: the row is kept, and the gate decides what the finding does.
package dataset

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/input"
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

// Dataset finding codes (SPEC section 8).
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
// there is one) from fsys and checks the dataset contract.
//
// Paths are m.Dir joined with the paths written in the manifest. The error,
// when not nil, joins one *manifest.Error per problem (errors.Is(err,
// manifest.ErrInput) holds); every bad line is reported, not just the first.
func Load(fsys fs.FS, m *manifest.Manifest) (*Set, error) {
	if m == nil {
		return nil, errors.New("dataset: no manifest")
	}
	l := &loader{
		fsys:   fsys,
		m:      m,
		fields: fieldNames(m.Dataset.Fields),
		file:   path.Join(m.Dir, m.Dataset.Path),
	}

	var errs []error
	rows, err := l.readCases()
	datasetOK := err == nil
	if err != nil {
		errs = append(errs, err)
	}
	var samples []sampleLine
	if m.Samples != nil {
		samples, err = l.readSamples(path.Join(m.Dir, m.Samples.Path))
		if err != nil {
			errs = append(errs, err)
		}
	}
	var schema *itemSchema
	if m.Dataset.Schema != "" {
		schema, err = compileSchema(fsys, path.Join(m.Dir, m.Dataset.Schema), m)
		if err != nil {
			errs = append(errs, err)
		}
	}
	// A sample for a line that could not be read would only repeat that
	// line's error as "not in the dataset", so the join waits for a clean
	// dataset.
	if datasetOK {
		if err := l.join(rows, samples); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	for i := range rows {
		if rows[i].Sample != nil {
			sum, err := sampleDigest(rows[i].Sample)
			if err != nil {
				// Unreachable: only valid JSON objects become samples.
				return nil, fmt.Errorf("dataset: sample of %s: %w", rows[i].ID, err)
			}
			rows[i].SampleSHA256 = sum
		}
	}

	set := &Set{Cases: make([]Case, len(rows)), Intended: m.Dataset.IntendedCases}
	for i, r := range rows {
		set.Cases[i] = r.Case
	}
	if set.Intended == 0 {
		set.Intended = len(set.Cases)
	}
	set.Findings, err = l.findings(rows, schema)
	if err != nil {
		return nil, err
	}
	return set, nil
}

// fieldNames fills in the SPEC defaults for any field name left empty, so a
// hand-built manifest behaves like a parsed one.
func fieldNames(f manifest.Fields) manifest.Fields {
	if f.ID == "" {
		f.ID = "case_id"
	}
	if f.Slice == "" {
		f.Slice = "slice"
	}
	if f.Family == "" {
		f.Family = "family"
	}
	if f.Label == "" {
		f.Label = "human_score"
	}
	return f
}

// loader carries what every step of Load needs.
type loader struct {
	fsys   fs.FS
	m      *manifest.Manifest
	fields manifest.Fields
	file   string // dataset path in fsys
}

// findings runs every contract check over the loaded rows.
func (l *loader) findings(rows []row, schema *itemSchema) ([]manifest.Finding, error) {
	var out []manifest.Finding
	screen := NewScreen(ScreenConfig{Manifest: l.m, FS: l.fsys, File: l.file})
	for _, r := range rows {
		screen.Add(r.Line, r.ID, r.Item)
		out = append(out, r.findings...)
		if schema != nil {
			if f, ok := schema.check(r); ok {
				out = append(out, f)
			}
		}
	}
	out = append(out, duplicateIDs(rows)...)
	out = append(out, l.missingControls(rows)...)
	nd, err := screen.Findings()
	return append(out, nd...), err
}

// readFile reads name from fsys. A failure is an input error at the manifest
// key that names the file (key, as in "dataset.path"), so the user sees which
// line of the manifest to fix, and names the file as it was resolved.
func readFile(fsys fs.FS, name string, m *manifest.Manifest, key string) ([]byte, error) {
	data, err := input.ReadFile(fsys, name, input.ForKey(key), m.Limits.Of(input.ForKey(key)))
	if err != nil {
		cause := err
		var pe *fs.PathError
		if errors.As(err, &pe) {
			cause = pe.Err // the path is named in the message
		}
		return nil, &manifest.Error{File: m.File, Line: m.Line(key), Key: key, Msg: fmt.Sprintf("cannot read %s: %v", name, cause), Err: err}
	}
	return data, nil
}
