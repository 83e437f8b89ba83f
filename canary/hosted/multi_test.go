package hosted

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gradegate/gradegate/manifest"
)

// multiGrader is OpenAI's cookbook shape: a Python part and a string_check,
// combined by calculate_output.
func multiGrader() Grader {
	return Grader{
		Type: "multi", Name: "cookbook", CalculateOutput: "0.85 * similarity + 0.15 * mentions",
		Graders: map[string]Grader{
			"similarity": {Type: "python", Name: "similarity", Source: "def grade(sample, item):\n    return 1.0\n", ImageTag: "2025-05-08"},
			"mentions": {Type: "string_check", Name: "mentions", Fields: map[string]any{
				"input": "{{sample.output_text}}", "reference": "{{item.keyword}}", "operation": "ilike"}},
		},
	}
}

// TestMultiGraderWire: a multi grader goes to validate and run in OpenAI's
// own shape, each python part with its exact bytes and every other part
// with its keys; the report's digest is of the grader as sent.
func TestMultiGraderWire(t *testing.T) {
	f := newFake(t)
	f.onRun("Paris", ok(1))
	c := newTestClient(f, &sleeps{})
	g := multiGrader()
	canaries := []manifest.Canary{canary("pos", "Paris", `{"keyword": "paris"}`, f64(1), false)}
	rep, err := Parity(context.Background(), c, g, canaries, []Local{{Name: "pos", Got: f64(1), Class: "ok"}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("parity not OK: %+v", rep.Problems)
	}
	want := map[string]any{
		"type": "multi", "name": "cookbook", "calculate_output": "0.85 * similarity + 0.15 * mentions",
		"graders": map[string]any{
			"similarity": map[string]any{"type": "python", "name": "similarity", "source": "def grade(sample, item):\n    return 1.0\n", "image_tag": "2025-05-08"},
			"mentions":   map[string]any{"type": "string_check", "name": "mentions", "input": "{{sample.output_text}}", "reference": "{{item.keyword}}", "operation": "ilike"},
		},
	}
	reqs := f.recorded()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want validate and one run", len(reqs))
	}
	for _, r := range reqs {
		var body struct {
			Grader map[string]any `json:"grader"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, body.Grader); d != "" {
			t.Errorf("%s: grader sent (-want +got):\n%s", r.Path, d)
		}
	}
	sent, _ := marshal(g)
	if rep.Grader.Type != "multi" || rep.Grader.SHA256 != g.Digest() || !strings.Contains(string(sent), `"calculate_output"`) || g.Digest() == (Grader{Source: g.Graders["similarity"].Source}).Digest() {
		t.Errorf("report grader %+v", rep.Grader)
	}
}

// TestMultiGraderNotUTF8: a python part that is not UTF-8 cannot be sent
// byte for byte, and nothing is sent.
func TestMultiGraderNotUTF8(t *testing.T) {
	f := newFake(t)
	c := newTestClient(f, &sleeps{})
	g := multiGrader()
	g.Graders["similarity"] = Grader{Type: "python", Name: "similarity", Source: "def grade(s, i):\n    return 1.0 # \xff\n"}
	if err := c.Validate(context.Background(), g); err == nil || !strings.Contains(err.Error(), "sub-grader similarity: grader source is not valid UTF-8") {
		t.Errorf("Validate = %v", err)
	}
	if n := len(f.recorded()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}
