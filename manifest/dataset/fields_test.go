package dataset

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/gradegate/gradegate/manifest"
)

// Item fields the schema does not declare are one warning per field name,
// with a row count and the first lines; the fields gradegate reads itself
// (id, slice, family, label) are never reported.
func TestUnknownFields(t *testing.T) {
	const declares = `{"type": "object", "properties": {"request": {"type": "string"}}, "patternProperties": {"^x_": {}}}`
	tests := []struct {
		name   string
		schema string // "" for no schema
		lines  []string
		want   []wantFinding
	}{
		{
			name:   "undeclared fields are counted with their first three lines",
			schema: declares,
			lines: []string{
				`{"item": {"case_id": "a", "request": "r", "note": 1}}`,
				`{"item": {"case_id": "b", "request": "r", "note": 2, "extra": true}}`,
				`{"item": {"case_id": "c", "request": "r", "note": 3, "x_ok": 1}}`,
				`{"item": {"case_id": "d", "request": "r", "note": 4, "slice": "s", "human_score": 1}}`,
			},
			want: []wantFinding{
				{CodeUnknownField, manifest.SeverityWarn, "cases.jsonl", 1, "", `item field "note" is not declared by item.schema.json: on 4 rows (lines 1, 2, 3, …)`},
				{CodeUnknownField, manifest.SeverityWarn, "cases.jsonl", 2, "", `item field "extra" is not declared by item.schema.json: on 1 row (line 2)`},
			},
		},
		{
			name:   "a schema that declares no properties reports nothing",
			schema: `{"type": "object"}`,
			lines:  []string{`{"item": {"case_id": "a", "note": 1}}`},
		},
		{
			name:  "no schema reports nothing",
			lines: []string{`{"item": {"case_id": "a", "note": 1}}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := fstest.MapFS{"cases.jsonl": {Data: []byte(strings.Join(tt.lines, "\n"))}}
			m := testManifest(".")
			if tt.schema != "" {
				files["item.schema.json"] = &fstest.MapFile{Data: []byte(tt.schema)}
				m.Dataset.Schema = "item.schema.json"
			}
			set, err := Load(files, m)
			if err != nil {
				t.Fatal(err)
			}
			got := findingsWith(set.Findings, CodeUnknownField)
			checkFindings(t, got, tt.want)
		})
	}
}

// The names followed are capped; further names are counted in one finding.
func TestUnknownFieldsCapped(t *testing.T) {
	var fields []string
	for i := range maxUnknownFields + 5 {
		fields = append(fields, fmt.Sprintf(`"f%d": 1`, i))
	}
	files := fstest.MapFS{
		"cases.jsonl":      {Data: []byte(`{"item": {"case_id": "a", ` + strings.Join(fields, ", ") + `}}`)},
		"item.schema.json": {Data: []byte(`{"properties": {"request": {}}}`)},
	}
	m := testManifest(".")
	m.Dataset.Schema = "item.schema.json"
	set, err := Load(files, m)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	last := ""
	for _, f := range set.Findings {
		if f.Code == CodeUnknownField {
			n++
			last = f.Message
		}
	}
	if n != maxUnknownFields+1 || !strings.Contains(last, "5 more occurrences") {
		t.Errorf("%d unknown_field findings, last %q; want %d, the last counting 5 more", n, last, maxUnknownFields+1)
	}
}

// A label field no row has is a warning when the manifest names it or
// requires controls, and a hold when the manifest writes a calibration
// limit it makes impossible to check; a suite that never mentions labels
// gets none.
func TestLabelFieldMissing(t *testing.T) {
	tests := []struct {
		name     string
		lines    []string
		named    bool // dataset.fields.label written in the manifest
		controls bool
		limit    string // a gate.calibration key written at line 12
		want     []wantFinding
	}{
		{
			name:  "named and absent from every row",
			lines: []string{`{"item": {"case_id": "a"}}`, `{"item": {"case_id": "b"}}`},
			named: true,
			want:  []wantFinding{{CodeLabelFieldMissing, manifest.SeverityWarn, "gradegate.yaml", 7, "", `no row of cases.jsonl has the label field "human_score"`}},
		},
		{
			name:     "required controls and absent",
			lines:    []string{`{"item": {"case_id": "a"}}`},
			controls: true,
			want:     []wantFinding{{CodeLabelFieldMissing, manifest.SeverityWarn, "gradegate.yaml", 3, "", `calibration is off`}},
		},
		{
			name:  "named, absent, and a calibration limit written",
			lines: []string{`{"item": {"case_id": "a"}}`},
			named: true, limit: "max_false_pass",
			want: []wantFinding{{CodeLabelFieldMissing, manifest.SeverityHold, "gradegate.yaml", 7, "", `so gate.calibration.max_false_pass (line 12) can never be checked`}},
		},
		{
			name:  "not named, the default label field absent, and min_agreement written",
			lines: []string{`{"item": {"case_id": "a"}}`},
			limit: "min_agreement",
			want:  []wantFinding{{CodeLabelFieldMissing, manifest.SeverityHold, "gradegate.yaml", 12, "", `gate.calibration.min_agreement (line 12)`}},
		},
		{name: "one row has it", lines: []string{`{"item": {"case_id": "a"}}`, `{"item": {"case_id": "b", "human_score": 0}}`}, named: true, limit: "max_false_pass"},
		{name: "never mentioned", lines: []string{`{"item": {"case_id": "a"}}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := fstest.MapFS{"cases.jsonl": {Data: []byte(strings.Join(tt.lines, "\n"))}}
			m := testManifest(".")
			m.Lines = map[string]int{"dataset": 3}
			if tt.named {
				m.Lines["dataset.fields.label"] = 7
			}
			m.Gate.RequireControls = tt.controls
			if tt.limit != "" {
				m.Lines["gate.calibration."+tt.limit] = 12
			}
			set, err := Load(files, m)
			if err != nil {
				t.Fatal(err)
			}
			got := findingsWith(set.Findings, CodeLabelFieldMissing)
			checkFindings(t, got, tt.want)
		})
	}
}

