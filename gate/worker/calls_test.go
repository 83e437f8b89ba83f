//go:build linux

package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/judge"
	"github.com/gradegate/gradegate/gate/judge/judgetest"
	"github.com/gradegate/gradegate/gate/sandbox"
)

// echoBroker answers every call with its arguments, as a response whose
// output_text is the input; input "refuse" is refused the way the API's 400
// is, and "fail" fails the gate.
type echoBroker struct {
	mu    sync.Mutex
	calls []string
}

func (b *echoBroker) Call(ctx context.Context, kind string, args json.RawMessage) (json.RawMessage, grading.ModelCall, error) {
	var a struct {
		Model string `json:"model"`
		Input any    `json:"input"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, grading.ModelCall{}, err
	}
	b.mu.Lock()
	b.calls = append(b.calls, kind+":"+string(args))
	b.mu.Unlock()
	call := grading.ModelCall{Kind: kind, Model: a.Model, InputTokens: 3, OutputTokens: 1}
	switch a.Input {
	case "refuse":
		return nil, call, &grading.ModelCallError{Type: "ModelCallError", Message: "HTTP 400: bad input"}
	case "fail":
		return nil, call, errors.New("HTTP 500: the API is down (after 2 retries)")
	}
	if kind == "embeddings" {
		return json.RawMessage(`{"object":"list","data":[{"embedding":[1,0]},{"embedding":[1,0]}],"model":"emb"}`), call, nil
	}
	out, _ := json.Marshal(map[string]any{"id": "resp_1", "output_text": a.Input, "output": []any{}, "usage": map[string]any{"input_tokens": 3}})
	return out, call, nil
}

// TestModelCalls: a grade(sample, item, ctx) asks through ctx, in the
// sandbox; the calls come back with the outcome, the budget raises inside
// the grader, a refusal is an exception the grader can catch, and a gate
// failure fails the run whatever the grader does.
func TestModelCalls(t *testing.T) {
	sb, py := sandboxed(t)
	const src = `import os

def grade(sample, item, ctx):
    what = sample["what"]
    if what == "env":
        return 1.0 if not any("KEY" in k for k in os.environ) else 0.0
    if what == "embed":
        r = ctx.embeddings_create(model="auto", input=["a", "b"])
        return float(r["data"][0]["embedding"][0] == r.data[1].embedding[0])
    if what == "budget":
        for i in range(10):
            try:
                ctx.responses_create(model="auto", input="x")
            except ctx.ModelCallBudgetExceeded:
                return float(i)
        return -1.0
    if what == "refuse":
        try:
            ctx.responses_create(input="refuse")
        except ctx.ModelCallError as e:
            return 0.5 if "HTTP 400" in str(e) else 0.0
        return 0.0
    if what == "fail":
        try:
            ctx.responses_create(input="fail")
        except BaseException:
            return 1.0
    r = ctx.responses_create(model="auto", input=what)
    return 1.0 if r["output_text"] == what and r.output_text == what else 0.0
`
	for _, isolation := range []string{IsolationWorker, IsolationCase} {
		t.Run(isolation, func(t *testing.T) { testModelCalls(t, sb, py, src, isolation) })
	}
}

func testModelCalls(t *testing.T, sb *sandbox.Sandbox, py Python, src, isolation string) {
	b := &echoBroker{}
	p := newPool(t, py, src, func(c *Config) {
		c.Sandbox = sb
		c.Broker = b
		c.MaxModelCalls = 3
		c.TimeoutSeconds = 10
		c.Isolation = isolation
	})
	tasks := []grading.Task{
		task("plain", map[string]any{"what": "hello"}),
		task("embed", map[string]any{"what": "embed"}),
		task("budget", map[string]any{"what": "budget"}),
		task("refuse", map[string]any{"what": "refuse"}),
		task("env", map[string]any{"what": "env"}),
	}
	got, err := p.Grade(context.Background(), tasks)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 1, 3, 0.5, 1}
	calls := []int{1, 1, 4, 1, 0}
	for i, o := range got {
		if o.Class != grading.ClassOK || *o.Score != want[i] {
			t.Errorf("%s: %s %v %+v (output %q)", tasks[i].ID, o.Class, o.Score, o.Error, o.Output)
			continue
		}
		if len(o.ModelCalls) != calls[i] {
			t.Errorf("%s: %d model calls recorded, want %d: %+v", tasks[i].ID, len(o.ModelCalls), calls[i], o.ModelCalls)
		}
	}
	if c := got[2].ModelCalls; len(c) == 4 && !strings.HasPrefix(c[3].Error, "ModelCallBudgetExceeded") {
		t.Errorf("the refused call is recorded as %+v", c[3])
	}

	_, err = p.Grade(context.Background(), []grading.Task{task("fail", map[string]any{"what": "fail"})})
	if err == nil || !strings.Contains(err.Error(), "the API is down") {
		t.Errorf("a gate failure inside a call: err %v, want the run to fail", err)
	}
}

// TestModelCallsUnavailable: without a broker a ctx grader still loads,
// and a call is an exception inside the grader.
func TestModelCallsUnavailable(t *testing.T) {
	const src = "def grade(sample, item, ctx):\n    ctx.responses_create(input='x')\n    return 1.0\n"
	p := newPool(t, python(t), src, nil)
	got, err := p.Grade(context.Background(), []grading.Task{task("a", map[string]any{})})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Class != grading.ClassGraderException || got[0].Error.Type != "ModelCallError" {
		t.Errorf("outcome %+v %+v", got[0], got[0].Error)
	}
}

// BenchmarkModelCall is the cost per case of a grader that makes one ctx
// call, in the sandbox, through the gate's broker: against the fake
// endpoint with the cache off, and replayed from the judge cache; beside
// the same grader making no call.
func BenchmarkModelCall(b *testing.B) {
	sb, py := sandboxed(b)
	fake := judgetest.New(b, func(string) string { return `{"verdict":"correct"}` })
	const cases = 200
	tasks := make([]grading.Task, cases)
	for i := range tasks {
		tasks[i] = task(fmt.Sprintf("c%d", i), map[string]any{"output_text": fmt.Sprintf("answer %d", i)})
	}
	const judged = "import json\ndef grade(sample, item, ctx):\n    r = ctx.responses_create(model='auto', input='Prediction: ' + sample['output_text'], temperature=0)\n    return 1.0 if json.loads(r['output_text'])['verdict'] == 'correct' else 0.0\n"
	const plain = "import json\ndef grade(sample, item, ctx):\n    return 1.0 if sample['output_text'] else 0.0\n"
	cache := &judge.Cache{Dir: b.TempDir()}
	broker := func(key string, mode judge.CacheMode) grading.ModelBroker {
		return judge.NewBroker(judge.BrokerConfig{
			Config:     judge.Config{BaseURL: fake.URL(), APIKey: key, HTTPClient: &http.Client{}, Cache: cache, CacheMode: mode},
			JudgeModel: "gpt-4.1-mini-2025-04-14",
		})
	}
	run := func(b *testing.B, src string, br grading.ModelBroker) {
		p := newPool(b, py, src, func(c *Config) {
			c.Sandbox, c.Broker, c.MaxModelCalls, c.TimeoutSeconds = sb, br, 4, 30
		})
		for b.Loop() {
			got, err := p.Grade(context.Background(), tasks)
			if err != nil {
				b.Fatal(err)
			}
			if got[0].Class != grading.ClassOK {
				b.Fatalf("%+v", got[0].Error)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*cases)/1e3, "µs/case")
	}
	b.Run("no-call", func(b *testing.B) { run(b, plain, broker(judgetest.Key, judge.CacheOff)) })
	b.Run("fake-endpoint", func(b *testing.B) { run(b, judged, broker(judgetest.Key, judge.CacheOff)) })
	// Record every case once, then replay with no key.
	rec := newPool(b, py, judged, func(c *Config) { c.Sandbox, c.Broker, c.MaxModelCalls = sb, broker(judgetest.Key, judge.CacheWrite), 4 })
	if _, err := rec.Grade(context.Background(), tasks); err != nil {
		b.Fatal(err)
	}
	b.Run("replayed", func(b *testing.B) { run(b, judged, broker("", judge.CacheRead)) })
}

// TestModelCallsBatch: grade_batch(samples, ctx) asks through ctx, and
// max_model_calls bounds the calls of the whole batch.
func TestModelCallsBatch(t *testing.T) {
	const src = `def grade_batch(samples, ctx):
    out = []
    for s in samples:
        try:
            r = ctx.responses_create(model="m", input=s["case_id"])
            score = 1.0 if r.output_text == s["case_id"] else 0.0
        except ctx.ModelCallBudgetExceeded:
            score = 0.25
        out.append({"case_id": s["case_id"], "scores": {"score": score}})
    return {"samples": out}
`
	b := &echoBroker{}
	p := newPool(t, python(t), src, func(c *Config) {
		c.Contract = ContractBatch
		c.Broker = b
		c.MaxModelCalls = 2
	})
	got, err := p.Grade(context.Background(), []grading.Task{task("a", map[string]any{}), task("b", map[string]any{}), task("c", map[string]any{})})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{1, 1, 0.25} {
		if got[i].Class != grading.ClassOK || *got[i].Score != want || len(got[i].ModelCalls) != 3 {
			t.Errorf("case %d: %s %v %+v, %d calls", i, got[i].Class, got[i].Score, got[i].Error, len(got[i].ModelCalls))
		}
	}
}
