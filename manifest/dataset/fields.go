package dataset

import (
	"fmt"

	"github.com/gradegate/gradegate/manifest/dataset/internal/jsonschema"

	"github.com/gradegate/gradegate/manifest"
)

// CodeLabelFieldMissing is the finding of a dataset in which no row has the
// label field: calibration (false passes and false fails) is off.
const CodeLabelFieldMissing = "label_field_missing"

// Bounds of the undeclared-field report: the lines named per field, and the
// distinct field names followed; occurrences of further names are counted
// together.
const (
	unknownFieldLines = 3
	maxUnknownFields  = 50
)

// declaredFields is what an item schema declares at the top level: the
// names of "properties" and the "patternProperties" patterns.
type declaredFields struct {
	names    map[string]bool
	patterns []jsonschema.Regexp
}

// schemaFields returns the top-level fields sch declares, following a root
// $ref; nil when it declares none (then every field is allowed, and none is
// reported).
func schemaFields(sch *jsonschema.Schema) *declaredFields {
	for i := 0; sch != nil && i < 8; i++ { // a $ref chain, bounded
		if len(sch.Properties) > 0 || len(sch.PatternProperties) > 0 {
			d := &declaredFields{names: map[string]bool{}}
			for name := range sch.Properties {
				d.names[name] = true
			}
			for re := range sch.PatternProperties {
				d.patterns = append(d.patterns, re)
			}
			return d
		}
		sch = sch.Ref
	}
	return nil
}

