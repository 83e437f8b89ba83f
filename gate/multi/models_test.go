package multi

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/judge"
	"github.com/gradegate/gradegate/gate/judge/judgetest"
	"github.com/gradegate/gradegate/manifest"
)

const modelMulti = `version: 1
name: judged-multi
dataset:
  path: cases.jsonl
  sha256: "` + "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" + `"
grader:
  type: multi
  pass_threshold: 0.5
  calculate_output: "0.5 * py + 0.25 * judged + 0.25 * verdict"
  %s
  graders:
    py:
      type: python
      source: grader.py
      sha256: "` + "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" + `"
    judged:
      type: score_model
      model: gpt-4o-mini-2024-07-18
      input:
        - {role: user, content: "SCORE Answer: {{sample.output_text}} Reference: {{item.answer}}"}
      range: [0, 2]
      pass_threshold: 1
    verdict:
      type: label_model
      model: gpt-4o-2024-08-06
      endpoint: responses
      input:
        - {role: user, content: "LABEL Answer: {{sample.output_text}}"}
      labels: [right, wrong]
      passing_labels: [right]
canaries:
  - {name: pos, sample: {output_text: "GOOD"}, item: {answer: "GOOD"}, expect: 1}
  - {name: neg, sample: {output_text: "BAD"}, item: {answer: "GOOD"}, expect: 0}
`

// answer scores GOOD answers 2 and labels them right, anything else 0 and
// wrong, and replies garbage to GARBAGE.
func answer(prompt string) string {
	switch {
	case strings.Contains(prompt, "GARBAGE"):
		return "I think it is fine"
	case strings.HasPrefix(prompt, "SCORE") && strings.Contains(prompt, "Answer: GOOD"):
		return judgetest.Score(2)
	case strings.HasPrefix(prompt, "SCORE"):
		return judgetest.Score(0)
	case strings.Contains(prompt, "Answer: GOOD"):
		return judgetest.Label("right")
	}
	return judgetest.Label("wrong")
}

