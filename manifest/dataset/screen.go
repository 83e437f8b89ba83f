package dataset

import (
	"encoding/json"

	"github.com/gradegate/gradegate/manifest"
)

// row is what the near-duplicate screen reads of a case: its identity and
// the item fields it may compare.
type row struct {
	Case
	fields map[string]json.RawMessage
	hasID  bool
}

// loader is what the near-duplicate screen reads of the run.
type loader struct {
	m      *manifest.Manifest
	fields manifest.Fields
	file   string
}

// nearScreen is the one place the reader calls the near-duplicate screen:
// add once per row, findings once at the end. It keeps of each row only the
// fields the screen compares (the manifest's list, or every string field
// but the id, slice, family and label), copied.
type nearScreen struct {
	l    *loader
	rows []row
}

func newNearScreen(r *Reader) *nearScreen {
	return &nearScreen{l: &loader{m: r.m, fields: r.fields, file: r.file}}
}

func (s *nearScreen) add(c *caseRow) {
	cfg := s.l.m.Dataset.NearDuplicates.Fields
	f := s.l.fields
	var fields map[string]json.RawMessage
	for _, mb := range c.fields {
		switch {
		case len(cfg) > 0:
			if !contains(cfg, mb.key) {
				continue
			}
		case mb.key == f.ID || mb.key == f.Slice || mb.key == f.Family || mb.key == f.Label:
			continue
		case len(mb.val) == 0 || mb.val[0] != '"':
			continue
		}
		if fields == nil {
			fields = map[string]json.RawMessage{}
		}
		fields[mb.key] = append(json.RawMessage(nil), mb.val...)
	}
	if fields == nil {
		return // nothing to compare, and no field to find
	}
	s.rows = append(s.rows, row{
		Case:   Case{ID: c.ID, File: c.File, Line: c.Line},
		fields: fields,
		hasID:  c.hasID,
	})
}

func (s *nearScreen) findings() []manifest.Finding {
	return s.l.nearDuplicates(s.rows)
}
