package dataset

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	pathpkg "path"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gradegate/gradegate/manifest"
)

// testManifest is a manifest as manifest.Parse would return it, with every
// default filled in, for a suite in dir.
func testManifest(dir string) *manifest.Manifest {
	return &manifest.Manifest{
		File:    pathpkg.Join(dir, "gradegate.yaml"),
		Dir:     dir,
		Version: 1,
		Name:    "test",
		Dataset: manifest.Dataset{
			Path:           "cases.jsonl",
			Fields:         manifest.Fields{ID: "case_id", Slice: "slice", Family: "family", Label: "human_score"},
			NearDuplicates: manifest.NearDuplicates{Threshold: 0.85},
		},
		Grader: manifest.Grader{Type: "python", Source: "grader.py", Contract: "sample",
			TimeoutSeconds: 120, MemoryMB: 2048, Metric: "score", PassThreshold: 1.0, Isolation: "worker"},
		Gate: manifest.Gate{MinPassRate: 1.0, Aggregation: "row"},
	}
}

func hexSum(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func intp(n int) *int { return &n }

// findingsWith returns the findings of code, in order.
func findingsWith(findings []manifest.Finding, code string) []manifest.Finding {
	var got []manifest.Finding
	for _, f := range findings {
		if f.Code == code {
			got = append(got, f)
		}
	}
	return got
}

// readIDs reads every row of r and returns their case ids, in order.
func readIDs(r *Reader) []string {
	var ids []string
	for {
		c, ok := r.Next()
		if !ok {
			return ids
		}
		ids = append(ids, c.ID)
	}
}

// errorStrings flattens a (joined) error into the messages of its
// *manifest.Error values, in order.
func errorStrings(t *testing.T, err error) []string {
	t.Helper()
	var out []string
	var walk func(error)
	walk = func(err error) {
		if joined, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range joined.Unwrap() {
				walk(e)
			}
			return
		}
		var me *manifest.Error
		if !errors.As(err, &me) {
			t.Errorf("error %q is not a *manifest.Error", err)
			return
		}
		out = append(out, me.Error())
	}
	walk(err)
	return out
}

func TestLoadBasic(t *testing.T) {
	m := testManifest("basic")
	m.Samples = &manifest.FileRef{Path: "samples.jsonl"}
	m.Dataset.Schema = "item.schema.json"
	m.Dataset.NearDuplicates.Fields = []string{"request"}

	set, err := Load(os.DirFS("testdata"), m)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	const file, samples = "basic/cases.jsonl", "basic/samples.jsonl"
	want := []Case{
		{
			ID: "a-1", Slices: []string{"ineligible_shipped"}, Family: "cancel", Label: intp(1),
			Item:         raw(`{"case_id": "a-1", "slice": "ineligible_shipped", "family": "cancel", "human_score": 1, "request": "Cancel my shipped blender order please", "expected_total_cents": 8999}`),
			GraderItem:   raw(`{"case_id": "a-1", "slice": "ineligible_shipped", "family": "cancel", "request": "Cancel my shipped blender order please", "expected_total_cents": 8999}`),
			Sample:       raw(`{"output_text": "{\"status\":\"ineligible\"}", "choices": []}`),
			SampleSHA256: hexSum(`{"output_text":"{\"status\":\"ineligible\"}","choices":[]}`),
			File:         file, Line: 1, SampleFile: samples, SampleLine: 2,
		},
		{
			ID: "a-2", Slices: []string{"ineligible_shipped", "currency_edge"}, Label: intp(0),
			Item:         raw(`{"case_id": "a-2", "slice": ["ineligible_shipped", "currency_edge", "ineligible_shipped"], "human_score": 0, "request": "Refund the teapot that left Kyoto yesterday", "expected_total_cents": 4800}`),
			GraderItem:   raw(`{"case_id": "a-2", "slice": ["ineligible_shipped", "currency_edge", "ineligible_shipped"], "request": "Refund the teapot that left Kyoto yesterday", "expected_total_cents": 4800}`),
			Sample:       raw(`{"output_text": "{\"status\": \"ineligible\"}"}`),
			SampleSHA256: hexSum(`{"output_text":"{\"status\": \"ineligible\"}"}`),
			File:         file, Line: 2, SampleFile: samples, SampleLine: 1,
		},
		{
			ID: "a-3", Label: intp(1),
			Item:         raw(`{"case_id": "a-3", "human_score": 1.0, "request": "status order 50330", "expected_total_cents": 1200}`),
			GraderItem:   raw(`{"case_id": "a-3", "request": "status order 50330", "expected_total_cents": 1200}`),
			Sample:       raw(`{ "output_text" : "x" }`),
			SampleSHA256: "8b9d39b51f49554bdb2212762ee31674dcd058081676059f009de7b7e3044981",
			File:         file, Line: 4, SampleFile: samples, SampleLine: 3,
		},
		{
			ID:           "a-4",
			Item:         raw(`{"case_id": "a-4", "slice": null, "family": null, "human_score": null, "request": "What did the yoga mat cost me on Tuesday", "expected_total_cents": 3199}`),
			GraderItem:   raw(`{"case_id": "a-4", "slice": null, "family": null, "request": "What did the yoga mat cost me on Tuesday", "expected_total_cents": 3199}`),
			Sample:       raw(`{"output_text": "{\"status\":\"approved\"}"}`),
			SampleSHA256: "0721f6cb7859019fc989ca93a1bcd3737fd9abfcc52364c498610ad77b57b7e6",
			File:         file, Line: 5, SampleFile: file, SampleLine: 5,
		},
		{
			ID: "a-5", Slices: []string{"tone"},
			Item:       raw(`{"case_id": "a-5", "slice": "tone", "request": "Kindly furnish a summary of purchase order 2210", "expected_total_cents": 128000}`),
			GraderItem: raw(`{"case_id": "a-5", "slice": "tone", "request": "Kindly furnish a summary of purchase order 2210", "expected_total_cents": 128000}`),
			File:       file, Line: 6,
		},
	}
	if diff := cmp.Diff(want, set.Cases); diff != "" {
		t.Errorf("Cases (-want +got):\n%s", diff)
	}
	if set.Intended != 5 {
		t.Errorf("Intended = %d, want 5 (the number of rows)", set.Intended)
	}
	if len(set.Findings) != 0 {
		t.Errorf("Findings = %+v, want none", set.Findings)
	}
}

