package multi

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
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

type fixed []grading.Outcome

func (f fixed) Grade(context.Context, []grading.Task) ([]grading.Outcome, error) {
	return append([]grading.Outcome(nil), f...), nil
}
func (fixed) Sandbox() grading.Sandbox { return grading.Sandbox{} }

func TestWrap(t *testing.T) {
	one, half := 1.0, 0.5
	task := func(text, answer string) grading.Task {
		s, _ := json.Marshal(map[string]string{"output_text": text})
		i, _ := json.Marshal(map[string]string{"answer": answer})
		return grading.Task{ID: text, Sample: s, Item: i}
	}
	tasks := []grading.Task{
		task("paris", "Paris"),
		task("Lyon", "Paris"),
		task("x", "Paris"),
		{ID: "no answer", Sample: json.RawMessage(`{"output_text": "Paris"}`), Item: json.RawMessage(`{}`)},
	}
	r := Wrap(fixed{
		{Class: grading.ClassOK, Score: &one, Scores: map[string]float64{"score": 1}},
		{Class: grading.ClassOK, Score: &half, Scores: map[string]float64{"score": 0.5}},
		{Class: grading.ClassTimeout, Error: &grading.CaseError{Class: grading.ClassTimeout, Message: "timeout"}},
		{Class: grading.ClassOK, Score: &one},
	}, multiGrader(t), nil)
	out, err := r.Grade(context.Background(), tasks)
	if err != nil {
		t.Fatal(err)
	}
	// paris vs Paris: ilike 1, fuzzy 8/10.
	if o := out[0]; o.Class != grading.ClassOK || math.Abs(*o.Score-(0.5+0.25+0.25*0.8)) > 1e-12 || o.Scores["exact"] != 1 || o.Scores["py"] != 1 || math.Abs(o.Scores["close"]-0.8) > 1e-12 {
		t.Errorf("paris: %+v (score %v)", o, *o.Score)
	}
	if o := out[1]; o.Class != grading.ClassOK || o.Scores["exact"] != 0 || math.Abs(*o.Score-(0.25+0.25*FuzzyMatch("Lyon", "Paris"))) > 1e-12 {
		t.Errorf("Lyon: %+v", o)
	}
	if out[2].Class != grading.ClassTimeout {
		t.Errorf("a Python sub-grader's timeout became %s", out[2].Class)
	}
	if o := out[3]; o.Class != grading.ClassGraderException || !strings.Contains(o.Error.Message, "sub-grader exact") || !strings.Contains(o.Error.Message, "has no field answer") {
		t.Errorf("missing template value: %+v", o.Error)
	}
	if Wrap(fixed{}, nil, nil) == nil {
		t.Error("Wrap(nil) lost the runner")
	}
}

