package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	hexA = "9f2c0000000000000000000000000000000000000000000000000000000000aa"
	hexB = "1b7e0000000000000000000000000000000000000000000000000000000000bb"
)

// minimal is the smallest manifest the contract accepts.
const minimal = `version: 1
name: order-summary
dataset:
  path: cases.jsonl
  sha256: "` + hexA + `"
grader:
  type: python
  source: graders/order_summary.py
  sha256: "` + hexB + `"
canaries:
  - name: pos
    sample: {output_text: "ok"}
    item: {expected: 1}
    expect: 1.0
  - name: neg
    sample: {output_text: "bad"}
    item: {expected: 1}
    expect: 0
`

func f64(v float64) *float64 { return &v }

func TestParseDefaults(t *testing.T) {
	m, err := Parse([]byte(minimal), "gradegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := &Manifest{
		Version: 1,
		Name:    "order-summary",
		Dataset: Dataset{
			Path:   "cases.jsonl",
			SHA256: hexA,
			Fields: Fields{ID: "case_id", Slice: "slice", Family: "family", Label: "human_score",
				RubricVersion: "rubric_version", LabelStatus: "label_status", ReviewerLabels: "reviewer_labels", Reason: "human_reason"},
			NearDuplicates: NearDuplicates{Threshold: 0.85},
		},
		Grader: Grader{
			Type:           "python",
			Name:           "order_summary",
			Source:         "graders/order_summary.py",
			SHA256:         hexB,
			Contract:       "sample",
			TimeoutSeconds: 120,
			MemoryMB:       2048,
			Metric:         "score",
			PassThreshold:  1.0,
			Isolation:      "worker",

			LoadTimeoutSeconds: 30,
			MaxModelCalls:      DefaultMaxModelCalls,
		},
		Canaries: []Canary{
			{Name: "pos", Sample: json.RawMessage(`{"output_text":"ok"}`), Item: json.RawMessage(`{"expected":1}`), Expect: f64(1), File: "gradegate.yaml", Line: 11},
			{Name: "neg", Sample: json.RawMessage(`{"output_text":"bad"}`), Item: json.RawMessage(`{"expected":1}`), Expect: f64(0), File: "gradegate.yaml", Line: 15},
		},
		Gate: Gate{MinPassRate: 1.0, Aggregation: "row", Determinism: Determinism{Sample: 200}, Metamorphic: defaultMetamorphic(),
			Baseline: Baseline{Alpha: 0.05}, Confidence: Confidence{Level: 0.95, Rule: "point"}, Repeats: 1},
	}
	if diff := cmp.Diff(want, m, rawJSON, cmpIgnoreLines); diff != "" {
		t.Errorf("Parse(minimal) mismatch (-want +got):\n%s", diff)
	}
}

// rawJSON compares JSON bytes as text, so key order and number forms count.
var rawJSON = cmp.Transformer("rawJSON", func(r json.RawMessage) string { return string(r) })

var cmpIgnoreLines = cmp.FilterPath(func(p cmp.Path) bool {
	return p.Last().String() == ".Lines"
}, cmp.Ignore())

// specExample is a manifest with every key, as the README's key table lists
// them.
const specExample = `version: 1                         # required; only 1 exists
name: order-summary

dataset:
  path: cases.jsonl
  sha256: "sha256:` + hexA + `"
  revision: 2026-11-29
  schema: item.schema.json
  fields:
    id: id
    slice: tags
  intended_cases: 240
  near_duplicates:
    threshold: 0.9
    fields: [request]

samples:
  path: samples.jsonl
  sha256: ` + hexB + `

rubric:
  version: order-rubric-2
  path: rubric.md
  sha256: '` + hexA + `'

grader:
  type: python
  name: order_summary_contract_v1
  source: grader.py
  sha256: "` + hexB + `"
  contract: batch
  image_tag: "2025-05-08"
  timeout_seconds: 30
  memory_mb: 512
  metric: accuracy
  pass_threshold: 0.5
  isolation: case

canaries:
  - name: equivalent-serialization
    sample: {output_text: '{ "total_cents": 2599, "currency": "USD", "status": "approved" }'}
    item: {expected_currency: USD, expected_total_cents: 2599}
    expect: 1.0
  - name: boolean-total-one-cent
    sample: {output_text: '{"status":"approved","currency":"USD","total_cents":true}'}
    item: {expected_currency: USD, expected_total_cents: 1}
    expect: 0.0
    tolerance: 0.01
  - name: corrupt-fixture
    sample:
      output_text: '<ok>'
      output_json: {total_cents: 2599, ratio: 1.0, ok: true, none: null, tags: [a, 2]}
    item: {expected_currency: USD}
    expect_error: true

gate:
  min_pass_rate: 0.95
  aggregation: family
  max_errors: 2
  max_omitted: 3
  slices:
    ineligible_shipped: {mandatory: true, min_pass_rate: 1.0, min_cases: 3}
    instruction_conflict: {mandatory: true}
    tone: {min_pass_rate: 0.8, warn_only: true}
    bare:
  calibration:
    max_false_pass: 1
  require_controls: true
  min_mutation_score: 0.9
  mutation: {timeout_counts_as_kill: true}
  determinism: {sample: 50}
  baseline: {max_drop: 0.02}
`