// A family field no row has warns when the manifest names it or aggregates
// by family (every row would be a family of its own); otherwise nothing.
func TestFamilyFieldMissing(t *testing.T) {
	const absent = `{"item": {"case_id": "a"}}`
	tests := []struct {
		name     string
		lines    []string
		named    bool // dataset.fields.family written, at line 8
		byFamily bool // gate.aggregation: family, at line 20
		want     []wantFinding
	}{
		{name: "named and absent", lines: []string{absent}, named: true,
			want: []wantFinding{{CodeUnknownField, manifest.SeverityWarn, "gradegate.yaml", 8, "", `no row of cases.jsonl has the family field "family" (dataset.fields.family)`}}},
		{name: "aggregated by family and absent", lines: []string{absent}, byFamily: true,
			want: []wantFinding{{CodeUnknownField, manifest.SeverityWarn, "gradegate.yaml", 20, "", `under gate.aggregation: family (line 20) every row is a family of its own`}}},
		{name: "one row has it", lines: []string{absent, `{"item": {"case_id": "b", "family": "f"}}`}, named: true, byFamily: true},
		{name: "neither", lines: []string{absent}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := fstest.MapFS{"cases.jsonl": {Data: []byte(strings.Join(tt.lines, "\n"))}}
			m := testManifest(".")
			m.Lines = map[string]int{"dataset": 3}
			if tt.named {
				m.Lines["dataset.fields.family"] = 8
			}
			if tt.byFamily {
				m.Gate.Aggregation = "family"
				m.Lines["gate.aggregation"] = 20
			}
			set, err := Load(files, m)
			if err != nil {
				t.Fatal(err)
			}
			got := unknownFieldsAbout(set.Findings, "family field")
			checkFindings(t, got, tt.want)
		})
	}
}

// Each hidden field no row has warns once, at the manifest's
// dataset.hidden_fields line; one that some row has does not.
func TestHiddenFieldsMissing(t *testing.T) {
	files := fstest.MapFS{"cases.jsonl": {Data: []byte(`{"item": {"case_id": "a", "question": "q"}}` + "\n" +
		`{"item": {"case_id": "b", "reference_answer": "r"}}` + "\n")}}
	m := testManifest(".")
	m.Lines = map[string]int{"dataset": 3, "dataset.hidden_fields": 9}
	m.Dataset.HiddenFields = []string{"reference_answer", "refrence_answer", "question"}
	set, err := Load(files, m)
	if err != nil {
		t.Fatal(err)
	}
	got := unknownFieldsAbout(set.Findings, "dataset.hidden_fields")
	checkFindings(t, got, []wantFinding{{CodeUnknownField, manifest.SeverityWarn, "gradegate.yaml", 9, "",
		`dataset.hidden_fields names "refrence_answer", which no item has (did you mean "reference_answer"?): a misspelt name hides nothing`}})
}

