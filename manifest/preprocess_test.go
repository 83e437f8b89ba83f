package manifest

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const hexC = "4c5d0000000000000000000000000000000000000000000000000000000000cc"

func TestParsePreprocess(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string
		want *Preprocess
	}{
		{"none", minimal, nil},
		{"defaults", minimal + "preprocess:\n  type: python\n  source: pre/clean.py\n  sha256: \"" + hexC + "\"\n",
			&Preprocess{Type: "python", Contract: PreprocessRow, Source: "pre/clean.py", SHA256: hexC, TimeoutSeconds: 120}},
		{"every key", minimal + "preprocess: {type: python, contract: batch, source: clean.py, sha256: \"sha256:" + hexC + "\", timeout_seconds: 5}\n",
			&Preprocess{Type: "python", Contract: PreprocessBatch, Source: "clean.py", SHA256: hexC, TimeoutSeconds: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse([]byte(tc.yaml), "gradegate.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, m.Preprocess); diff != "" {
				t.Errorf("Preprocess (-want +got):\n%s", diff)
			}
			if tc.want != nil && m.Line("preprocess.source") == 0 {
				t.Errorf("no line for preprocess.source")
			}
		})
	}
}

func TestParsePreprocessErrors(t *testing.T) {
	pre := func(body string) string { return minimal + "preprocess:\n" + body }
	model := strings.Replace(minimal, "grader:\n  type: python\n  source: graders/order_summary.py\n  sha256: \""+hexB+"\"\n",
		"grader:\n  type: score_model\n  model: gpt-4o-mini\n  input: [{role: user, content: \"{{sample.output_text}}\"}]\n  range: [0, 1]\n  pass_threshold: 0.5\n", 1)
	for _, tc := range []struct {
		name string
		yaml string
		want []wantErr
	}{
		{"missing keys", pre("  contract: row\n"), []wantErr{
			{"preprocess.type", "preprocess:", "required key is missing"},
			{"preprocess.source", "preprocess:", "required key is missing"},
			{"preprocess.sha256", "preprocess:", "required key is missing"}}},
		{"unknown key", pre("  type: python\n  source: p.py\n  sha256: \"" + hexC + "\"\n  file_id: file_preprocessor123\n"),
			[]wantErr{{"preprocess.file_id", "file_id:", "unknown key; expected one of: type, contract, source, sha256, timeout_seconds"}}},
		{"bad values", pre("  type: javascript\n  contract: rows\n  source: /abs/p.py\n  sha256: TODO\n  timeout_seconds: 601\n"), []wantErr{
			{"preprocess.type", "type: javascript", "must be one of python"},
			{"preprocess.contract", "contract: rows", "must be one of row | batch"},
			{"preprocess.source", "source: /abs/p.py", "must be relative to the manifest's folder"},
			{"preprocess.sha256", "sha256: TODO", "run `gradegate pin"},
			{"preprocess.timeout_seconds", "timeout_seconds: 601", "must be between 1 and 600"}}},
		{"not a mapping", pre("  - transform.py\n"), []wantErr{{"preprocess", "  - transform.py", "must be a mapping"}}},
		{"the grader's own file", pre("  type: python\n  source: graders/order_summary.py\n  sha256: \"" + hexB + "\"\n"),
			[]wantErr{{"preprocess.source", "preprocess:\n  type: python\n  source: graders/order_summary.py", "names the grader's own source"}}},
		{"a grader without Python", model + "preprocess:\n  type: python\n  source: p.py\n  sha256: \"" + hexC + "\"\n",
			[]wantErr{{"preprocess", "preprocess:", "needs grader.type python"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const file = "evals/x/gradegate.yaml"
			_, err := Parse([]byte(tc.yaml), file)
			if !errors.Is(err, ErrInput) {
				t.Fatalf("Parse error = %v, want one matching ErrInput", err)
			}
			got := inputErrors(t, err)
			if len(got) != len(tc.want) {
				t.Fatalf("Parse reported %d problems, want %d:\n%v", len(got), len(tc.want), err)
			}
			for i, w := range tc.want {
				line := lineOf(t, tc.yaml, w.at)
				if e := got[i]; e.File != file || e.Line != line || e.Key != w.key || !strings.Contains(e.Msg, w.msg) {
					t.Errorf("problem %d = %#v\nwant line %d, key %q, message containing %q", i, e, line, w.key, w.msg)
				}
			}
		})
	}
}

// TestPinPreprocess: pin writes the preprocessor's digest after its source
// line, and PinnedFiles names its file.
func TestPinPreprocess(t *testing.T) {
	in := minimal + "preprocess:\n  type: python\n  source: clean.py\n  timeout_seconds: 5\n"
	files, err := PinnedFiles([]byte(in), "gradegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if files["preprocess"] != "clean.py" {
		t.Fatalf("PinnedFiles = %v, want preprocess clean.py", files)
	}
	out, err := Pin([]byte(in), map[string]string{"preprocess": hexC})
	if err != nil {
		t.Fatal(err)
	}
	want := minimal + "preprocess:\n  type: python\n  source: clean.py\n  sha256: \"" + hexC + "\"\n  timeout_seconds: 5\n"
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("Pin (-want +got):\n%s", diff)
	}
	if _, err := Parse(out, "gradegate.yaml"); err != nil {
		t.Errorf("the pinned manifest does not parse: %v", err)
	}
}
