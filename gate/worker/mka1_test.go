//go:build linux

package worker

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gradegate/gradegate/gate/grading"
)

func mka1Config(metric string, mod func(*Config)) func(*Config) {
	return func(c *Config) {
		c.Metric = metric
		c.MKA1 = &MKA1{TaskID: "qa", RunID: "local", Model: "openai:gpt-4.1-mini"}
		if mod != nil {
			mod(c)
		}
	}
}

func mka1Task(id, sample, item string) grading.Task {
	return grading.Task{ID: id, Sample: json.RawMessage(sample), Item: json.RawMessage(item)}
}

// TestMKA1Returns: MKA1's return rules, one grader return per row.
func TestMKA1Returns(t *testing.T) {
	tests := []struct {
		name   string
		ret    string
		metric string
		class  grading.Class
		scores map[string]float64
		msg    string // in the error message, or in the dropped keys for ok
	}{
		{name: "a float is stored under metric_id", ret: "0.5", metric: "exact", class: grading.ClassOK, scores: map[string]float64{"exact": 0.5}},
		{name: "a float without metric_id is score", ret: "1", metric: "score", class: grading.ClassOK, scores: map[string]float64{"score": 1}},
		{name: "a dict's non-finite score is dropped, the rest kept", ret: `{"scores": {"numeric_match": 1.0, "absolute_error": float("inf")}}`, metric: "numeric_match",
			class: grading.ClassOK, scores: map[string]float64{"numeric_match": 1}, msg: "absolute_error"},
		{name: "a dict's non-numeric score is dropped", ret: `{"scores": {"exact": 0.0, "note": "x", "flag": True}}`, metric: "exact",
			class: grading.ClassOK, scores: map[string]float64{"exact": 0}, msg: "note"},
		{name: "a dict without any finite numeric score", ret: `{"scores": {"a": float("nan"), "b": "1"}}`, metric: "a", class: grading.ClassInvalidReturn, msg: "without any finite numeric score"},
		{name: "a dict without scores", ret: `{"judge": {}}`, metric: "score", class: grading.ClassInvalidReturn, msg: "without any finite numeric score"},
		{name: "the gating score dropped", ret: `{"scores": {"exact": float("inf"), "other": 1}}`, metric: "exact", class: grading.ClassInvalidReturn, msg: "no finite 'exact'"},
		{name: "NaN", ret: `float("nan")`, metric: "score", class: grading.ClassInvalidReturn, msg: "float nan"},
		{name: "Infinity", ret: `float("inf")`, metric: "score", class: grading.ClassInvalidReturn, msg: "float inf"},
		{name: "a bool", ret: "True", metric: "score", class: grading.ClassInvalidReturn, msg: "bool True"},
		{name: "a string", ret: `"1.0"`, metric: "score", class: grading.ClassInvalidReturn, msg: "str"},
		{name: "None", ret: "None", metric: "score", class: grading.ClassInvalidReturn, msg: "NoneType"},
		{name: "an exception", ret: `{}["x"]`, metric: "score", class: grading.ClassGraderException, msg: "'x'"},
	}
	py := python(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPool(t, py, "import math\n\ndef grade(sample, item):\n    return "+tt.ret+"\n", mka1Config(tt.metric, nil))
			got, err := p.Grade(context.Background(), []grading.Task{mka1Task("c1", `{"output_text": "4"}`, `{"answer": "4"}`)})
			if err != nil {
				t.Fatal(err)
			}
			o := got[0]
			if o.Class != tt.class {
				t.Fatalf("class %s, want %s (%+v)", o.Class, tt.class, o.Error)
			}
			if tt.class != grading.ClassOK {
				if !strings.Contains(o.Error.Message, tt.msg) {
					t.Errorf("message %q, want it to contain %q", o.Error.Message, tt.msg)
				}
				return
			}
			if diff := cmp.Diff(tt.scores, o.Scores); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
			if tt.msg != "" && !strings.Contains(strings.Join(o.DroppedScores, "|"), tt.msg) {
				t.Errorf("dropped %q, want one naming %q", o.DroppedScores, tt.msg)
			}
		})
	}
}

