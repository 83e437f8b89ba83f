package multi

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate"
	"github.com/gradegate/gradegate/manifest"
)

func TestStringCheck(t *testing.T) {
	tests := []struct {
		op, in, ref string
		want        float64
	}{
		{"eq", "Paris", "Paris", 1},
		{"eq", "Paris", "paris", 0},
		{"ne", "Paris", "Lyon", 1},
		{"ne", "Paris", "Paris", 0},
		{"like", "The capital is Paris.", "Paris", 1},
		{"like", "The capital is paris.", "Paris", 0},
		{"ilike", "The capital is PARIS.", "paris", 1},
		{"ilike", "Lyon", "paris", 0},
	}
	for _, tt := range tests {
		got, err := StringCheck(tt.op, tt.in, tt.ref)
		if err != nil || got != tt.want {
			t.Errorf("StringCheck(%s, %q, %q) = %v, %v; want %v", tt.op, tt.in, tt.ref, got, err, tt.want)
		}
	}
	if _, err := StringCheck("regex", "a", "a"); err == nil {
		t.Error("an unknown operation was accepted")
	}
}

// TestFuzzyMatch checks values rapidfuzz's fuzz.ratio gives (/100).
func TestFuzzyMatch(t *testing.T) {
	tests := []struct {
		a, b string
		want float64
	}{
		{"this is a test", "this is a test!", 28.0 / 29},
		{"kitten", "sitting", 8.0 / 13},
		{"", "", 1},
		{"abc", "", 0},
		{"héllo", "héllo", 1},
	}
	for _, tt := range tests {
		if got := FuzzyMatch(tt.a, tt.b); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("FuzzyMatch(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func multiGrader(t *testing.T) *manifest.MultiGrader {
	t.Helper()
	mg := &manifest.MultiGrader{
		Python: "py",
		Graders: []manifest.SubGrader{
			{Name: "py", Type: manifest.SubPython},
			{Name: "exact", Type: manifest.SubStringCheck, Operation: "ilike", Input: "{{sample.output_text}}", Reference: "{{item.answer}}"},
			{Name: "close", Type: manifest.SubTextSimilarity, Metric: "fuzzy_match", Input: "{{sample.output_text}}", Reference: "{{item.answer}}"},
		},
	}
	f, err := manifest.ParseFormula("0.5 * py + 0.25 * exact + 0.25 * close", []string{"py", "exact", "close"})
	if err != nil {
		t.Fatal(err)
	}
	mg.Formula = f
	return mg
}

type fixed []gate.Outcome

func (f fixed) Grade(context.Context, []gate.Task) ([]gate.Outcome, error) {
	return append([]gate.Outcome(nil), f...), nil
}
func (fixed) Sandbox() gate.Sandbox { return gate.Sandbox{} }

func TestWrap(t *testing.T) {
	one, half := 1.0, 0.5
	task := func(text, answer string) gate.Task {
		s, _ := json.Marshal(map[string]string{"output_text": text})
		i, _ := json.Marshal(map[string]string{"answer": answer})
		return gate.Task{ID: text, Sample: s, Item: i}
	}
	tasks := []gate.Task{
		task("paris", "Paris"),
		task("Lyon", "Paris"),
		task("x", "Paris"),
		{ID: "no answer", Sample: json.RawMessage(`{"output_text": "Paris"}`), Item: json.RawMessage(`{}`)},
	}
	r := Wrap(fixed{
		{Class: gate.ClassOK, Score: &one, Scores: map[string]float64{"score": 1}},
		{Class: gate.ClassOK, Score: &half, Scores: map[string]float64{"score": 0.5}},
		{Class: gate.ClassTimeout, Error: &gate.CaseError{Class: gate.ClassTimeout, Message: "timeout"}},
		{Class: gate.ClassOK, Score: &one},
	}, multiGrader(t), nil)
	out, err := r.Grade(context.Background(), tasks)
	if err != nil {
		t.Fatal(err)
	}
	// paris vs Paris: ilike 1, fuzzy 8/10.
	if o := out[0]; o.Class != gate.ClassOK || math.Abs(*o.Score-(0.5+0.25+0.25*0.8)) > 1e-12 || o.Scores["exact"] != 1 || o.Scores["py"] != 1 || math.Abs(o.Scores["close"]-0.8) > 1e-12 {
		t.Errorf("paris: %+v (score %v)", o, *o.Score)
	}
	if o := out[1]; o.Class != gate.ClassOK || o.Scores["exact"] != 0 || math.Abs(*o.Score-(0.25+0.25*FuzzyMatch("Lyon", "Paris"))) > 1e-12 {
		t.Errorf("Lyon: %+v", o)
	}
	if out[2].Class != gate.ClassTimeout {
		t.Errorf("a Python sub-grader's timeout became %s", out[2].Class)
	}
	if o := out[3]; o.Class != gate.ClassGraderException || !strings.Contains(o.Error.Message, "sub-grader exact") || !strings.Contains(o.Error.Message, "has no field answer") {
		t.Errorf("missing template value: %+v", o.Error)
	}
	if Wrap(fixed{}, nil, nil) == nil {
		t.Error("Wrap(nil) lost the runner")
	}
}