// TestWrapParts grades a multi grader with two python parts: both scores
// go into the formula and the results' scores, and the first part (in
// manifest order) that gives no score makes the case error, named, with a
// further part's line moved into the message.
func TestWrapParts(t *testing.T) {
	one, half, zero := 1.0, 0.5, 0.0
	mg := &manifest.MultiGrader{
		Python: "first",
		Graders: []manifest.SubGrader{
			{Name: "first", Type: manifest.SubPython, Source: "first.py"},
			{Name: "second", Type: manifest.SubPython, Source: "lib/second.py"},
		},
	}
	f, err := manifest.ParseFormula("0.75 * first + 0.25 * second", []string{"first", "second"})
	if err != nil {
		t.Fatal(err)
	}
	mg.Formula = f
	raised := func(line int) grading.Outcome {
		return grading.Outcome{Class: grading.ClassGraderException, Output: "printed\n",
			Error: &grading.CaseError{Class: grading.ClassGraderException, Type: "KeyError", Message: "'x'", Line: line}}
	}
	first := fixed{
		{Class: grading.ClassOK, Score: &one, DurationMS: 1},
		{Class: grading.ClassOK, Score: &half},
		raised(3),
		{Class: grading.ClassOK, Score: &one},
	}
	second := fixed{
		{Class: grading.ClassOK, Score: &zero, DurationMS: 2, Output: "hello\n"},
		raised(7),
		raised(7),
		{Class: grading.ClassTimeout, Error: &grading.CaseError{Class: grading.ClassTimeout, Message: "ran past 120 s"}},
	}
	tasks := make([]grading.Task, len(first))
	for i := range tasks {
		tasks[i] = grading.Task{ID: string(rune('a' + i)), Sample: json.RawMessage(`{}`), Item: json.RawMessage(`{}`)}
	}
	out, err := WrapParts([]grading.Runner{first, second}, nil, mg, nil, nil).Grade(context.Background(), tasks)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		got   grading.Outcome
		class grading.Class
		score float64
		msg   string
		line  int
	}{
		{"both score", out[0], grading.ClassOK, 0.75, "", 0},
		{"second raises", out[1], grading.ClassGraderException, 0, "sub-grader second (second.py line 7): 'x'", 0},
		{"first raises first", out[2], grading.ClassGraderException, 0, "sub-grader first: 'x'", 3},
		{"second times out", out[3], grading.ClassTimeout, 0, "sub-grader second: ran past 120 s", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.got
			if o.Class != tt.class {
				t.Fatalf("class %s, want %s (%+v)", o.Class, tt.class, o.Error)
			}
			if tt.class == grading.ClassOK {
				if *o.Score != tt.score || o.Scores["first"] != 1 || o.Scores["second"] != 0 || len(o.Scores) != 2 {
					t.Errorf("score %v, scores %v", *o.Score, o.Scores)
				}
				if o.DurationMS != 3 || o.Output != "[second] hello\n" {
					t.Errorf("duration %v, output %q", o.DurationMS, o.Output)
				}
				return
			}
			if o.Error == nil || o.Error.Message != tt.msg || o.Error.Line != tt.line {
				t.Errorf("error %+v, want message %q line %d", o.Error, tt.msg, tt.line)
			}
		})
	}
}

// echo answers each task with a score read from its item, and keeps the
// tasks it was given.
type echo struct{ got *[]grading.Task }

func (e echo) Grade(_ context.Context, tasks []grading.Task) ([]grading.Outcome, error) {
	*e.got = append(*e.got, tasks...)
	out := make([]grading.Outcome, len(tasks))
	for i, t := range tasks {
		var item map[string]string
		json.Unmarshal(t.Item, &item)
		v := float64(len(item["input"])) / 10
		out[i] = grading.Outcome{Class: grading.ClassOK, Score: &v}
	}
	return out, nil
}
func (echo) Sandbox() grading.Sandbox { return grading.Sandbox{} }

// TestWrapMeteor: a meteor sub-grader is graded by a pool of its own on
// tasks carrying its filled templates, and its score goes into the
// formula and the scores; a template that cannot be filled errors the
// case, naming the sub-grader.
func TestWrapMeteor(t *testing.T) {
	one := 1.0
	mg := &manifest.MultiGrader{
		Python: "py",
		Graders: []manifest.SubGrader{
			{Name: "py", Type: manifest.SubPython},
			{Name: "m", Type: manifest.SubTextSimilarity, Metric: "meteor", Input: "{{sample.output_text}}", Reference: "{{item.answer}}"},
		},
	}
	f, err := manifest.ParseFormula("0.5 * py + 0.5 * m", []string{"py", "m"})
	if err != nil {
		t.Fatal(err)
	}
	mg.Formula = f
	var got []grading.Task
	tasks := []grading.Task{
		{ID: "a", Sample: json.RawMessage(`{"output_text": "Paris"}`), Item: json.RawMessage(`{"answer": "Paris, France"}`)},
		{ID: "b", Sample: json.RawMessage(`{"output_text": "Paris"}`), Item: json.RawMessage(`{}`)},
	}
	out, err := WrapParts([]grading.Runner{fixed{{Class: grading.ClassOK, Score: &one}, {Class: grading.ClassOK, Score: &one}}},
		map[string]grading.Runner{"m": echo{&got}}, mg, nil, nil).Grade(context.Background(), tasks)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got[0].Item) != `{"input":"Paris","reference":"Paris, France"}` {
		t.Fatalf("meteor tasks %+v", got)
	}
	if o := out[0]; o.Class != grading.ClassOK || *o.Score != 0.75 || o.Scores["m"] != 0.5 || o.Scores["py"] != 1 {
		t.Errorf("a: %+v", o)
	}
	if o := out[1]; o.Class != grading.ClassGraderException || !strings.Contains(o.Error.Message, "sub-grader m: reference:") {
		t.Errorf("b: %+v %+v", o, o.Error)
	}
}