func TestParseSpecExample(t *testing.T) {
	m, err := Parse([]byte(specExample), "evals/x/gradegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := &Manifest{
		Version: 1,
		Name:    "order-summary",
		Dataset: Dataset{
			Path:     "cases.jsonl",
			SHA256:   hexA,
			Revision: "2026-11-29",
			Schema:   "item.schema.json",
			Fields: Fields{ID: "id", Slice: "tags", Family: "family", Label: "human_score",
				RubricVersion: "rubric_version", LabelStatus: "label_status", ReviewerLabels: "reviewer_labels", Reason: "human_reason"},
			IntendedCases:  240,
			NearDuplicates: NearDuplicates{Threshold: 0.9, Fields: []string{"request"}},
		},
		Samples: &FileRef{Path: "samples.jsonl", SHA256: hexB},
		Rubric:  &Rubric{Version: "order-rubric-2", Path: "rubric.md", SHA256: hexA},
		Grader: Grader{
			Type:           "python",
			Name:           "order_summary_contract_v1",
			Source:         "grader.py",
			SHA256:         hexB,
			Contract:       "batch",
			ImageTag:       "2025-05-08",
			TimeoutSeconds: 30,
			MemoryMB:       512,
			Metric:         "accuracy",
			PassThreshold:  0.5,
			Isolation:      "case",

			LoadTimeoutSeconds: 30,
			MaxModelCalls:      DefaultMaxModelCalls,
		},
		Canaries: []Canary{
			{
				Name:   "equivalent-serialization",
				Sample: json.RawMessage(`{"output_text":"{ \"total_cents\": 2599, \"currency\": \"USD\", \"status\": \"approved\" }"}`),
				Item:   json.RawMessage(`{"expected_currency":"USD","expected_total_cents":2599}`),
				Expect: f64(1),
				File:   "evals/x/gradegate.yaml", Line: 40,
			},
			{
				Name:      "boolean-total-one-cent",
				Sample:    json.RawMessage(`{"output_text":"{\"status\":\"approved\",\"currency\":\"USD\",\"total_cents\":true}"}`),
				Item:      json.RawMessage(`{"expected_currency":"USD","expected_total_cents":1}`),
				Expect:    f64(0),
				Tolerance: 0.01,
				File:      "evals/x/gradegate.yaml", Line: 44,
			},
			{
				Name:        "corrupt-fixture",
				Sample:      json.RawMessage(`{"output_text":"<ok>","output_json":{"total_cents":2599,"ratio":1.0,"ok":true,"none":null,"tags":["a",2]}}`),
				Item:        json.RawMessage(`{"expected_currency":"USD"}`),
				ExpectError: true,
				File:        "evals/x/gradegate.yaml", Line: 49,
			},
		},
		Gate: Gate{
			MinPassRate: 0.95,
			Aggregation: "family",
			MaxErrors:   2,
			MaxOmitted:  3,
			Slices: []SliceRule{
				{Name: "ineligible_shipped", Mandatory: true, MinPassRate: 1.0, MinCases: 3, Line: 62},
				{Name: "instruction_conflict", Mandatory: true, MinPassRate: 0.95, Line: 63},
				{Name: "tone", MinPassRate: 0.8, WarnOnly: true, Line: 64},
				{Name: "bare", MinPassRate: 0.95, Line: 65},
			},
			Calibration:      Calibration{MaxFalsePass: 1},
			RequireControls:  true,
			MinMutationScore: f64(0.9),
			Determinism:      Determinism{Sample: 50},
			Mutation:         Mutation{TimeoutCountsAsKill: true},
			Metamorphic:      defaultMetamorphic(),
			Baseline:         Baseline{MaxDrop: 0.02, Alpha: 0.05},
			Confidence:       Confidence{Level: 0.95, Rule: "point"},
			Repeats:          1,
		},
	}
	if diff := cmp.Diff(want, m, rawJSON, cmpIgnoreLines); diff != "" {
		t.Errorf("Parse(spec example) mismatch (-want +got):\n%s", diff)
	}
	for key, line := range map[string]int{
		"version":                         1,
		"dataset.sha256":                  6,
		"dataset.fields.slice":            11,
		"dataset.near_duplicates":         13,
		"samples.sha256":                  19,
		"grader.sha256":                   30,
		"grader.pass_threshold":           36,
		"canaries":                        39,
		"canaries.0":                      40,
		"canaries.2":                      49,
		"canaries.1.expect":               47,
		"canaries.2.sample":               50,
		"gate.slices.tone":                64,
		"gate.slices.tone.warn_only":      64,
		"gate.calibration.max_false_pass": 67,
	} {
		if got := m.Line(key); got != line {
			t.Errorf("Line(%q) = %d, want %d", key, got, line)
		}
	}
}

