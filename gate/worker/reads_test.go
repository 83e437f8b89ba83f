//go:build linux

package worker

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
)

// TestRecordReads: a task that asks gets the item keys its grade read, in
// the order first read, whether the grade returned or raised, under both
// isolations; a task that does not ask gets none, and its item is a plain
// dict. A task that asks is answered with the plain dict too: the reads
// come from a second call, which must agree.
func TestRecordReads(t *testing.T) {
	src := "def grade(sample, item):\n" +
		"    if sample.get('type'):\n" +
		"        return 1.0 if type(item) is dict else 0.0\n" +
		"    a = item['a']\n" +
		"    b = item.get('b')\n" +
		"    if 'c' in item:\n" +
		"        pass\n" +
		"    x = item['a']\n" +
		"    if sample.get('raise'):\n" +
		"        return item['missing']\n" +
		"    if sample.get('all'):\n" +
		"        return float(len(list(item.items())))\n" +
		"    return 1.0\n"
	item := json.RawMessage(`{"c": 3, "b": 2, "a": 1, "d": 4}`)
	mk := func(sample string, record bool) grading.Task {
		return grading.Task{ID: "t", Sample: json.RawMessage(sample), Item: item, RecordReads: record}
	}
	tests := []struct {
		name  string
		task  grading.Task
		class grading.Class
		reads []string
	}{
		{"returns", mk(`{}`, true), grading.ClassOK, []string{"a", "b", "c"}},
		{"raises", mk(`{"raise": 1}`, true), grading.ClassGraderException, []string{"a", "b", "c"}},
		{"reads everything", mk(`{"all": 1}`, true), grading.ClassOK, []string{"a", "b", "c", "d"}},
		{"not asked", mk(`{}`, false), grading.ClassOK, nil},
		{"a case's item is a plain dict", mk(`{"type": 1}`, false), grading.ClassOK, nil},
		// The counted answer is the plain dict's; a grader that answers
		// the recording item otherwise is told it tells them apart.
		{"a grader that tells a recording item", mk(`{"type": 1}`, true), grading.ClassInvalidReturn, nil},
	}
	for _, isolation := range []string{IsolationWorker, IsolationCase} {
		p := newPool(t, python(t), src, func(c *Config) { c.Isolation = isolation })
		var tasks []grading.Task
		for _, tt := range tests {
			tasks = append(tasks, tt.task)
		}
		got, err := p.Grade(context.Background(), tasks)
		if err != nil {
			t.Fatal(err)
		}
		for i, tt := range tests {
			o := got[i]
			if o.Class != tt.class {
				t.Errorf("%s/%s: class %s (%v), want %s", isolation, tt.name, o.Class, o.Error, tt.class)
			}
			if !slices.Equal(o.Reads, tt.reads) {
				t.Errorf("%s/%s: reads %q, want %q", isolation, tt.name, o.Reads, tt.reads)
			}
			if tt.name == "a case's item is a plain dict" && (o.Score == nil || *o.Score != 1) {
				t.Errorf("%s: a case's item was not a plain dict", isolation)
			}
			if tt.class == grading.ClassInvalidReturn && (o.Error == nil || !strings.Contains(o.Error.Message, "tells such an item from a case's")) {
				t.Errorf("%s/%s: error %v, want it to say the grader tells the items apart", isolation, tt.name, o.Error)
			}
		}
	}
}

// TestRecordReadsBatch: under the batch contract a task that asks gets the
// item keys grade_batch read of its own item, the others none; every item
// of the counted call is a plain dict. A second call that answers any case
// otherwise makes the asking tasks invalid returns, and leaves the other
// cases the counted answer.
func TestRecordReadsBatch(t *testing.T) {
	src := "def grade_batch(samples):\n" +
		"    out = []\n" +
		"    for s in samples:\n" +
		"        item = s['item']\n" +
		"        if s['sample'].get('type'):\n" +
		"            score = 1.0 if all(type(o['item']) is dict for o in samples) else 0.0\n" +
		"        else:\n" +
		"            score = 1.0 if item.get('expected') is None else float(item['b'] == 2)\n" +
		"        out.append({'case_id': s['case_id'], 'scores': {'score': score}})\n" +
		"    return {'samples': out}\n"
	item := json.RawMessage(`{"c": 3, "b": 2, "expected": "x", "d": 4}`)
	mk := func(id, sample string, record bool) grading.Task {
		return grading.Task{ID: id, Sample: json.RawMessage(sample), Item: item, RecordReads: record}
	}
	type want struct {
		class grading.Class
		reads []string
	}
	tests := []struct {
		name  string
		tasks []grading.Task
		want  []want
	}{
		{"one task asks", []grading.Task{mk("a", `{}`, false), mk("b", `{}`, true), mk("c", `{}`, false)},
			[]want{{grading.ClassOK, nil}, {grading.ClassOK, []string{"expected", "b"}}, {grading.ClassOK, nil}}},
		{"a grader that tells a recording item", []grading.Task{mk("a", `{"type": 1}`, false), mk("b", `{"type": 1}`, true)},
			[]want{{grading.ClassOK, nil}, {grading.ClassInvalidReturn, nil}}},
	}
	for _, isolation := range []string{IsolationWorker, IsolationCase} {
		for _, tt := range tests {
			p := newPool(t, python(t), src, func(c *Config) {
				c.Isolation, c.Contract, c.BatchSize = isolation, ContractBatch, len(tt.tasks)
			})
			got, err := p.Grade(context.Background(), tt.tasks)
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range tt.want {
				o := got[i]
				if o.Class != w.class {
					t.Errorf("%s/%s/%d: class %s (%v), want %s", isolation, tt.name, i, o.Class, o.Error, w.class)
				}
				if !slices.Equal(o.Reads, w.reads) {
					t.Errorf("%s/%s/%d: reads %q, want %q", isolation, tt.name, i, o.Reads, w.reads)
				}
				if w.class == grading.ClassOK && (o.Score == nil || *o.Score != 1) {
					t.Errorf("%s/%s/%d: score %v, want 1 (the counted call's items are plain dicts)", isolation, tt.name, i, o.Score)
				}
				if w.class == grading.ClassInvalidReturn && (o.Error == nil || !strings.Contains(o.Error.Message, "tells such an item from a case's")) {
					t.Errorf("%s/%s/%d: error %v, want it to say the grader tells the items apart", isolation, tt.name, i, o.Error)
				}
			}
		}
	}
}