func (d *declaredFields) has(name string) bool {
	if d.names[name] {
		return true
	}
	for _, re := range d.patterns {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}

// unknownField is what is kept of one undeclared field name.
type unknownField struct {
	rows  int
	lines []int // the first few
}

// unknownFields follows the item fields the schema does not declare.
type unknownFields struct {
	declared *declaredFields
	skip     map[string]bool // the fields gradegate reads itself
	byName   map[string]*unknownField
	order    []string // names in order of first appearance
	others   int      // occurrences of names beyond maxUnknownFields
}

func newUnknownFields(d *declaredFields, f manifest.Fields) *unknownFields {
	return &unknownFields{
		declared: d,
		skip: map[string]bool{f.ID: true, f.Slice: true, f.Family: true, f.Label: true,
			f.RubricVersion: true, f.LabelStatus: true, f.ReviewerLabels: true, f.Reason: true},
		byName: map[string]*unknownField{},
	}
}

// add notes the undeclared top-level fields of one row.
func (u *unknownFields) add(fields []member, line int) {
	for i, f := range fields {
		if u.skip[f.key] || u.declared.has(f.key) || repeated(fields[:i], f.key) {
			continue
		}
		uf := u.byName[f.key]
		if uf == nil {
			if len(u.order) >= maxUnknownFields {
				u.others++
				continue
			}
			uf = &unknownField{}
			u.byName[f.key] = uf
			u.order = append(u.order, f.key)
		}
		uf.rows++
		if len(uf.lines) < unknownFieldLines {
			uf.lines = append(uf.lines, line)
		}
	}
}

func repeated(fields []member, key string) bool {
	for _, f := range fields {
		if f.key == key {
			return true
		}
	}
	return false
}

// findings reports each undeclared field once, with its row count and first
// lines, in order of first appearance.
func (u *unknownFields) findings(file, schema string) []manifest.Finding {
	var out []manifest.Finding
	for _, name := range u.order {
		uf := u.byName[name]
		where := "line " + joinInts(uf.lines)
		if len(uf.lines) > 1 {
			where = "lines " + joinInts(uf.lines)
		}
		if uf.rows > len(uf.lines) {
			where += ", …"
		}
		out = append(out, manifest.Finding{
			Code: CodeUnknownField, Severity: manifest.SeverityWarn, File: file, Line: uf.lines[0],
			Message: fmt.Sprintf("item field %q is not declared by %s: %s (%s)", cutValue(name), schema, rowCount(uf.rows), where),
		})
	}
	if u.others > 0 {
		out = append(out, manifest.Finding{
			Code: CodeUnknownField, Severity: manifest.SeverityWarn, File: file,
			Message: fmt.Sprintf("%d more occurrences of item fields not declared by %s, beyond the first %d names", u.others, schema, maxUnknownFields),
		})
	}
	return out
}

func rowCount(n int) string {
	if n == 1 {
		return "on 1 row"
	}
	return fmt.Sprintf("on %d rows", n)
}

// labelFieldMissing is the finding of a dataset in which no row has the
// label field, at the manifest line that names it. It is reported when the
// manifest names the label field or requires controls: a suite that never
// mentions labels has chosen to run without calibration. It warns, unless
// the manifest writes a calibration limit: a limit the user set that can
// never be checked holds (a misspelt label field would otherwise switch
// off the max_false_pass: 0 the suite relies on, with a warning only).
func (r *Reader) labelFieldMissing() []manifest.Finding {
	if r.labeled || r.rows == 0 {
		return nil
	}
	line := r.m.Line("dataset.fields.label")
	limit, limitLine := "", 0
	for _, k := range calibrationLimits {
		if l := r.m.Line("gate.calibration." + k); l != 0 {
			limit, limitLine = k, l
			break
		}
	}
	if line == 0 {
		switch {
		case limitLine != 0:
			line = limitLine
		case !r.m.Gate.RequireControls:
			return nil
		default:
			line = r.m.Line("dataset")
		}
	}
	f := manifest.Finding{
		Code: CodeLabelFieldMissing, Severity: manifest.SeverityWarn, File: r.m.File, Line: line,
		Message: fmt.Sprintf("no row of %s has the label field %q (dataset.fields.label): calibration is off, no false pass or false fail can be counted", r.file, cutValue(r.fields.Label)),
	}
	if limitLine != 0 {
		f.Severity = manifest.SeverityHold
		f.Message += fmt.Sprintf(", so gate.calibration.%s (line %d) can never be checked", limit, limitLine)
	}
	return []manifest.Finding{f}
}

// familyFieldMissing warns when no row has the family field and the
// manifest names it or aggregates by family: under gate.aggregation:
// family every row is then a family of its own, and the rate is the row
// rate the suite chose not to gate on.
func (r *Reader) familyFieldMissing() []manifest.Finding {
	if r.grouped || r.rows == 0 {
		return nil
	}
	line := r.m.Line("dataset.fields.family")
	byFamily := r.m.Gate.Aggregation == "family"
	if line == 0 {
		if !byFamily {
			return nil
		}
		line = r.m.Line("gate.aggregation")
	}
	msg := fmt.Sprintf("no row of %s has the family field %q (dataset.fields.family)", r.file, cutValue(r.fields.Family))
	if byFamily {
		msg += fmt.Sprintf(": under gate.aggregation: family (line %d) every row is a family of its own, and the pass rate is the row rate", r.m.Line("gate.aggregation"))
	}
	return []manifest.Finding{{Code: CodeUnknownField, Severity: manifest.SeverityWarn, File: r.m.File, Line: line, Message: msg}}
}

// hiddenFieldsMissing warns about each of dataset.hidden_fields that no row
// has: a misspelt name hides nothing, and the grader sees the field it
// meant to hide.
func (r *Reader) hiddenFieldsMissing() []manifest.Finding {
	if r.hiddenSet.left == 0 || r.rows == 0 {
		return nil
	}
	known := r.shape.item.knownNames()
	var out []manifest.Finding
	for _, h := range r.hiddenSet.fields {
		if h.seen {
			continue
		}
		hint := typoHint(h.name, known)
		out = append(out, manifest.Finding{
			Code: CodeUnknownField, Severity: manifest.SeverityWarn, File: r.m.File, Line: r.m.Line("dataset.hidden_fields"),
			Message: fmt.Sprintf("dataset.hidden_fields names %q, which no item has%s: a misspelt name hides nothing, and the grader sees the field it was meant to hide", cutValue(h.name), hint),
		})
	}
	return out
}

// calibrationLimits are the gate.calibration keys that bound what the
// human labels show.
var calibrationLimits = []string{"max_false_pass", "mandatory_max_false_pass", "max_false_fail", "mandatory_max_false_fail", "min_agreement"}