func TestLoadMalformed(t *testing.T) {
	m := testManifest("malformed")
	m.Samples = &manifest.FileRef{Path: "samples.jsonl"}

	set, err := Load(os.DirFS("testdata"), m)
	if set != nil {
		t.Errorf("Load returned a set along with an error")
	}
	if !errors.Is(err, manifest.ErrInput) {
		t.Fatalf("Load error = %v, want an input error", err)
	}
	// Every bad line at once. The samples join waits for a clean dataset, so
	// ghost-1, ghost-2 and the second m-1 sample are not reported yet.
	want := []string{
		`malformed/cases.jsonl:2: not valid JSON: unexpected end of JSON input`,
		`malformed/cases.jsonl:3: a line must be a JSON object, not an array`,
		`malformed/cases.jsonl:4: item: missing; every dataset line needs an item object`,
		`malformed/cases.jsonl:5: item: must be an object, not a string`,
		`malformed/cases.jsonl:6: notes: unknown key; a dataset line holds only "item" and an optional "sample"`,
		`malformed/cases.jsonl:7: sample: must be an object, not a string`,
		`malformed/cases.jsonl:8: not valid JSON: invalid character '{' after top-level value`,
		"malformed/cases.jsonl:11: item: %s",
		"malformed/cases.jsonl:12: item.human_score: %s",
		`malformed/samples.jsonl:4: case_id: must be a non-empty string, not a number`,
		`malformed/samples.jsonl:5: output_text: unknown key; a samples line holds only "case_id" and "sample"`,
		`malformed/samples.jsonl:5: sample: missing`,
		`malformed/samples.jsonl:7: not valid JSON: invalid character 'o' in literal null (expecting 'u')`,
		"malformed/samples.jsonl:8: case_id: %s",
	}
	for i := range want {
		if strings.Contains(want[i], "%s") {
			want[i] = fmt.Sprintf(want[i], repeatedMsg)
		}
	}
	if diff := cmp.Diff(want, errorStrings(t, err)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestLoadInputErrors(t *testing.T) {
	const okCases = `{"item": {"case_id": "k-1"}}
{"item": {"case_id": "k-2"}, "sample": {"output_text": "inline"}}
{"item": {"case_id": "k-3"}}
`
	tests := []struct {
		name     string
		files    fstest.MapFS
		samples  bool
		schema   string
		want     []string
		notExist bool // errors.Is(err, fs.ErrNotExist)
	}{
		{
			name:     "dataset missing",
			files:    fstest.MapFS{},
			want:     []string{"suite/gradegate.yaml: dataset.path: cannot read suite/cases.jsonl: file does not exist"},
			notExist: true,
		},
		{
			name:  "dataset empty",
			files: fstest.MapFS{"suite/cases.jsonl": {Data: []byte("\n  \n")}},
			want:  []string{"suite/cases.jsonl: holds no cases"},
		},
		{
			name:     "samples missing",
			files:    fstest.MapFS{"suite/cases.jsonl": {Data: []byte(okCases)}},
			samples:  true,
			want:     []string{"suite/gradegate.yaml: samples.path: cannot read suite/samples.jsonl: file does not exist"},
			notExist: true,
		},
		{
			name: "samples for unknown cases are all listed",
			files: fstest.MapFS{
				"suite/cases.jsonl": {Data: []byte(okCases)},
				"suite/samples.jsonl": {Data: []byte(`{"case_id": "k-9", "sample": {}}
{"case_id": "k-1", "sample": {}}

{"case_id": "K-1", "sample": {}}
`)},
			},
			samples: true,
			want: []string{
				`suite/samples.jsonl:1: case_id: "k-9" is not a case in suite/cases.jsonl`,
				`suite/samples.jsonl:4: case_id: "K-1" is not a case in suite/cases.jsonl`,
			},
		},
		{
			name: "two samples for one case",
			files: fstest.MapFS{
				"suite/cases.jsonl": {Data: []byte(okCases)},
				"suite/samples.jsonl": {Data: []byte(`{"case_id": "k-1", "sample": {"output_text": "a"}}
{"case_id": "k-1", "sample": {"output_text": "b"}}
`)},
			},
			samples: true,
			want:    []string{`suite/samples.jsonl:2: case_id: second sample for case "k-1" (the first is on line 1)`},
		},
		{
			name: "inline sample and a samples line",
			files: fstest.MapFS{
				"suite/cases.jsonl":   {Data: []byte(okCases)},
				"suite/samples.jsonl": {Data: []byte(`{"case_id": "k-2", "sample": {"output_text": "file"}}` + "\n")},
			},
			samples: true,
			want:    []string{`suite/samples.jsonl:1: case_id: case "k-2" already has an inline sample at suite/cases.jsonl:2; keep one of the two`},
		},
		{
			name: "a synthetic id is not a join key",
			files: fstest.MapFS{
				"suite/cases.jsonl":   {Data: []byte(`{"item": {"request": "no id"}}` + "\n")},
				"suite/samples.jsonl": {Data: []byte(`{"case_id": "suite/cases.jsonl:1", "sample": {}}` + "\n")},
			},
			samples: true,
			want:    []string{`suite/samples.jsonl:1: case_id: "suite/cases.jsonl:1" is not a case in suite/cases.jsonl (1 row(s) of suite/cases.jsonl have no usable case_id, first on line 1)`},
		},
		{
			name: "schema is not JSON",
			files: fstest.MapFS{
				"suite/cases.jsonl": {Data: []byte(okCases)},
				"suite/schema.json": {Data: []byte(`{"type": "object",}`)},
			},
			schema: "schema.json",
			want:   []string{"suite/schema.json: not a usable JSON Schema: invalid character '}' looking for beginning of object key string"},
		},
		{
			name: "schema references the network",
			files: fstest.MapFS{
				"suite/cases.jsonl": {Data: []byte(okCases)},
				"suite/schema.json": {Data: []byte(`{"$ref": "https://example.com/item.json"}`)},
			},
			schema: "schema.json",
			want: []string{`suite/schema.json: not a usable JSON Schema: failing loading "https://example.com/item.json": ` +
				`schema reference "https://example.com/item.json": only files next to the schema can be referenced`},
		},
		{
			name: "dataset and schema errors together",
			files: fstest.MapFS{
				"suite/cases.jsonl": {Data: []byte("{\"item\": {}}\n{\n")},
			},
			schema:   "missing.json",
			notExist: true,
			want: []string{
				"suite/cases.jsonl:2: not valid JSON: unexpected end of JSON input",
				"suite/gradegate.yaml: dataset.schema: cannot read suite/missing.json: file does not exist",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testManifest("suite")
			if tt.samples {
				m.Samples = &manifest.FileRef{Path: "samples.jsonl"}
			}
			m.Dataset.Schema = tt.schema
			_, err := Load(tt.files, m)
			if !errors.Is(err, manifest.ErrInput) {
				t.Fatalf("Load error = %v, want an input error", err)
			}
			if got := errors.Is(err, fs.ErrNotExist); got != tt.notExist {
				t.Errorf("errors.Is(err, fs.ErrNotExist) = %v, want %v", got, tt.notExist)
			}
			if diff := cmp.Diff(tt.want, errorStrings(t, err)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// wantFinding is a finding with its message checked by substring.
type wantFinding struct {
	Code     string
	Severity manifest.Severity
	File     string
	Line     int
	CaseID   string
	Msg      string // a substring of Message
}

func checkFindings(t *testing.T, got []manifest.Finding, want []wantFinding) {
	t.Helper()
	gotW := make([]wantFinding, len(got))
	for i, f := range got {
		gotW[i] = wantFinding{f.Code, f.Severity, f.File, f.Line, f.CaseID, f.Message}
	}
	msgContains := cmp.Comparer(func(a, b wantFinding) bool {
		if a.Code != b.Code || a.Severity != b.Severity || a.File != b.File || a.Line != b.Line || a.CaseID != b.CaseID {
			return false
		}
		return strings.Contains(a.Msg, b.Msg) || strings.Contains(b.Msg, a.Msg)
	})
	if diff := cmp.Diff(want, gotW, msgContains, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

func TestLoadContract(t *testing.T) {
	m := testManifest("contract")
	m.Dataset.Schema = "item.schema.json"
	m.Dataset.NearDuplicates.Fields = []string{"request"}
	m.Gate.Slices = []manifest.SliceRule{
		{Name: "ineligible_shipped", Mandatory: true, MinPassRate: 1, Line: 30},
		{Name: "instruction_conflict", Mandatory: true, MinPassRate: 1, Line: 31},
		{Name: "happy_path", MinPassRate: 1, Line: 32},
		{Name: "tone", Mandatory: true, MinPassRate: 1, Line: 33},
	}

	set, err := Load(os.DirFS("testdata"), m)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	const (
		f    = "contract/cases.jsonl"
		mf   = "contract/gradegate.yaml"
		hold = manifest.SeverityHold
		warn = manifest.SeverityWarn
	)
	checkFindings(t, set.Findings, []wantFinding{
		{CodeMissingField, hold, f, 2, f + ":2", `item has no "case_id"`},
		{CodeSchemaViolation, hold, f, 2, f + ":2", "missing property 'case_id'"},
		{CodeMissingField, hold, f, 3, f + ":3", "item.case_id must be a non-empty string, not a number"},
		{CodeSchemaViolation, hold, f, 3, f + ":3", "at '/case_id': got number, want string"},
		{CodeLabelDomain, hold, f, 4, "c-4", "item.human_score must be 0 or 1, not 2; the label is ignored"},
		{CodeLabelDomain, hold, f, 5, "c-5", "not true"},
		{CodeSchemaViolation, hold, f, 6, "c-1", "item.slice must be a string or a list of strings, not a number"},
		{CodeSchemaViolation, hold, f, 6, "c-1", "item.family must be a string, not an array"},
		{CodeSchemaViolation, hold, f, 7, "c-7", "item.slice must be a string or a list of non-empty strings"},
		{CodeSchemaViolation, hold, f, 7, "c-7", "item does not satisfy contract/item.schema.json: at '/expected_total_cents': got string, want integer"},
		{CodeMissingField, hold, f, 9, f + ":9", "item.case_id must be a non-empty string, not an empty string"},
		{CodeDuplicateCaseID, hold, f, 1, "c-1", `case_id "c-1" is on 3 lines: 1, 6, 8`},
		{CodeMissingControls, warn, mf, 30, "", `mandatory slice "ineligible_shipped" has only positive labels (2 labeled 1)`},
		{CodeMissingControls, warn, mf, 31, "", `mandatory slice "instruction_conflict" has only negative labels (1 labeled 0)`},
		{CodeMissingControls, warn, mf, 33, "", `mandatory slice "tone" has no cases`},
		{CodeNearDuplicate, warn, f, 7, "c-7", `2 cases are near duplicates (similarity 1.00 of 5-word shingles over request): "c-1" (line 1), "c-7" (line 7)`},
	})

	// Rows with findings are kept, and still carry what could be read.
	if len(set.Cases) != 9 || set.Intended != 9 {
		t.Fatalf("got %d cases, intended %d; want 9 and 9", len(set.Cases), set.Intended)
	}
	c7 := set.Cases[6]
	if diff := cmp.Diff([]string{"happy_path"}, c7.Slices); diff != "" {
		t.Errorf("c-7 slices (-want +got):\n%s", diff)
	}
	if c4 := set.Cases[3]; c4.Label != nil {
		t.Errorf("c-4 label = %d, want none (2 is outside the domain)", *c4.Label)
	}
	if !set.Holds() {
		t.Errorf("Holds() = false, want true")
	}
}

func TestMissingControlsSeverity(t *testing.T) {
	files := fstest.MapFS{"cases.jsonl": {Data: []byte(`{"item": {"case_id": "x-1", "slice": "s", "human_score": 1}}
{"item": {"case_id": "x-2", "slice": ["t", "s"], "human_score": 1}}
{"item": {"case_id": "x-3", "slice": "t", "human_score": 0}}
{"item": {"case_id": "x-4", "slice": "u"}}
`)}}
	tests := []struct {
		name    string
		require bool
		want    []wantFinding
	}{
		{"warn by default", false, []wantFinding{
			{CodeMissingControls, manifest.SeverityWarn, "gradegate.yaml", 0, "", `"s" has only positive labels (2 labeled 1)`},
			{CodeMissingControls, manifest.SeverityWarn, "gradegate.yaml", 0, "", `"u" has 1 cases and none carries human_score`},
		}},
		{"hold under require_controls", true, []wantFinding{
			{CodeMissingControls, manifest.SeverityHold, "gradegate.yaml", 0, "", `"s" has only positive labels`},
			{CodeMissingControls, manifest.SeverityHold, "gradegate.yaml", 0, "", `"u" has 1 cases`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testManifest(".")
			m.Gate.RequireControls = tt.require
			m.Gate.Slices = []manifest.SliceRule{
				{Name: "s", Mandatory: true}, {Name: "t", Mandatory: true}, {Name: "u", Mandatory: true},
				{Name: "v"}, // not mandatory: no controls needed
			}
			set, err := Load(files, m)
			if err != nil {
				t.Fatal(err)
			}
			checkFindings(t, set.Findings, tt.want)
		})
	}
}

func TestLoadFieldNames(t *testing.T) {
	files := fstest.MapFS{"s/cases.jsonl": {Data: []byte(
		`{"item": {"id": "f-1", "group": ["g"], "origin": "o", "gold": 0, "case_id": 5, "slice": 3, "human_score": 7}}` + "\n")}}
	m := testManifest("s")
	m.Dataset.Fields = manifest.Fields{ID: "id", Slice: "group", Family: "origin", Label: "gold"}
	m.Dataset.IntendedCases = 4
	set, err := Load(files, m)
	if err != nil {
		t.Fatal(err)
	}
	// The label field named in the manifest is hidden from the grader;
	// human_score is an ordinary field here and stays.
	want := Case{ID: "f-1", Slices: []string{"g"}, Family: "o", Label: intp(0), File: "s/cases.jsonl", Line: 1,
		GraderItem: json.RawMessage(`{"id": "f-1", "group": ["g"], "origin": "o", "case_id": 5, "slice": 3, "human_score": 7}`)}
	if diff := cmp.Diff(want, set.Cases[0], cmpopts.IgnoreFields(Case{}, "Item")); diff != "" {
		t.Errorf("case (-want +got):\n%s", diff)
	}
	if len(set.Findings) != 0 {
		t.Errorf("findings = %+v, want none: case_id, slice and human_score are ordinary fields here", set.Findings)
	}
	if set.Intended != 4 {
		t.Errorf("Intended = %d, want dataset.intended_cases (4)", set.Intended)
	}
}

// TestSamplesJoinOnFieldsID: a samples line keys its case by
// dataset.fields.id, like the items; "case_id" is read too, and a line with
// both, or neither, is an input error naming the key.
func TestSamplesJoinOnFieldsID(t *testing.T) {
	cases := `{"item": {"ticket_id": "t-1"}}` + "\n" + `{"item": {"ticket_id": "t-2"}}` + "\n"
	tests := []struct {
		name    string
		samples string
		errs    []string
	}{
		{name: "by the id field", samples: `{"ticket_id": "t-1", "sample": {"output_text": "a"}}` + "\n" + `{"ticket_id": "t-2", "sample": {}}` + "\n"},
		{name: "by case_id", samples: `{"case_id": "t-1", "sample": {}}` + "\n" + `{"sample": {}, "case_id": "t-2"}` + "\n"},
		{name: "both", samples: `{"ticket_id": "t-1", "case_id": "t-1", "sample": {}}` + "\n",
			errs: []string{`s/samples.jsonl:1: case_id: unknown key; a samples line holds only "ticket_id" (dataset.fields.id) and "sample"`}},
		{name: "neither", samples: `{"id": "t-1", "sample": {}}` + "\n",
			errs: []string{`s/samples.jsonl:1: id: unknown key; a samples line holds only "ticket_id" (dataset.fields.id) and "sample"`, "s/samples.jsonl:1: ticket_id: missing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := fstest.MapFS{"s/cases.jsonl": {Data: []byte(cases)}, "s/samples.jsonl": {Data: []byte(tt.samples)}}
			m := testManifest("s")
			m.Dataset.Fields.ID = "ticket_id"
			m.Samples = &manifest.FileRef{Path: "samples.jsonl"}
			set, err := Load(files, m)
			if len(tt.errs) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range set.Cases {
					if c.Sample == nil {
						t.Errorf("case %s has no sample", c.ID)
					}
				}
				return
			}
			got := errorStrings(t, err)
			if diff := cmp.Diff(tt.errs, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSampleDigest(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		same bool
	}{
		{"whitespace does not count", `{"output_text": "x",  "choices": [ 1, 2 ]}`, "{\"output_text\":\"x\",\n\"choices\":[1,2]}", true},
		{"whitespace inside strings counts", `{"output_text": "a b"}`, `{"output_text": "a  b"}`, false},
		{"key order counts", `{"a": 1, "b": 2}`, `{"b": 2, "a": 1}`, false},
		{"escaped quotes and tabs", "{\"t\": \"a\\\" b\\\\\",\t\"u\" :\r\n[ ]}", `{"t":"a\" b\\","u":[]}`, true},
		{"an escaped quote keeps a string open", `{"t": "\" x"}`, `{"t":"\"x"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			da, db := sampleDigest(json.RawMessage(tt.a)), sampleDigest(json.RawMessage(tt.b))
			if (da == db) != tt.same {
				t.Errorf("digests %s and %s: same = %v, want %v", da, db, da == db, tt.same)
			}
		})
	}
}

// TestFindingsCutLongValues: a megabyte label or case id is quoted in a
// finding's message cut to a few hundred characters with its length; the
// finding's case_id keeps the whole id.
func TestFindingsCutLongValues(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	rows := `{"item": {"case_id": "a", "human_score": "` + long + `"}, "sample": {}}` + "\n" +
		`{"item": {"case_id": "` + long + `"}, "sample": {}}` + "\n" +
		`{"item": {"case_id": "` + long + `"}, "sample": {}}` + "\n"
	fsys := fstest.MapFS{"s/cases.jsonl": {Data: []byte(rows)}}
	set, err := Load(fsys, testManifest("s"))
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]bool{}
	for _, f := range set.Findings {
		codes[f.Code] = true
		if len(f.Message) > 1000 {
			t.Errorf("%s: message of %d bytes, want it cut", f.Code, len(f.Message))
		}
		if f.Code == CodeDuplicateCaseID && f.CaseID != long {
			t.Errorf("duplicate_case_id: case_id cut to %d bytes, want the whole id", len(f.CaseID))
		}
		if !strings.Contains(f.Message, "… (10485") {
			t.Errorf("%s: message %.120q… does not give the value's length", f.Code, f.Message)
		}
	}
	if !codes[CodeLabelDomain] || !codes[CodeDuplicateCaseID] {
		t.Fatalf("findings %v, want label_domain and duplicate_case_id", codes)
	}
}