// A written canary's item field that no row has warns at the canary, with
// the row field it is a typo of; fields some row has, and canaries whose
// items are not objects, do not.
func TestCanaryItemShape(t *testing.T) {
	files := fstest.MapFS{"cases.jsonl": {Data: []byte(
		`{"item": {"case_id": "a", "expected_total_cents": 5}}` + "\n" +
			`{"item": {"case_id": "b", "note": "n"}}` + "\n")}}
	m := testManifest(".")
	m.Canaries = []manifest.Canary{
		{Name: "typo", Item: json.RawMessage(`{"expected_totl_cents": 5, "note": "x"}`), File: "gradegate.yaml", Line: 11},
		{Name: "fine", Item: json.RawMessage(`{"expected_total_cents": 5}`), File: "gradegate.yaml", Line: 14},
		{Name: "stranger", Item: json.RawMessage(`{"zzz_unrelated": 1}`), File: "canaries.jsonl", Line: 2},
		{Name: "not an object", Item: json.RawMessage(`[1]`), File: "gradegate.yaml", Line: 17},
	}
	set, err := Load(files, m)
	if err != nil {
		t.Fatal(err)
	}
	got := unknownFieldsAbout(set.Findings, "canary ")
	checkFindings(t, got, []wantFinding{
		{CodeUnknownField, manifest.SeverityWarn, "gradegate.yaml", 11, "", `canary "typo": its item has the field "expected_totl_cents", which no item of cases.jsonl has (did you mean "expected_total_cents"?)`},
		{CodeUnknownField, manifest.SeverityWarn, "canaries.jsonl", 2, "", `canary "stranger": its item has the field "zzz_unrelated", which no item of cases.jsonl has: the canary`},
	})
}

// A written canary's sample field that no stored sample has warns, with
// the sample field it is a typo of; an answer field (a tool call where the
// stored samples are text) never does.
func TestCanarySampleShape(t *testing.T) {
	files := fstest.MapFS{"cases.jsonl": {Data: []byte(
		`{"item": {"case_id": "a"}, "sample": {"output_text": "yes", "model": "m"}}` + "\n" +
			`{"item": {"case_id": "b"}, "sample": {"output_text": "no"}}` + "\n")}}
	m := testManifest(".")
	m.Canaries = []manifest.Canary{
		{Name: "typo", Item: json.RawMessage(`{}`), Sample: json.RawMessage(`{"output_txt": "wrong"}`), File: "gradegate.yaml", Line: 11},
		{Name: "tool call", Item: json.RawMessage(`{}`), Sample: json.RawMessage(`{"output_tools": [], "model": "m"}`), File: "gradegate.yaml", Line: 14},
	}
	set, err := Load(files, m)
	if err != nil {
		t.Fatal(err)
	}
	got := unknownFieldsAbout(set.Findings, "canary ")
	checkFindings(t, got, []wantFinding{
		{CodeUnknownField, manifest.SeverityWarn, "gradegate.yaml", 11, "", `canary "typo": its sample has the field "output_txt", which no sample of cases.jsonl has (did you mean "output_text"?)`},
	})
}

func TestAnswerFields(t *testing.T) {
	for _, k := range AnswerFields() {
		if !IsAnswerField(k) {
			t.Errorf("IsAnswerField(%q) = false, want true", k)
		}
	}
	for _, k := range []string{"output_txt", "model", ""} {
		if IsAnswerField(k) {
			t.Errorf("IsAnswerField(%q) = true, want false", k)
		}
	}
	if len(AnswerFields()) != 5 {
		t.Errorf("AnswerFields() = %v: IsAnswerField must list the same names", AnswerFields())
	}
}

// unknownFieldsAbout are the unknown_field findings whose message holds
// about.
func unknownFieldsAbout(findings []manifest.Finding, about string) []manifest.Finding {
	var got []manifest.Finding
	for _, f := range findingsWith(findings, CodeUnknownField) {
		if strings.Contains(f.Message, about) {
			got = append(got, f)
		}
	}
	return got
}