// TestMKA1Shapes: the sample and item grade gets under MKA1's contract,
// from what is stored and what the init fills in.
func TestMKA1Shapes(t *testing.T) {
	const src = "import json\n\ndef grade(sample, item):\n    print(json.dumps({'sample': sample, 'item': item}, sort_keys=True))\n    return 1.0\n"
	tests := []struct {
		name, sample, item string
		target             string
		want               string
	}{
		{
			name:   "filled from the case",
			sample: `{"output_text": "4"}`, item: `{"question": "2+2?", "answer": "4"}`,
			want: `{"item": {"answer": "4", "prompt": null, "question": "2+2?", "reference_answer": "4", "target": "4", "task_id": "qa"}, ` +
				`"sample": {"extracted_output": "4", "model": "openai:gpt-4.1-mini", "output_text": "4", "prompt": null, "run_id": "local", "sample_id": "c1", "task_id": "qa"}}`,
		},
		{
			name:   "stored fields win, numbers render as text",
			sample: `{"output_text": "The answer is 4", "extracted_output": "4", "sample_id": "s9", "model": "m", "prompt": "P"}`, item: `{"answer": 4, "target": 4.5}`,
			want: `{"item": {"answer": 4, "prompt": "P", "reference_answer": "4.5", "target": 4.5, "task_id": "qa"}, ` +
				`"sample": {"extracted_output": "4", "model": "m", "output_text": "The answer is 4", "prompt": "P", "run_id": "local", "sample_id": "s9", "task_id": "qa"}}`,
		},
		{
			name:   "target_field names the field",
			sample: `{"output_text": "positive"}`, item: `{"text": "Great", "gold": "positive", "answer": "no"}`, target: "gold",
			want: `{"item": {"answer": "no", "gold": "positive", "prompt": null, "reference_answer": "positive", "target": "positive", "task_id": "qa", "text": "Great"}, ` +
				`"sample": {"extracted_output": "positive", "model": "openai:gpt-4.1-mini", "output_text": "positive", "prompt": null, "run_id": "local", "sample_id": "c1", "task_id": "qa"}}`,
		},
	}
	py := python(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPool(t, py, src, mka1Config("score", func(c *Config) { c.MKA1.TargetField = tt.target }))
			got, err := p.Grade(context.Background(), []grading.Task{mka1Task("c1", tt.sample, tt.item)})
			if err != nil {
				t.Fatal(err)
			}
			if got[0].Class != grading.ClassOK {
				t.Fatalf("outcome %+v", got[0])
			}
			if out := strings.TrimSpace(got[0].Output); out != tt.want {
				t.Errorf("grade saw\n%s\nwant\n%s", out, tt.want)
			}
		})
	}
}

// TestMKA1Signature: grade(sample, item, ctx), MKA1's model_backed
// shape, loads on both platforms (ctx is the gate's model broker); a grade
// that takes more is refused with the shapes it may have.
func TestMKA1Signature(t *testing.T) {
	py := python(t)
	for _, mka1 := range []*MKA1{{TaskID: "t", RunID: "r"}, nil} {
		cfg := Config{Source: []byte("def grade(sample, item, ctx):\n    return 1.0\n"), SourceName: "grader.py", Metric: "score",
			TimeoutSeconds: 5, MemoryMB: 256, Workers: 1, Python: py, Sandbox: newSandbox(t), MKA1: mka1}
		p, err := New(context.Background(), cfg)
		if err != nil {
			t.Fatalf("New (mka1 %v) = %v, want a grader that takes ctx to load", mka1 != nil, err)
		}
		p.Close()
		cfg.Source = []byte("def grade(sample, item, ctx, extra):\n    return 1.0\n")
		_, err = New(context.Background(), cfg)
		if le, ok := err.(*LoadError); !ok || !strings.Contains(le.Err.Message, "or three with ctx") || le.Err.Line != 1 {
			t.Fatalf("New (mka1 %v) = %v, want the parameter-count load error at line 1", mka1 != nil, err)
		}
	}
}