func TestParseAliases(t *testing.T) {
	in := strings.Replace(minimal, "item: {expected: 1}\n    expect: 1.0", "item: &item {expected: 1}\n    expect: 1.0", 1)
	in = strings.Replace(in, "item: {expected: 1}\n    expect: 0", "item: *item\n    expect: 0", 1)
	m, err := Parse([]byte(in), "gradegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(m.Canaries[1].Item); got != `{"expected":1}` {
		t.Errorf("aliased item = %s, want {\"expected\":1}", got)
	}
}

func TestGateSlice(t *testing.T) {
	m, err := Parse([]byte(minimal+"gate:\n  min_pass_rate: 0.9\n  slices:\n    tone: {warn_only: true}\n"), "gradegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, ok := m.Gate.Slice("tone")
	want := SliceRule{Name: "tone", MinPassRate: 0.9, WarnOnly: true, Line: 22}
	if diff := cmp.Diff(want, got); !ok || diff != "" {
		t.Errorf("Slice(tone) = %v (-want +got):\n%s", ok, diff)
	}
	if _, ok := m.Gate.Slice("billing"); ok {
		t.Error("Slice(billing) found a rule the manifest does not have")
	}
}

func TestYAMLToJSONKeepsTypesAndOrder(t *testing.T) {
	in := minimal + "" // any valid manifest: only the canary item changes
	in = strings.Replace(in, "item: {expected: 1}\n    expect: 1.0",
		"item: {b: 1, a: 1.0, c: true, d: \"x\", e: null, f: [1, 2.5, -0.0], g: {z: 1, y: 2}, h: 2026-01-01, i: 1.5e3, j: 0x10, k: '1', l: \"a<b&c\"}\n    expect: 1.0", 1)
	m, err := Parse([]byte(in), "gradegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"b":1,"a":1.0,"c":true,"d":"x","e":null,"f":[1,2.5,-0.0],"g":{"z":1,"y":2},"h":"2026-01-01","i":1500.0,"j":16,"k":"1","l":"a<b&c"}`
	if diff := cmp.Diff(want, string(m.Canaries[0].Item)); diff != "" {
		t.Errorf("item JSON mismatch (-want +got):\n%s", diff)
	}
	if !json.Valid(m.Canaries[0].Item) {
		t.Errorf("item is not valid JSON: %s", m.Canaries[0].Item)
	}
}

// wantErr is one expected problem: its key, the line holding the text at
// (the first line when at is empty), and part of its message.
type wantErr struct {
	key, at, msg string
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []wantErr
	}{
		{
			name: "misspelt gate key",
			yaml: minimal + "gate:\n  tresholds: 0.9\n",
			want: []wantErr{{"gate.tresholds", "tresholds:", "unknown key; expected one of: min_pass_rate, aggregation"}},
		},
		{
			name: "close misspelling suggests the key",
			yaml: minimal + "gate:\n  min_passrate: 0.9\n",
			want: []wantErr{{"gate.min_passrate", "min_passrate:", "did you mean min_pass_rate?"}},
		},
		{
			name: "another tool's name for a key suggests gradegate's",
			yaml: strings.Replace(minimal, "  path: cases.jsonl", "  file: cases.jsonl", 1),
			want: []wantErr{{"dataset.path", "dataset:", "required key is missing"}, {"dataset.file", "file: cases.jsonl", "unknown key (did you mean path?)"}},
		},
		{
			name: "a word-part of a key suggests the key",
			yaml: strings.Replace(minimal, "  type: python", "  type: python\n  threshold: 0.5", 1),
			want: []wantErr{{"grader.threshold", "threshold: 0.5", "unknown key (did you mean pass_threshold?)"}},
		},
		{
			name: "a digest still to be pinned says how to pin it",
			yaml: strings.Replace(minimal, `sha256: "`+hexA+`"`, "sha256: TODO", 1),
			want: []wantErr{{"dataset.sha256", "sha256: TODO", "got \"TODO\": run `gradegate pin evals/x/gradegate.yaml` to write the file's current digest"}},
		},
		{
			name: "a digest written without a value says how to pin it",
			yaml: strings.Replace(minimal, `sha256: "`+hexB+`"`, "sha256:", 1),
			want: []wantErr{{"grader.sha256", "order_summary.py\n  sha256:", "has no value; run `gradegate pin evals/x/gradegate.yaml` to write the file's current digest"}},
		},
		{
			// Left empty, the key would be the default (false): a
			// mandatory slice would stop holding without a word.
			name: "a slice's mandatory written without a value",
			yaml: minimal + "gate:\n  slices:\n    refunds: {mandatory: }\n",
			want: []wantErr{{"gate.slices.refunds.mandatory", "refunds:", "has no value; write one, or remove the key"}},
		},
		{
			name: "a number written as ~",
			yaml: minimal + "gate:\n  min_pass_rate: ~\n",
			want: []wantErr{{"gate.min_pass_rate", "min_pass_rate:", "has no value; write one, or remove the key"}},
		},
		{
			name: "a list written as null",
			yaml: minimal + "gate:\n  calibration:\n    warn_only_statuses: null\n",
			want: []wantErr{{"gate.calibration.warn_only_statuses", "warn_only_statuses:", "has no value; write one, or remove the key"}},
		},
		{
			name: "a required string without a value",
			yaml: strings.Replace(minimal, "name: order-summary", "name:", 1),
			want: []wantErr{{"name", "name:", "has no value; it is required"}},
		},
		{
			name: "a canary's expect without a value is reported once",
			yaml: strings.Replace(minimal, "    expect: 1.0", "    expect:", 1),
			want: []wantErr{{"canaries.0.expect", "    expect:", "has no value; write one, or remove the key"}},
		},
		{
			name: "a slice listed without rules is a slice with the defaults",
			yaml: minimal + "gate:\n  slices:\n    refunds:\n    tone: {mandatory: }\n",
			want: []wantErr{{"gate.slices.tone.mandatory", "tone:", "has no value"}},
		},
		{
			name: "unknown top-level key",
			yaml: minimal + "graders: {}\n",
			want: []wantErr{{"graders", "graders:", "did you mean grader?"}},
		},
		{
			name: "duplicate key",
			yaml: minimal + "name: again\n",
			want: []wantErr{{"name", "name: again", "duplicate key (first at line 2)"}},
		},
		{
			name: "missing version",
			yaml: strings.Replace(minimal, "version: 1\n", "", 1),
			want: []wantErr{{"version", "", "required key is missing"}},
		},
		{
			name: "version 2",
			yaml: strings.Replace(minimal, "version: 1", "version: 2", 1),
			want: []wantErr{{"version", "version:", "must be 1"}},
		},
		{
			name: "version as string",
			yaml: strings.Replace(minimal, "version: 1", `version: "1"`, 1),
			want: []wantErr{{"version", "version:", `must be an integer, got the string "1"`}},
		},
		{
			name: "missing name",
			yaml: strings.Replace(minimal, "name: order-summary\n", "", 1),
			want: []wantErr{{"name", "", "required key is missing"}},
		},
		{
			name: "name as a boolean",
			yaml: strings.Replace(minimal, "name: order-summary", "name: true", 1),
			want: []wantErr{{"name", "name:", "must be a string, got true"}},
		},
		{
			name: "name as a list",
			yaml: strings.Replace(minimal, "name: order-summary", "name: [a]", 1),
			want: []wantErr{{"name", "name:", "must be a string, got a list"}},
		},
		{
			name: "empty name",
			yaml: strings.Replace(minimal, "name: order-summary", `name: ""`, 1),
			want: []wantErr{{"name", "name:", "must not be empty"}},
		},
		{
			name: "missing dataset digest",
			yaml: strings.Replace(minimal, "  sha256: \""+hexA+"\"\n", "", 1),
			want: []wantErr{{"dataset.sha256", "dataset:", "required key is missing"}},
		},
		{
			name: "dataset not a mapping",
			yaml: strings.Replace(minimal, "dataset:\n  path: cases.jsonl\n  sha256: \""+hexA+"\"\n", "dataset: cases.jsonl\n", 1),
			want: []wantErr{{"dataset", "dataset:", `must be a mapping, got the string "cases.jsonl"`}},
		},
		{
			name: "uppercase digest",
			yaml: strings.Replace(minimal, hexA, strings.ToUpper(hexA), 1),
			want: []wantErr{{"dataset.sha256", "9F2C", "must be 64 lowercase hex digits"}},
		},
		{
			name: "short digest",
			yaml: strings.Replace(minimal, hexB, "sha256:1b7e", 1),
			want: []wantErr{{"grader.sha256", "1b7e", `got "sha256:1b7e"`}},
		},
		{
			name: "absolute path",
			yaml: strings.Replace(minimal, "path: cases.jsonl", "path: /etc/cases.jsonl", 1),
			want: []wantErr{{"dataset.path", "/etc/", "must be relative to the manifest's folder"}},
		},
		{
			name: "missing grader keys",
			yaml: strings.Replace(minimal, "  type: python\n  source: graders/order_summary.py\n  sha256: \""+hexB+"\"\n", "  metric: score\n", 1),
			want: []wantErr{
				{"grader.type", "grader:", "required key is missing"},
				{"grader.source", "grader:", "required key is missing"},
				{"grader.sha256", "grader:", "required key is missing"},
			},
		},
		{
			name: "grader type",
			yaml: strings.Replace(minimal, "type: python", "type: ruby", 1),
			want: []wantErr{{"grader.type", "type:", `must be one of python | score_model | label_model | multi, got "ruby"`}},
		},
		{
			name: "grader contract",
			yaml: strings.Replace(minimal, "type: python", "type: python\n  contract: stream", 1),
			want: []wantErr{{"grader.contract", "contract:", `must be one of sample | batch | model_backed, got "stream"`}},
		},
		{
			name: "grader isolation",
			yaml: strings.Replace(minimal, "type: python", "type: python\n  isolation: process", 1),
			want: []wantErr{{"grader.isolation", "isolation:", "must be one of worker | case"}},
		},
		{
			name: "timeout too long",
			yaml: strings.Replace(minimal, "type: python", "type: python\n  timeout_seconds: 601", 1),
			want: []wantErr{{"grader.timeout_seconds", "timeout_seconds:", "must be between 1 and 600, got 601"}},
		},
		{
			name: "load timeout too long",
			yaml: strings.Replace(minimal, "type: python", "type: python\n  load_timeout_seconds: 601", 1),
			want: []wantErr{{"grader.load_timeout_seconds", "load_timeout_seconds:", "must be between 1 and 600, got 601"}},
		},
		{
			name: "load timeout not an integer",
			yaml: strings.Replace(minimal, "type: python", "type: python\n  load_timeout_seconds: \"30s\"", 1),
			want: []wantErr{{"grader.load_timeout_seconds", "load_timeout_seconds:", "must be an integer"}},
		},
		{
			name: "timeout zero",
			yaml: strings.Replace(minimal, "type: python", "type: python\n  timeout_seconds: 0", 1),
			want: []wantErr{{"grader.timeout_seconds", "timeout_seconds:", "must be between 1 and 600, got 0"}},
		},
		{
			name: "timeout not an integer",
			yaml: strings.Replace(minimal, "type: python", "type: python\n  timeout_seconds: 1.5", 1),
			want: []wantErr{{"grader.timeout_seconds", "timeout_seconds:", "must be an integer, got the number 1.5"}},
		},
		{
			name: "memory zero",
			yaml: strings.Replace(minimal, "type: python", "type: python\n  memory_mb: 0", 1),
			want: []wantErr{{"grader.memory_mb", "memory_mb:", "must be between 64 and 65536, got 0"}},
		},
		{
			name: "pass threshold outside range",
			yaml: strings.Replace(minimal, "type: python", "type: python\n  range: [0, 5]\n  pass_threshold: 6", 1),
			want: []wantErr{{"grader.pass_threshold", "pass_threshold:", "must be within range [0, 5], got 6"}},
		},
		{
			name: "range inverted",
			yaml: strings.Replace(minimal, "type: python", "type: python\n  range: [5, 0]", 1),
			want: []wantErr{{"grader.range", "range:", "min must be below max"}},
		},
		{
			name: "on_exception unknown",
			yaml: strings.Replace(minimal, "type: python", "type: python\n  on_exception: skip", 1),
			want: []wantErr{{"grader.on_exception", "on_exception:", `must be one of hold | zero, got "skip"`}},
		},
		{
			name: "pass threshold NaN",
			yaml: strings.Replace(minimal, "type: python", "type: python\n  pass_threshold: .nan", 1),
			want: []wantErr{{"grader.pass_threshold", "pass_threshold:", "must be a finite number"}},
		},
		{
			name: "pass threshold as string",
			yaml: strings.Replace(minimal, "type: python", "type: python\n  pass_threshold: \"1\"", 1),
			want: []wantErr{{"grader.pass_threshold", "pass_threshold:", `must be a number, got the string "1"`}},
		},
		{
			name: "near duplicate threshold",
			yaml: strings.Replace(minimal, "path: cases.jsonl", "path: cases.jsonl\n  near_duplicates: {threshold: 2}", 1),
			want: []wantErr{{"dataset.near_duplicates.threshold", "near_duplicates:", "must be between 0 and 1, got 2"}},
		},
		{
			name: "near duplicate fields not a list",
			yaml: strings.Replace(minimal, "path: cases.jsonl", "path: cases.jsonl\n  near_duplicates:\n    fields: request", 1),
			want: []wantErr{{"dataset.near_duplicates.fields", "fields:", "must be a list of strings"}},
		},
		{
			name: "near duplicate screen switch not a boolean",
			yaml: strings.Replace(minimal, "path: cases.jsonl", "path: cases.jsonl\n  near_duplicates: {enabled: \"no\"}", 1),
			want: []wantErr{{"dataset.near_duplicates.enabled", "near_duplicates:", "must be true or false"}},
		},
		{
			name: "near duplicate field path",
			yaml: strings.Replace(minimal, "path: cases.jsonl", "path: cases.jsonl\n  near_duplicates:\n    fields:\n      - request\n      - messages[x].content", 1),
			want: []wantErr{{"dataset.near_duplicates.fields.1", "messages[x]", `"messages[x].content" has [x]; a list position is [] or a number from 0`}},
		},
		{
			name: "intended cases zero",
			yaml: strings.Replace(minimal, "path: cases.jsonl", "path: cases.jsonl\n  intended_cases: 0", 1),
			want: []wantErr{{"dataset.intended_cases", "intended_cases:", "must be at least 1, got 0"}},
		},
		{
			name: "gate values",
			yaml: minimal + "gate:\n  min_pass_rate: -0.1\n  aggregation: mean\n  max_errors: -1\n  max_omitted: many\n  require_controls: 1\n  calibration: {max_false_pass: -2}\n",
			want: []wantErr{
				{"gate.min_pass_rate", "min_pass_rate:", "must be between 0 and 1, got -0.1"},
				{"gate.aggregation", "aggregation:", `must be one of row | family, got "mean"`},
				{"gate.max_errors", "max_errors:", "must be at least 0, got -1"},
				{"gate.max_omitted", "max_omitted:", `must be an integer, got the string "many"`},
				{"gate.require_controls", "require_controls:", "must be true or false, got the integer 1"},
				{"gate.calibration.max_false_pass", "calibration:", "must be at least 0, got -2"},
			},
		},
		{
			name: "timeout_counts_as_kill is a boolean",
			yaml: minimal + "gate:\n  mutation: {timeout_counts_as_kill: yes please}\n",
			want: []wantErr{
				{"gate.mutation.timeout_counts_as_kill", "mutation:", "must be true or false"},
			},
		},
		{
			name: "determinism sample must be a count",
			yaml: minimal + "gate:\n  determinism: {sample: -1}\n",
			want: []wantErr{
				{"gate.determinism.sample", "determinism:", "must be at least 0, got -1"},
			},
		},
		{
			name: "baseline max_drop is a fraction",
			yaml: minimal + "gate:\n  baseline:\n    max_drop: 1.5\n",
			want: []wantErr{
				{"gate.baseline.max_drop", "max_drop: 1.5", "must be between 0 and 1, got 1.5"},
			},
		},
		{
			name: "baseline keys are strict",
			yaml: minimal + "gate:\n  baseline:\n    max_drops: 0.1\n",
			want: []wantErr{
				{"gate.baseline.max_drops", "max_drops: 0.1", "did you mean max_drop?"},
			},
		},
		{
			name: "determinism keys are strict",
			yaml: minimal + "gate:\n  determinism:\n    samples: 10\n",
			want: []wantErr{
				{"gate.determinism.samples", "samples: 10", "did you mean sample?"},
			},
		},
		{
			name: "slice rules",
			yaml: minimal + "gate:\n  slices:\n    tone: {warn_only: true, mandatory: true}\n    refunds: {min_case: 3}\n    billing: {min_cases: -1}\n    legal: strict\n",
			want: []wantErr{
				{"gate.slices.tone", "tone:", "mandatory and warn_only contradict"},
				{"gate.slices.refunds.min_case", "refunds:", "did you mean min_cases?"},
				{"gate.slices.billing.min_cases", "billing:", "must be at least 0, got -1"},
				{"gate.slices.legal", "legal:", `must be a mapping, got the string "strict"`},
			},
		},
		{
			name: "slices as a list",
			yaml: minimal + "gate:\n  slices: [tone]\n",
			want: []wantErr{{"gate.slices", "slices:", "must be a mapping of slice name to rule"}},
		},
		{
			name: "rubric path without digest",
			yaml: minimal + "rubric:\n  path: rubric.md\n",
			want: []wantErr{{"rubric.sha256", "rubric:", "rubric.path is set"}},
		},
		{
			name: "rubric digest without path",
			yaml: minimal + "rubric:\n  version: r2\n  sha256: " + hexA + "\n",
			want: []wantErr{{"rubric.sha256", "  sha256: " + hexA, "rubric.path is not"}},
		},
		{
			name: "samples without path",
			yaml: minimal + "samples:\n  sha256: " + hexA + "\n",
			want: []wantErr{{"samples.path", "samples:", "required key is missing"}},
		},
		{
			name: "missing canaries",
			yaml: minimal[:strings.Index(minimal, "canaries:")],
			want: []wantErr{{"canaries", "", "required key is missing"}},
		},
		{
			name: "canaries as a string",
			yaml: minimal[:strings.Index(minimal, "canaries:")] + "canaries: canaries.jsonl\n",
			want: []wantErr{{"canaries", "canaries:", "must be a list of canaries or {path: FILE}"}},
		},
		{
			name: "canaries file without path",
			yaml: minimal[:strings.Index(minimal, "canaries:")] + "canaries: {file: canaries.jsonl}\n",
			want: []wantErr{
				{"canaries.file", "canaries:", "unknown key (did you mean path?); expected one of: path"},
				{"canaries.path", "canaries:", "required key is missing"},
			},
		},
		{
			name: "canary with both expect and expect_error",
			yaml: strings.Replace(minimal, "expect: 0\n", "expect: 0\n    expect_error: true\n", 1),
			want: []wantErr{{"canaries.1.expect_error", "expect_error:", "set either expect or expect_error: true, not both"}},
		},
		{
			name: "canary without expectation",
			yaml: strings.Replace(minimal, "    expect: 0\n", "    expect_error: false\n", 1),
			want: []wantErr{{"canaries.1.expect", "- name: neg", "required: the exact reward"}},
		},
		{
			name: "canary keys",
			yaml: strings.Replace(minimal, "  - name: neg\n    sample: {output_text: \"bad\"}\n", "  - name: neg\n    sample: bad\n    expected: 0\n    tolerance: -1\n", 1),
			want: []wantErr{
				{"canaries.1.sample", "sample: bad", "must be a mapping, got the string \"bad\""},
				{"canaries.1.expected", "    expected: 0", "did you mean expect?"},
				{"canaries.1.tolerance", "tolerance:", "must not be negative"},
			},
		},
		{
			name: "canary missing sample and item",
			yaml: strings.Replace(minimal, "    sample: {output_text: \"bad\"}\n    item: {expected: 1}\n    expect: 0\n", "    expect: 0\n", 1),
			want: []wantErr{
				{"canaries.1.sample", "- name: neg", "required key is missing"},
				{"canaries.1.item", "- name: neg", "required key is missing"},
			},
		},
		{
			name: "canary item with infinity",
			yaml: strings.Replace(minimal, "item: {expected: 1}\n    expect: 0", "item: {expected: .inf}\n    expect: 0", 1),
			want: []wantErr{{"canaries.1.item", "expected: .inf", ".inf has no JSON form"}},
		},
		{
			name: "canary expect as a string",
			yaml: strings.Replace(minimal, "    expect: 0\n", "    expect: \"0\"\n", 1),
			want: []wantErr{{"canaries.1.expect", `expect: "0"`, `must be a number, got the string "0"`}},
		},
		{
			name: "canary expect_error as a string",
			yaml: strings.Replace(minimal, "    expect: 0\n", "    expect_error: \"yes\"\n", 1),
			want: []wantErr{{"canaries.1.expect_error", "expect_error:", `must be true or false, got the string "yes"`}},
		},
		{
			name: "duplicate canary names",
			yaml: strings.Replace(minimal, "name: neg", "name: pos", 1),
			want: []wantErr{{"canaries", "expect: 1.0\n  - name: pos", `duplicate canary name "pos" (first at line 11)`}},
		},
		{
			name: "no negative canary",
			yaml: strings.Replace(minimal, "    expect: 0\n", "    expect: 1\n", 1),
			want: []wantErr{{"canaries", "canaries:", "missing a negative canary (expect < 1; an expect_error canary does not count"}},
		},
		{
			// A grader that raises on a broken fixture and returns 1.0 for
			// everything else can never fail a candidate.
			name: "expect_error does not count as the negative",
			yaml: strings.Replace(minimal, "    expect: 0\n", "    expect_error: true\n", 1),
			want: []wantErr{{"canaries", "canaries:", "missing a negative canary"}},
		},
		{
			name: "expect equal to the threshold is positive",
			yaml: strings.Replace(minimal, "type: python", "type: python\n  pass_threshold: 1", 1),
			want: []wantErr{},
		},
		{
			name: "positive below a raised threshold",
			yaml: strings.Replace(strings.Replace(minimal, "expect: 1.0", "expect: 0.7", 1), "type: python", "type: python\n  pass_threshold: 0.8", 1),
			want: []wantErr{{"canaries", "canaries:", "missing a positive canary (expect >= pass_threshold 0.8)"}},
		},
		{
			name: "empty canary list",
			yaml: minimal[:strings.Index(minimal, "canaries:")] + "canaries: []\n",
			want: []wantErr{{"canaries", "canaries:", "missing a positive canary (expect >= pass_threshold 1) and a negative canary"}},
		},
		{
			name: "syntax error",
			yaml: "version: 1\nname: [unclosed\n",
			want: []wantErr{{"", "", "invalid YAML"}},
		},
		{
			name: "two documents",
			yaml: minimal + "---\nversion: 1\n",
			want: []wantErr{{"", "---", "more than one YAML document"}},
		},
		{
			name: "empty file",
			yaml: "# nothing here\n",
			want: []wantErr{{"", "-", "manifest is empty"}},
		},
		{
			name: "not a mapping",
			yaml: "- version: 1\n",
			want: []wantErr{{"", "", "the manifest must be a mapping of keys"}},
		},
		{
			name: "every problem at once",
			yaml: `version: 2
name: order-summary
dataset:
  path: cases.jsonl
  sha256: "abc"
grader:
  type: python
  source: grader.py
  sha256: "` + hexB + `"
  timeout_seconds: 9000
canaries:
  - name: only-positive
    sample: {}
    item: {}
    expect: 1
gate:
  tresholds: 0.9
`,
			want: []wantErr{
				{"version", "version:", "must be 1"},
				{"dataset.sha256", `"abc"`, "must be 64 lowercase hex digits"},
				{"grader.timeout_seconds", "timeout_seconds:", "must be between 1 and 600"},
				{"canaries", "canaries:", "missing a negative canary"},
				{"gate.tresholds", "tresholds:", "unknown key"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const file = "evals/x/gradegate.yaml"
			_, err := Parse([]byte(tt.yaml), file)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Parse: unexpected error:\n%v", err)
				}
				return
			}
			if !errors.Is(err, ErrInput) {
				t.Fatalf("Parse error = %v, want one matching ErrInput", err)
			}
			got := inputErrors(t, err)
			if len(got) != len(tt.want) {
				t.Fatalf("Parse reported %d problems, want %d:\n%v", len(got), len(tt.want), err)
			}
			for i, w := range tt.want {
				line := lineOf(t, tt.yaml, w.at)
				e := got[i]
				if e.File != file || e.Line != line || e.Key != w.key || !strings.Contains(e.Msg, w.msg) {
					t.Errorf("problem %d = %#v\nwant file %s, line %d, key %q, message containing %q", i, e, file, line, w.key, w.msg)
				}
				prefix := fmt.Sprintf("%s:%d: ", file, line)
				if line == 0 {
					prefix = file + ": "
				}
				if w.key != "" {
					prefix += w.key + ": "
				}
				if !strings.HasPrefix(e.Error(), prefix) {
					t.Errorf("problem %d reads %q, want it to start with %q", i, e.Error(), prefix)
				}
			}
		})
	}
}

