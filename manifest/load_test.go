package manifest

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestLoadCanariesFile(t *testing.T) {
	m, err := Load(os.DirFS("testdata/load"), "evals/order/gradegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if m2, err := Load(os.DirFS("testdata/load/evals"), "./order/gradegate.yaml"); err != nil || len(m2.Canaries) != 4 {
		t.Errorf("Load(./order/gradegate.yaml) = %v canaries, %v; want 4, nil", len(m2.Canaries), err)
	}
	if m.File != "evals/order/gradegate.yaml" || m.Dir != "evals/order" {
		t.Errorf("File, Dir = %q, %q; want evals/order/gradegate.yaml, evals/order", m.File, m.Dir)
	}
	if m.CanariesFile != "canaries/canaries.jsonl" {
		t.Errorf("CanariesFile = %q", m.CanariesFile)
	}
	const file = "evals/order/canaries/canaries.jsonl"
	want := []Canary{
		{
			Name:   "equivalent-serialization",
			Sample: json.RawMessage(`{"output_text":"{\"total_cents\": 2599}","b":1,"a":2.0}`),
			Item:   json.RawMessage(`{"expected_total_cents":2599}`),
			Expect: f64(1),
			File:   file, Line: 1,
		},
		{
			Name:      "half-credit",
			Sample:    json.RawMessage(`{"output_text":"x"}`),
			Item:      json.RawMessage(`{}`),
			Expect:    f64(0.5),
			Tolerance: 0.01,
			File:      file, Line: 3,
		},
		{
			Name:        "corrupt-fixture",
			Sample:      json.RawMessage(`{"output_text":"y"}`),
			Item:        json.RawMessage(`{}`),
			ExpectError: true,
			File:        file, Line: 4,
		},
		{
			Name:   "wrong-total",
			Sample: json.RawMessage(`{"output_text":"z"}`),
			Item:   json.RawMessage(`{}`),
			Expect: f64(0),
			File:   file, Line: 5,
		},
	}
	if diff := cmp.Diff(want, m.Canaries, rawJSON); diff != "" {
		t.Errorf("canaries mismatch (-want +got):\n%s", diff)
	}
	// half-credit sits exactly at pass_threshold 0.5: a positive.
	if !m.Canaries[1].Positive(m.Grader.PassThreshold) || m.Canaries[1].Negative(m.Grader.PassThreshold) {
		t.Errorf("half-credit at threshold %g: want positive only", m.Grader.PassThreshold)
	}
}

const manifestWithCanariesFile = `version: 1
name: order-summary
dataset:
  path: cases.jsonl
  sha256: "` + hexA + `"
grader:
  type: python
  source: grader.py
  sha256: "` + hexB + `"
canaries: {path: canaries.jsonl}
`

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		manifest string // the file Load is given; default s/gradegate.yaml
		want     []string
	}{
		{
			name:     "missing manifest",
			files:    map[string]string{},
			manifest: "nowhere/gradegate.yaml",
			want:     []string{"nowhere/gradegate.yaml: cannot read manifest"},
		},
		{
			name:  "missing canaries file",
			files: map[string]string{"s/gradegate.yaml": manifestWithCanariesFile, "s/cases.jsonl": "", "s/grader.py": ""},
			want:  []string{"s/gradegate.yaml:10: canaries.path: cannot read canaries file"},
		},
		{
			name: "canaries file outside",
			files: map[string]string{
				"s/gradegate.yaml": strings.Replace(manifestWithCanariesFile, "path: canaries.jsonl", "path: ../../canaries.jsonl", 1),
			},
			// The files the manifest names are all checked in the same run.
			want: []string{
				"s/gradegate.yaml:10: canaries.path: cannot read canaries file ../canaries.jsonl",
				"s/gradegate.yaml:4: dataset.path: cannot read s/cases.jsonl",
				"s/gradegate.yaml:8: grader.source: cannot read s/grader.py",
			},
		},
		{
			name: "bad lines",
			files: map[string]string{
				"s/gradegate.yaml": manifestWithCanariesFile,
				"s/canaries.jsonl": `{"name": "pos", "sample": {}, "item": {}, "expect": 1}
not json

{"name": "neg", "sample": [], "item": {}, "expect": 0, "expected": 0}
{"name": "both", "sample": {}, "item": {}, "expect": 0, "expect_error": true}
{"name": "none", "sample": {}, "item": {}, "tolerance": "a"}
{"name": "", "item": {}, "expect": "1"}
[]
{"name": "twice", "sample": {}, "item": {}, "expect": 1, "expect": 0}
`,
			},
			want: []string{
				"s/canaries.jsonl:2: must be one JSON object per line",
				"s/canaries.jsonl:4: expected: unknown key (did you mean expect?)",
				"s/canaries.jsonl:4: sample: must be a JSON object, got []",
				"s/canaries.jsonl:5: expect_error: set either expect or expect_error: true, not both",
				"s/canaries.jsonl:6: tolerance: must be a number",
				"s/canaries.jsonl:6: expect: required: the exact reward",
				"s/canaries.jsonl:7: name: must be a non-empty string",
				"s/canaries.jsonl:7: sample: required key is missing",
				"s/canaries.jsonl:7: expect: must be a number",
				"s/canaries.jsonl:8: must be one JSON object per line",
				"s/canaries.jsonl:9: expect: given twice",
			},
		},
		{
			name: "duplicate names",
			files: map[string]string{
				"s/gradegate.yaml": manifestWithCanariesFile,
				"s/canaries.jsonl": `{"name": "a", "sample": {}, "item": {}, "expect": 1}
{"name": "a", "sample": {}, "item": {}, "expect": 0}
`,
			},
			want: []string{`s/canaries.jsonl:2: canaries: duplicate canary name "a" (first at line 1)`},
		},
		{
			name: "no negative",
			files: map[string]string{
				"s/gradegate.yaml": manifestWithCanariesFile,
				"s/canaries.jsonl": `{"name": "a", "sample": {}, "item": {}, "expect": 1}` + "\n",
			},
			want: []string{"s/gradegate.yaml:10: canaries: needs at least one positive and one negative canary; missing a negative canary"},
		},
		{
			name: "empty canaries file",
			files: map[string]string{
				"s/gradegate.yaml": manifestWithCanariesFile,
				"s/canaries.jsonl": "\n\n",
			},
			want: []string{"s/gradegate.yaml:10: canaries: needs at least one positive and one negative canary; missing a positive canary"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for name, body := range tt.files {
				fsys[name] = &fstest.MapFile{Data: []byte(body)}
			}
			name := tt.manifest
			if name == "" {
				name = "s/gradegate.yaml"
			}
			_, err := Load(fsys, name)
			if !errors.Is(err, ErrInput) {
				t.Fatalf("Load error = %v, want one matching ErrInput", err)
			}
			got := inputErrors(t, err)
			if len(got) != len(tt.want) {
				t.Fatalf("Load reported %d problems, want %d:\n%v", len(got), len(tt.want), err)
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(got[i].Error(), w) {
					t.Errorf("problem %d = %q\nwant prefix %q", i, got[i].Error(), w)
				}
			}
		})
	}
}

func TestLoadUnreadableIsNotExist(t *testing.T) {
	_, err := Load(fstest.MapFS{}, "gradegate.yaml")
	if !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, ErrInput) {
		t.Errorf("Load of a missing file = %v; want it to match fs.ErrNotExist and ErrInput", err)
	}
}