// TestMKA1Batch: grade_batch(samples) gets MKA1's flat samples and its
// reply is applied by sample_id; metrics are kept, undeclared ones dropped,
// and a reply that names a stranger is invalid for every case.
func TestMKA1Batch(t *testing.T) {
	const echo = "import json\n\n" +
		"def grade_batch(samples):\n" +
		"    print(json.dumps(samples[0], sort_keys=True))\n"
	tasks := []grading.Task{
		mka1Task("c1", `{"output_text": "The answer is positive.", "extracted_output": "positive", "response_id": "resp_1"}`, `{"text": "Great support experience.", "label": "positive"}`),
		mka1Task("c2", `{"output_text": "negative"}`, `{"text": "Slow.", "label": "negative"}`),
	}
	tests := []struct {
		name     string
		body     string
		declared []string
		classes  []grading.Class
		scores   []map[string]float64
		metrics  map[string]float64
		dropped  []string
		msg      string
		output   string
	}{
		{
			name: "flat samples in, updates and metrics out",
			body: "    return {'metrics': {'acc': 0.5, 'bad': float('nan')}, 'samples': [\n" +
				"        {'sample_id': s['sample_id'], 'scores': {'correct': 1.0 if s['extracted_output'] == s['target'] else 0.0}, 'judge': {'k': 1}}\n" +
				"        for s in samples]}\n",
			classes: []grading.Class{grading.ClassOK, grading.ClassOK},
			scores:  []map[string]float64{{"correct": 1}, {"correct": 1}},
			metrics: map[string]float64{"acc": 0.5},
			dropped: []string{"bad: float nan"},
			output: `{"dataset_row": {"label": "positive", "text": "Great support experience."}, "extracted_output": "positive", "judge": null, "model": "openai:gpt-4.1-mini", ` +
				`"output_text": "The answer is positive.", "prompt": null, "response_id": "resp_1", "sample_id": "c1", "scores": {}, "target": "positive", "task_id": "qa"}`,
		},
		{
			name:     "undeclared metrics are dropped",
			body:     "    return {'metrics': {'macro_f1': 0.7, 'drift': 0.1}, 'samples': [{'sample_id': s['sample_id'], 'scores': {'correct': 1}} for s in samples]}\n",
			declared: []string{"macro_f1"},
			classes:  []grading.Class{grading.ClassOK, grading.ClassOK},
			scores:   []map[string]float64{{"correct": 1}, {"correct": 1}},
			metrics:  map[string]float64{"macro_f1": 0.7},
			dropped:  []string{"drift: not among grader.metrics"},
		},
		{
			name:    "a sample without an update has no score",
			body:    "    return {'metrics': {'acc': 1.0}, 'samples': [{'sample_id': 'c1', 'scores': {'correct': 1}}]}\n",
			classes: []grading.Class{grading.ClassOK, grading.ClassInvalidReturn},
			scores:  []map[string]float64{{"correct": 1}, nil},
			metrics: map[string]float64{"acc": 1},
			msg:     "no score",
		},
		{
			name:    "metrics only",
			body:    "    return {'metrics': {'accuracy': 1.0}}\n",
			classes: []grading.Class{grading.ClassInvalidReturn, grading.ClassInvalidReturn},
			metrics: map[string]float64{"accuracy": 1},
			msg:     "no score",
		},
		{
			name:    "an unknown sample_id invalidates the batch",
			body:    "    return {'samples': [{'sample_id': 'c1', 'scores': {'correct': 1}}, {'sample_id': 'zz', 'scores': {'correct': 1}}]}\n",
			classes: []grading.Class{grading.ClassInvalidReturn, grading.ClassInvalidReturn},
			msg:     "'zz', which is not in the batch",
		},
		{
			name:    "a missing sample_id invalidates the batch",
			body:    "    return {'samples': [{'scores': {'correct': 1}}]}\n",
			classes: []grading.Class{grading.ClassInvalidReturn, grading.ClassInvalidReturn},
			msg:     "without a sample_id",
		},
		{
			name:    "a repeated sample_id invalidates the batch",
			body:    "    return {'samples': [{'sample_id': 'c1', 'scores': {'correct': 1}}, {'sample_id': 'c1', 'scores': {'correct': 0}}]}\n",
			classes: []grading.Class{grading.ClassInvalidReturn, grading.ClassInvalidReturn},
			msg:     "more than one update for sample_id 'c1'",
		},
		{
			name:    "not a dict",
			body:    "    return [1]\n",
			classes: []grading.Class{grading.ClassInvalidReturn, grading.ClassInvalidReturn},
			msg:     "not a dict",
		},
		{
			name:    "a bad extracted_output is that sample's invalid return",
			body:    "    return {'samples': [{'sample_id': 'c1', 'scores': {'correct': 1}, 'extracted_output': 3}, {'sample_id': 'c2', 'scores': {'correct': 0}, 'extracted_output': None}]}\n",
			classes: []grading.Class{grading.ClassInvalidReturn, grading.ClassOK},
			scores:  []map[string]float64{nil, {"correct": 0}},
			metrics: map[string]float64{},
			msg:     "extracted_output is 3",
		},
	}
	py := python(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPool(t, py, echo+tt.body, mka1Config("correct", func(c *Config) {
				c.Contract = ContractBatch
				c.MKA1.Metrics = tt.declared
			}))
			got, err := p.Grade(context.Background(), tasks)
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range got {
				if o.Class != tt.classes[i] {
					t.Fatalf("case %d: class %s, want %s (%+v)", i, o.Class, tt.classes[i], o.Error)
				}
				if o.Class != grading.ClassOK {
					if !strings.Contains(o.Error.Message, tt.msg) {
						t.Errorf("case %d: message %q, want it to contain %q", i, o.Error.Message, tt.msg)
					}
				} else if diff := cmp.Diff(tt.scores[i], o.Scores); diff != "" {
					t.Errorf("case %d scores (-want +got):\n%s", i, diff)
				}
				var gotMetrics map[string]float64
				var gotDropped []string
				if o.Batch != nil {
					gotMetrics, gotDropped = o.Batch.Metrics, o.Batch.Dropped
					if o.Batch != got[0].Batch || o.Batch.Cases != len(tasks) {
						t.Errorf("case %d: batch report %+v, want the batch's one", i, o.Batch)
					}
				}
				if diff := cmp.Diff(tt.metrics, gotMetrics); diff != "" {
					t.Errorf("case %d metrics (-want +got):\n%s", i, diff)
				}
				if diff := cmp.Diff(tt.dropped, gotDropped); diff != "" {
					t.Errorf("case %d dropped (-want +got):\n%s", i, diff)
				}
			}
			if tt.output != "" && strings.TrimSpace(got[0].Output) != tt.output {
				t.Errorf("grade_batch saw\n%s\nwant\n%s", strings.TrimSpace(got[0].Output), tt.output)
			}
		})
	}
}

