package dataset

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/gradegate/gradegate/manifest"
)

// canaryShape checks the written canaries' items and samples against the
// dataset's: a canary field that no row of the dataset has is most likely
// a typo (`expected_totl_cents`, `output_txt`), and such a canary tests a
// shape the graded cases never have. A positive canary with the typo fails
// at run time (the grader raises on, or scores 0 without, the field it
// misses), but a negative one passes for the wrong reason: a wrong answer
// written as `output_txt` reaches the grader as no answer at all. validate
// said nothing either way.
//
// Only fields the canaries name are looked for, each until a row has it;
// the names of the first shapeRows rows' fields are kept to suggest the
// one a typo meant.
type canaryShape struct {
	item, sample fieldSet
}

// fieldSet is one side (item or sample) of the check: the fields looked
// for, each until a row has it.
type fieldSet struct {
	side   string // "item" or "sample"
	fields []canaryField
	left   int             // fields not yet seen in a row
	known  map[string]bool // field names of the first rows
}

// canaryField is one top-level field of one written canary's item or
// sample (or, without a canary, one of dataset.hidden_fields).
type canaryField struct {
	canary manifest.Canary
	name   string
	seen   bool
}

// AnswerFields are the sample fields that carry the model's answer, in the
// hosted grader's sample: a canary may answer in any of them (a tool call
// in output_tools where the stored samples are all text), so a canary's
// answer field is never taken for a typo. extracted_output is MKA1's: what
// its extraction made of output_text.
func AnswerFields() []string {
	return []string{"output_text", "output_json", "output_tools", "choices", "extracted_output"}
}

// IsAnswerField says whether k is one of AnswerFields.
func IsAnswerField(k string) bool {
	switch k {
	case "output_text", "output_json", "output_tools", "choices", "extracted_output":
		return true
	}
	return false
}

const (
	shapeRows  = 100
	shapeNames = 200
)

func newCanaryShape(canaries []manifest.Canary) *canaryShape {
	s := &canaryShape{item: fieldSet{side: "item", known: map[string]bool{}}, sample: fieldSet{side: "sample", known: map[string]bool{}}}
	for _, c := range canaries {
		s.item.addCanary(c, c.Item, nil)
		s.sample.addCanary(c, c.Sample, IsAnswerField)
	}
	return s
}

// addCanary adds the fields of one canary's item or sample, but those
// skip says are not to be checked.
func (f *fieldSet) addCanary(c manifest.Canary, raw json.RawMessage, skip func(string) bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return // absent or not an object: the manifest's own checks say so
	}
	names := make([]string, 0, len(obj))
	for k := range obj {
		if skip == nil || !skip(k) {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		f.fields = append(f.fields, canaryField{canary: c, name: k})
	}
	f.left = len(f.fields)
}

// add notes the item fields of one readable row (the rows-th).
func (s *canaryShape) add(row *caseRow, rows int) {
	if rows <= shapeRows {
		for _, m := range row.fields {
			s.item.know(m.key)
		}
	}
	s.item.seeItem(row)
}

// seeItem marks the fields row's item has.
func (f *fieldSet) seeItem(row *caseRow) {
	if f.left > 0 {
		f.see(func(name string) bool { _, ok := row.field(name); return ok })
	}
}

// addSample notes the fields of the rows-th row's stored sample. It reads
// the sample's keys only while they are wanted: for the first rows, and
// while a canary's sample field has not been seen.
func (s *canaryShape) addSample(sample json.RawMessage, rows int) {
	if rows > shapeRows && s.sample.left == 0 {
		return
	}
	members, ok := Members(sample)
	if !ok {
		return
	}
	if rows <= shapeRows {
		for _, m := range members {
			s.sample.know(m.Key)
		}
	}
	if s.sample.left > 0 {
		s.sample.see(func(name string) bool {
			for _, m := range members {
				if m.Key == name {
					return true
				}
			}
			return false
		})
	}
}

func (f *fieldSet) know(name string) {
	if len(f.known) < shapeNames {
		f.known[name] = true
	}
}

// see marks the fields has says a row has.
func (f *fieldSet) see(has func(string) bool) {
	for i := range f.fields {
		c := &f.fields[i]
		if !c.seen && has(c.name) {
			c.seen = true
			f.left--
		}
	}
}

// findings warns, at each canary, about each field no row has: file is
// the dataset's, samples the file of the stored samples ("" when no row
// had one).
func (s *canaryShape) findings(file, samples string) []manifest.Finding {
	out := s.item.findings(file)
	if samples != "" {
		out = append(out, s.sample.findings(samples)...)
	}
	return out
}

// knownNames are the field names of the first rows, sorted.
func (f *fieldSet) knownNames() []string {
	known := make([]string, 0, len(f.known))
	for k := range f.known {
		known = append(known, k)
	}
	sort.Strings(known)
	return known
}

func (f *fieldSet) findings(file string) []manifest.Finding {
	if f.left == 0 {
		return nil
	}
	known := f.knownNames()
	var out []manifest.Finding
	for _, c := range f.fields {
		if c.seen {
			continue
		}
		hint := typoHint(c.name, known)
		out = append(out, manifest.Finding{
			Code: CodeUnknownField, Severity: manifest.SeverityWarn, File: c.canary.File, Line: c.canary.Line,
			Message: fmt.Sprintf("canary %q: its %s has the field %q, which no %s of %s has%s: the canary tests a shape the graded cases never have",
				cutValue(c.canary.Name), f.side, cutValue(c.name), f.side, file, hint),
		})
	}
	return out
}