// inputErrors unpacks the *Error values of a (possibly joined) error.
func inputErrors(t *testing.T, err error) []*Error {
	t.Helper()
	if e, ok := err.(*Error); ok {
		return []*Error{e}
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("error %T is neither *Error nor joined: %v", err, err)
	}
	var out []*Error
	for _, e := range j.Unwrap() {
		out = append(out, inputErrors(t, e)...)
	}
	return out
}

// lineOf returns the 1-based line where the last line of at is in text; 1
// when at is "", and 0 (no line) when at is "-".
func lineOf(t *testing.T, text, at string) int {
	t.Helper()
	switch at {
	case "":
		return 1
	case "-":
		return 0
	}
	i := strings.Index(text, at)
	if i < 0 {
		t.Fatalf("test bug: %q not in the manifest", at)
	}
	return strings.Count(text[:i+len(at)], "\n") + 1 - strings.Count(at[strings.LastIndex(at, "\n")+1:], "\n")
}

func TestParseNearDuplicatesEnabled(t *testing.T) {
	tests := []struct {
		name string
		nd   string
		want bool
	}{
		{"absent: on", "", true},
		{"enabled: true", "\n  near_duplicates: {enabled: true}", true},
		{"enabled: false", "\n  near_duplicates: {enabled: false}", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(strings.Replace(minimal, "path: cases.jsonl", "path: cases.jsonl"+tt.nd, 1)), "gradegate.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Dataset.NearDuplicates.On(); got != tt.want {
				t.Errorf("On() = %v, want %v", got, tt.want)
			}
		})
	}
}