// TestRecordReadsBatchCtx: grade_batch(samples, ctx) is called once, the
// asking task's item recording its reads, as a single task with ctx is: a
// second call would make its model calls again.
func TestRecordReadsBatchCtx(t *testing.T) {
	const src = `def grade_batch(samples, ctx):
    out = []
    for s in samples:
        r = ctx.responses_create(model="m", input=s["case_id"])
        score = 1.0 if r.output_text == s["case_id"] and s["item"].get("expected") == 1 else 0.0
        out.append({"case_id": s["case_id"], "scores": {"score": score}})
    return {"samples": out}
`
	b := &echoBroker{}
	p := newPool(t, python(t), src, func(c *Config) {
		c.Contract, c.Broker, c.MaxModelCalls = ContractBatch, b, 4
	})
	tasks := []grading.Task{task("a", map[string]any{}), task("b", map[string]any{})}
	tasks[1].RecordReads = true
	got, err := p.Grade(context.Background(), tasks)
	if err != nil {
		t.Fatal(err)
	}
	for i, reads := range [][]string{nil, {"expected"}} {
		if got[i].Class != grading.ClassOK || got[i].Score == nil || *got[i].Score != 1 || !slices.Equal(got[i].Reads, reads) {
			t.Errorf("case %d: %s %v %+v, reads %q, want 1 and reads %q", i, got[i].Class, got[i].Score, got[i].Error, got[i].Reads, reads)
		}
	}
	if len(b.calls) != 2 {
		t.Errorf("%d model calls %q, want 2: grade_batch with ctx is called once", len(b.calls), b.calls)
	}
}

// TestRecordReadsMKA1Batch: under MKA1's batch contract a task that asks
// gets the row fields its grade_batch read, through dataset_row and
// through the target filled from the row; the counted call gets plain
// dicts, and a grader that tells the recording sample apart is told so.
func TestRecordReadsMKA1Batch(t *testing.T) {
	src := "def grade_batch(samples):\n" +
		"    out = []\n" +
		"    for s in samples:\n" +
		"        if s['output_text'] == 'tell':\n" +
		"            score = 1.0 if type(s) is dict and type(s['dataset_row']) is dict else 0.0\n" +
		"        else:\n" +
		"            score = float(s['target'] == 'pos' and len(s['dataset_row']['text']) > 0)\n" +
		"        out.append({'sample_id': s['sample_id'], 'scores': {'correct': score}})\n" +
		"    return {'samples': out, 'metrics': {'accuracy': 1.0}}\n"
	item := json.RawMessage(`{"case_id": "c", "text": "good", "label": "pos", "note": "n"}`)
	tests := []struct {
		name   string
		sample string
		class  grading.Class
		reads  []string
	}{
		{"reads through target and dataset_row", `{"output_text": "x"}`, grading.ClassOK, []string{"label", "text"}},
		{"a grader that tells a recording sample", `{"output_text": "tell"}`, grading.ClassInvalidReturn, nil},
	}
	for _, isolation := range []string{IsolationWorker, IsolationCase} {
		for _, tt := range tests {
			p := newPool(t, python(t), src, mka1Config("correct", func(c *Config) {
				c.Isolation, c.Contract, c.BatchSize = isolation, ContractBatch, 1
			}))
			got, err := p.Grade(context.Background(), []grading.Task{{ID: "c", Sample: json.RawMessage(tt.sample), Item: item, RecordReads: true}})
			if err != nil {
				t.Fatal(err)
			}
			if o := got[0]; o.Class != tt.class || !slices.Equal(o.Reads, tt.reads) {
				t.Errorf("%s/%s: class %s (%v), reads %q; want %s, %q", isolation, tt.name, o.Class, o.Error, o.Reads, tt.class, tt.reads)
			}
		}
	}
}