// TestMKA1Reads: a read of a convenience field is a read of the row field
// that fed it (target from answer), or of nothing (task_id).
func TestMKA1Reads(t *testing.T) {
	const src = "def grade(sample, item):\n    return 1.0 if sample['extracted_output'] == item.get('target') and item['task_id'] else 0.0\n"
	p := newPool(t, python(t), src, mka1Config("score", nil))
	tk := mka1Task("c1", `{"output_text": "4"}`, `{"question": "2+2?", "answer": "4"}`)
	tk.RecordReads = true
	got, err := p.Grade(context.Background(), []grading.Task{tk})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Class != grading.ClassOK || *got[0].Score != 1 {
		t.Fatalf("outcome %+v", got[0])
	}
	if diff := cmp.Diff([]string{"answer"}, got[0].Reads); diff != "" {
		t.Errorf("reads (-want +got):\n%s", diff)
	}
}

// TestMKA1BatchExtractedOutput: an update's extracted_output replaces the
// sample's, and the outcome carries it; a sample not updated carries none.
func TestMKA1BatchExtractedOutput(t *testing.T) {
	const src = "def grade_batch(samples):\n" +
		"    return {'samples': [{'sample_id': 'c1', 'scores': {'correct': 1.0}, 'extracted_output': 'positive'},\n" +
		"                        {'sample_id': 'c2', 'scores': {'correct': 0.0}, 'extracted_output': None},\n" +
		"                        {'sample_id': 'c3', 'scores': {'correct': 1.0}}]}\n"
	p := newPool(t, python(t), src, mka1Config("correct", func(c *Config) { c.Contract = ContractBatch }))
	got, err := p.Grade(context.Background(), []grading.Task{
		mka1Task("c1", `{"output_text": "The answer is positive."}`, `{"label": "positive"}`),
		mka1Task("c2", `{"output_text": "unsure"}`, `{"label": "negative"}`),
		mka1Task("c3", `{"output_text": "neutral"}`, `{"label": "neutral"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{`"positive"`, `null`, ``} {
		if got[i].Class != grading.ClassOK || string(got[i].ExtractedOutput) != want {
			t.Errorf("case %d: class %s, extracted_output %q, want %q", i, got[i].Class, got[i].ExtractedOutput, want)
		}
	}
}