func modelManifest(t *testing.T, extra string) *manifest.MultiGrader {
	t.Helper()
	m, err := manifest.Parse([]byte(strings.Replace(modelMulti, "%s", extra, 1)), "gradegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return m.Grader.Multi
}

func newModels(t *testing.T, mg *manifest.MultiGrader, cfg judge.Config) *Models {
	t.Helper()
	m, err := NewModels(mg, func(g manifest.Grader) (*judge.Judge, error) {
		c := cfg
		c.Grader = g
		return judge.New(c)
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var modelTasks = []grading.Task{
	{ID: "good", Sample: json.RawMessage(`{"output_text": "GOOD"}`), Item: json.RawMessage(`{"answer": "GOOD"}`)},
	{ID: "bad", Sample: json.RawMessage(`{"output_text": "BAD"}`), Item: json.RawMessage(`{"answer": "GOOD"}`)},
	{ID: "timeout", Sample: json.RawMessage(`{"output_text": "GOOD"}`), Item: json.RawMessage(`{"answer": "GOOD"}`)},
	{ID: "garbage", Sample: json.RawMessage(`{"output_text": "GARBAGE"}`), Item: json.RawMessage(`{"answer": "GOOD"}`)},
}

func pythonPart() fixed {
	one := 1.0
	return fixed{
		{Class: grading.ClassOK, Score: &one},
		{Class: grading.ClassOK, Score: &one},
		{Class: grading.ClassTimeout, Error: &grading.CaseError{Class: grading.ClassTimeout, Message: "timeout"}},
		{Class: grading.ClassOK, Score: &one},
	}
}

func TestModelSubGraders(t *testing.T) {
	fake := judgetest.New(t, answer)
	dir := t.TempDir()
	mg := modelManifest(t, "")
	cfg := judge.Config{BaseURL: fake.URL(), APIKey: judgetest.Key, Cache: &judge.Cache{Dir: dir}}
	models := newModels(t, mg, cfg)
	if ids, err := models.PlanAndReserve(modelTasks); err != nil || len(ids) != len(modelTasks) {
		t.Fatalf("plan = %v, %v; want every task", ids, err)
	}
	ctx := context.Background()
	out, err := Wrap(pythonPart(), mg, models).Grade(ctx, modelTasks)
	if err != nil {
		t.Fatal(err)
	}
	if o := out[0]; o.Class != grading.ClassOK || *o.Score != 0.5+0.25*2+0.25 || o.Scores["judged"] != 2 || o.Scores["verdict"] != 1 || o.Scores["py"] != 1 {
		t.Errorf("good: %+v", o)
	}
	if o := out[0]; !strings.Contains(string(o.Judge), `"verdict":{`) || !strings.Contains(string(o.Judge), `"label":"right"`) {
		t.Errorf("good: judge field %s", o.Judge)
	}
	if o := out[1]; o.Class != grading.ClassOK || *o.Score != 0.5 || o.Scores["judged"] != 0 || o.Scores["verdict"] != 0 {
		t.Errorf("bad: %+v", o)
	}
	if out[2].Class != grading.ClassTimeout {
		t.Errorf("timeout became %s", out[2].Class)
	}
	if o := out[3]; o.Class != grading.ClassInvalidReturn || o.Score != nil || !strings.Contains(o.Error.Message, "sub-grader judged") {
		t.Errorf("garbage reply: %+v (error %+v)", o, o.Error)
	}
	// The Python part's timeout is not asked about: 3 tasks, 2 sub-graders.
	if n := fake.Requests(); n != 6 || fake.BadAuth() != 0 {
		t.Fatalf("%d requests (%d without the key), want 6", n, fake.BadAuth())
	}
	u := models.Usage()
	if u.Calls != 6 || u.Needed != 8 || u.InvalidReplies != 2 || u.Type != "score_model+label_model" {
		t.Errorf("usage %+v", u)
	}

	// Another runner on the same Models (a mutant, a shadow side) asks
	// nothing again.
	again, err := Wrap(pythonPart(), mg, models).Grade(ctx, modelTasks)
	if err != nil || fake.Requests() != 6 {
		t.Fatalf("second runner: %v, %d requests", err, fake.Requests())
	}
	want, _ := json.Marshal(out)
	if got, _ := json.Marshal(again); string(got) != string(want) {
		t.Errorf("second runner:\n%s\nwant\n%s", got, want)
	}

	// Replay with the fake stopped and no key: the same outcomes.
	fake.Close()
	replay := newModels(t, mg, judge.Config{Cache: &judge.Cache{Dir: dir}, CacheMode: judge.CacheRead})
	if ids, err := replay.PlanAndReserve(modelTasks[:2]); err != nil || len(ids) != 0 {
		t.Fatalf("replay plan = %v, %v; want no call", ids, err)
	}
	got, err := Wrap(pythonPart(), mg, replay).Grade(ctx, modelTasks)
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := json.Marshal(got); string(g) != string(want) {
		t.Errorf("replay:\n%s\nwant\n%s", g, want)
	}
	if u := replay.Usage(); u.Calls != 0 || u.Cached != 6 {
		t.Errorf("replay usage %+v", u)
	}
	// A miss without a key is the tool failing, naming the case.
	miss := []grading.Task{{ID: "new", Sample: json.RawMessage(`{"output_text": "NEW"}`), Item: json.RawMessage(`{"answer": "x"}`)}}
	one := 1.0
	if _, err := Wrap(fixed{{Class: grading.ClassOK, Score: &one}}, mg, replay).Grade(ctx, miss); err == nil || !strings.Contains(err.Error(), "new") {
		t.Errorf("miss without a key: %v", err)
	}
	// The key is in no recorded file.
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if strings.Contains(string(b), judgetest.Key) {
			t.Errorf("%s holds the API key", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestModelSubGradersBudget(t *testing.T) {
	fake := judgetest.New(t, answer)
	mg := modelManifest(t, "max_calls: 7")
	models := newModels(t, mg, judge.Config{BaseURL: fake.URL(), APIKey: judgetest.Key})
	// 4 tasks, 2 sub-graders: 8 calls needed, 7 allowed, none sent.
	if _, err := models.PlanAndReserve(modelTasks); err != nil {
		t.Fatal(err)
	}
	out, err := Wrap(pythonPart(), mg, models).Grade(context.Background(), modelTasks)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range out {
		if i == 2 {
			continue
		}
		if o.Class != grading.ClassGraderException || o.Error.Type != judge.ErrNotSent {
			t.Errorf("%s: %+v", modelTasks[i].ID, o)
		}
	}
	if u := models.Usage(); fake.Requests() != 0 || u.NotSent != 6 || u.MaxCalls != 7 || u.Needed != 8 {
		t.Errorf("%d requests, usage %+v", fake.Requests(), u)
	}
}
