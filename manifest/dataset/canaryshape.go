package dataset

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/gradegate/gradegate/manifest"
)

// canaryShape checks the written canaries' items against the dataset's: a
// canary item field that no row of the dataset has is most likely a typo
// (`expected_totl_cents`), and such a canary tests a shape the graded items
// never have. A positive canary with the typo fails at run time (the grader
// raises on the field it misses), but a negative one passes for the wrong
// reason, and validate would say nothing either way.
//
// Only fields the canaries name are looked for, each until a row has it;
// the names of the first shapeRows rows' fields are kept to suggest the
// one a typo meant.
type canaryShape struct {
	fields []canaryField
	left   int             // fields not yet seen in a row
	known  map[string]bool // field names of the first rows
}

// canaryField is one top-level item field of one written canary.
type canaryField struct {
	canary manifest.Canary
	name   string
	seen   bool
}

const (
	shapeRows  = 100
	shapeNames = 200
)

func newCanaryShape(canaries []manifest.Canary) *canaryShape {
	s := &canaryShape{known: map[string]bool{}}
	for _, c := range canaries {
		var item map[string]json.RawMessage
		if json.Unmarshal(c.Item, &item) != nil {
			continue // not an object: the manifest's own checks say so
		}
		names := make([]string, 0, len(item))
		for k := range item {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			s.fields = append(s.fields, canaryField{canary: c, name: k})
		}
	}
	s.left = len(s.fields)
	return s
}

// add notes the fields of one readable row (the rows-th).
func (s *canaryShape) add(row *caseRow, rows int) {
	if rows <= shapeRows {
		for _, f := range row.fields {
			if len(s.known) < shapeNames {
				s.known[f.key] = true
			}
		}
	}
	if s.left == 0 {
		return
	}
	for i := range s.fields {
		f := &s.fields[i]
		if !f.seen {
			if _, ok := row.field(f.name); ok {
				f.seen = true
				s.left--
			}
		}
	}
}

// findings warns, at each canary, about each item field no row has.
func (s *canaryShape) findings(file string) []manifest.Finding {
	if s.left == 0 {
		return nil
	}
	known := make([]string, 0, len(s.known))
	for k := range s.known {
		known = append(known, k)
	}
	sort.Strings(known)
	var out []manifest.Finding
	for _, f := range s.fields {
		if f.seen {
			continue
		}
		hint := ""
		if t := typoOf(f.name, known); t != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", t)
		}
		out = append(out, manifest.Finding{
			Code: CodeUnknownField, Severity: manifest.SeverityWarn, File: f.canary.File, Line: f.canary.Line,
			Message: fmt.Sprintf("canary %q: its item has the field %q, which no item of %s has%s: the canary tests a shape the graded items never have", cutValue(f.canary.Name), cutValue(f.name), file, hint),
		})
	}
	return out
}
