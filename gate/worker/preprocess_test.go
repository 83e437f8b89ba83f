//go:build linux

package worker

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gradegate/gradegate/gate/grading"
)

// preTask is a task whose item is item and whose sample names the answer.
func preTask(id string, answer any, item map[string]any) grading.Task {
	s, _ := json.Marshal(map[string]any{"output_text": answer})
	i, _ := json.Marshal(item)
	return grading.Task{ID: id, Sample: s, Item: i}
}

// preGrader passes when the output is the item's answer, exactly: a row
// the preprocessor did not clean fails.
const preGrader = "def grade(sample, item):\n    return 1.0 if sample['output_text'] == item['answer'] else 0.0\n"

const preBatchGrader = `def grade_batch(samples):
    return {"samples": [{"case_id": s["case_id"], "scores": {"score": 1.0 if s["sample"]["output_text"] == s["item"]["answer"] else 0.0}} for s in samples]}
`

// want is what one task's outcome must be: omitted, or a class (with a
// score for ok, with the preprocessor marked and the text in the message
// otherwise).
type want struct {
	omitted bool
	class   grading.Class
	score   float64
	message string
}

func checkOutcomes(t *testing.T, got []grading.Outcome, wants []want) {
	t.Helper()
	if len(got) != len(wants) {
		t.Fatalf("%d outcomes, want %d", len(got), len(wants))
	}
	for i, w := range wants {
		o := got[i]
		if err := grading.CheckOutcome(o); err != nil {
			t.Errorf("task %d: %v", i, err)
		}
		switch {
		case w.omitted:
			if o.Omitted != omittedPreprocessedOut || o.Class != "" {
				t.Errorf("task %d: %s %q %+v, want omitted preprocessed_out", i, o.Class, o.Omitted, o.Error)
			}
		case w.class == grading.ClassOK:
			if o.Class != grading.ClassOK || *o.Score != w.score || o.Preprocess {
				t.Errorf("task %d: %s %+v, want ok %g", i, o.Class, o.Error, w.score)
			}
		default:
			if o.Class != w.class || o.Error == nil || !o.Preprocess || !strings.Contains(o.Error.Message, w.message) || o.Error.Line != 0 {
				t.Errorf("task %d: %s preprocess=%v %+v, want %s naming %q, no grader line", i, o.Class, o.Preprocess, o.Error, w.class, w.message)
			}
		}
	}
}

func TestPreprocessRow(t *testing.T) {
	t.Parallel()
	const src = `import time

def transform(row):
    if row.get("skip"):
        return None
    if row.get("hang"):
        time.sleep(60)  # LINE hang
    if row.get("list"):
        return [row]
    row["answer"] = str(row["answer"]).strip()  # LINE strip
    return row
`
	tasks := []grading.Task{
		preTask("clean", "4", map[string]any{"answer": " 4 "}),
		preTask("number", "4", map[string]any{"answer": 4}),
		preTask("dropped", "x", map[string]any{"answer": "x", "skip": true}),
		preTask("raises", "x", map[string]any{"question": "no answer"}),
		preTask("not a row", "x", map[string]any{"answer": "x", "list": true}),
		preTask("hangs", "x", map[string]any{"answer": "x", "hang": true}),
		preTask("after", "5", map[string]any{"answer": "5 "}),
	}
	wants := []want{
		{class: grading.ClassOK, score: 1},
		{class: grading.ClassOK, score: 1},
		{omitted: true},
		{class: grading.ClassGraderException, message: "raised in the preprocessor, preprocess.py line " + itoa(lineOf(src, "# LINE strip"))},
		{class: grading.ClassInvalidReturn, message: "transform returned list"},
		{class: grading.ClassTimeout, message: "preprocess.py ran past preprocess.timeout_seconds=1 (preprocess.py line " + itoa(lineOf(src, "# LINE hang")) + ")"},
		{class: grading.ClassOK, score: 1},
	}
	for _, isolation := range []string{IsolationWorker, IsolationCase} {
		t.Run(isolation, func(t *testing.T) {
			p := newPool(t, python(t), preGrader, func(c *Config) {
				c.Isolation = isolation
				c.Preprocess = &Preprocess{Source: []byte(src), SourceName: "preprocess.py", Contract: PreprocessRow, TimeoutSeconds: 1}
			})
			got, err := p.Grade(context.Background(), tasks)
			if err != nil {
				t.Fatal(err)
			}
			checkOutcomes(t, got, wants)
			if got[3].Error.Type != "KeyError" {
				t.Errorf("raises: type %q, want KeyError", got[3].Error.Type)
			}
		})
	}
}

// TestPreprocessCaughtAlarm: a preprocessor that swallows the worker's own
// stop still times out, after it returns.
func TestPreprocessCaughtAlarm(t *testing.T) {
	t.Parallel()
	const src = "import time\n\ndef transform(row):\n    try:\n        time.sleep(3)\n    except BaseException:\n        time.sleep(0.5)\n    return row\n"
	p := newPool(t, python(t), preGrader, func(c *Config) {
		c.TimeoutSeconds = 5
		c.Preprocess = &Preprocess{Source: []byte(src), Contract: PreprocessRow, TimeoutSeconds: 1}
	})
	got, err := p.Grade(context.Background(), []grading.Task{preTask("a", "x", map[string]any{"answer": "x"})})
	if err != nil {
		t.Fatal(err)
	}
	checkOutcomes(t, got, []want{{class: grading.ClassTimeout, message: "ran past preprocess.timeout_seconds=1"}})
}

func TestPreprocessBatch(t *testing.T) {
	t.Parallel()
	const src = `def transform_batch(rows):
    if any(r.get("boom") for r in rows):
        raise ValueError("bad rows")  # LINE boom
    if any(r.get("stranger") for r in rows):
        return [{"answer": "?"}] + rows
    if any(r.get("twice") for r in rows):
        return rows + rows
    if any(r.get("copy") for r in rows):
        # Copies, in another order: matched by the id field.
        return [dict(r, answer=str(r["answer"]).strip()) for r in reversed(rows) if not r.get("skip")]
    out = []
    for row in rows:
        if row.get("skip"):
            continue
        row["answer"] = str(row["answer"]).strip()
        out.append(row)
    return out
`
	pre := func(c *Config) {
		c.Preprocess = &Preprocess{Source: []byte(src), SourceName: "preprocess.py", Contract: PreprocessBatch, TimeoutSeconds: 2, IDField: "case_id"}
	}
	row := func(id string, answer any, extra ...string) map[string]any {
		m := map[string]any{"case_id": id, "answer": answer}
		for _, k := range extra {
			m[k] = true
		}
		return m
	}
	const rowSrc = "def transform(row):\n    if row.get('skip'):\n        return None\n    row['answer'] = str(row['answer']).strip()\n    return row\n"
	for _, tc := range []struct {
		name     string
		contract string
		tasks    []grading.Task
		wants    []want
		row      bool // transform(row) rather than transform_batch
	}{
		{"batch grader, row preprocessor", ContractBatch,
			[]grading.Task{preTask("a", "1", row("a", " 1")), preTask("b", "x", row("b", "x", "skip")), preTask("c", "2", map[string]any{"case_id": "c"}), preTask("d", "3", row("d", 3))},
			[]want{{class: grading.ClassOK, score: 1}, {omitted: true}, {class: grading.ClassGraderException, message: "raised in the preprocessor, preprocess.py line 4"}, {class: grading.ClassOK, score: 1}}, true},
		{"sample grader, in place", ContractSample,
			[]grading.Task{preTask("a", "1", row("a", " 1")), preTask("b", "x", row("b", "x", "skip")), preTask("c", "2", row("c", 3))},
			[]want{{class: grading.ClassOK, score: 1}, {omitted: true}, {class: grading.ClassOK, score: 0}}, false},
		{"sample grader, raises", ContractSample,
			[]grading.Task{preTask("a", "1", row("a", "1", "boom")), preTask("b", "2", row("b", "2"))},
			[]want{{class: grading.ClassGraderException, message: "bad rows (raised in the preprocessor, preprocess.py line 3)"}, {class: grading.ClassOK, score: 1}}, false},
		{"batch grader, in place", ContractBatch,
			[]grading.Task{preTask("a", "1", row("a", " 1")), preTask("b", "x", row("b", "x", "skip")), preTask("c", "2", row("c", 3))},
			[]want{{class: grading.ClassOK, score: 1}, {omitted: true}, {class: grading.ClassOK, score: 0}}, false},
		{"batch grader, copies by id", ContractBatch,
			[]grading.Task{preTask("a", "1", row("a", " 1", "copy")), preTask("b", "x", row("b", "x", "skip")), preTask("c", "3", row("c", 3))},
			[]want{{class: grading.ClassOK, score: 1}, {omitted: true}, {class: grading.ClassOK, score: 1}}, false},
		{"batch grader, every row dropped", ContractBatch,
			[]grading.Task{preTask("a", "1", row("a", "1", "skip")), preTask("b", "x", row("b", "x", "skip"))},
			[]want{{omitted: true}, {omitted: true}}, false},
		{"batch grader, a row of no case", ContractBatch,
			[]grading.Task{preTask("a", "1", row("a", "1", "stranger")), preTask("b", "2", row("b", "2"))},
			[]want{{class: grading.ClassInvalidReturn, message: "returned 3 rows for 2"}, {class: grading.ClassInvalidReturn, message: "returned 3 rows for 2"}}, false},
		{"batch grader, a row twice", ContractBatch,
			[]grading.Task{preTask("a", "1", row("a", "1", "twice"))},
			[]want{{class: grading.ClassInvalidReturn, message: "the row of case 'a' twice"}}, false},
		{"batch grader, raises", ContractBatch,
			[]grading.Task{preTask("a", "1", row("a", "1", "boom")), preTask("b", "2", row("b", "2"))},
			[]want{{class: grading.ClassGraderException, message: "bad rows"}, {class: grading.ClassGraderException, message: "bad rows"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			source := preGrader
			if tc.contract == ContractBatch {
				source = preBatchGrader
			}
			p := newPool(t, python(t), source, func(c *Config) {
				c.Contract = tc.contract
				pre(c)
				if tc.row {
					c.Preprocess.Source, c.Preprocess.Contract = []byte(rowSrc), PreprocessRow
				}
			})
			got, err := p.Grade(context.Background(), tc.tasks)
			if err != nil {
				t.Fatal(err)
			}
			checkOutcomes(t, got, tc.wants)
		})
	}
}

// TestPreprocessLoadErrors: a preprocessor that cannot load stops the pool
// as a grader would, and the error names it.
func TestPreprocessLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src, contract, message string
	}{
		{"syntax", "def transform(row)\n    return row\n", PreprocessRow, "preprocess.py line 1"},
		{"no transform", "def transform_batch(rows):\n    return rows\n", PreprocessRow, "defines no transform(row) function"},
		{"no transform_batch", "def transform(row):\n    return row\n", PreprocessBatch, "defines no transform_batch(rows) function"},
		{"two parameters", "def transform(row, extra):\n    return row\n", PreprocessRow, "transform(row, extra) must take one positional parameter"},
		{"raises at import", "raise RuntimeError('no')\n", PreprocessRow, "RuntimeError: no (raised in the preprocessor, preprocess.py line 1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(context.Background(), Config{
				Source: []byte(preGrader), SourceName: "grader.py", TimeoutSeconds: 1, Workers: 1,
				Python: python(t), Sandbox: newSandbox(t),
				Preprocess: &Preprocess{Source: []byte(tc.src), SourceName: "preprocess.py", Contract: tc.contract},
			})
			var le *LoadError
			if !errors.As(err, &le) || !strings.Contains(le.Err.Message, tc.message) || le.Err.Line != 0 || !le.Preprocess || !strings.HasPrefix(le.Error(), "preprocessor failed to load") {
				t.Fatalf("New: %v, want a load error naming %q without a grader line", err, tc.message)
			}
		})
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// BenchmarkPreprocess is the cost of a preprocessor per case: the
// order-summary example's cases graded by one process, without a
// preprocessor, and through an identity transform(row) and
// transform_batch(rows).
func BenchmarkPreprocess(b *testing.B) {
	py, err := ResolvePythonWorker(context.Background(), *pythonFlag)
	if err != nil {
		b.Fatal(err)
	}
	src, tasks := benchInput(b)
	for _, bc := range []struct {
		name string
		pre  *Preprocess
	}{
		{"none", nil},
		{"row", &Preprocess{Source: []byte("def transform(row):\n    return row\n"), Contract: PreprocessRow, TimeoutSeconds: 10}},
		{"batch", &Preprocess{Source: []byte("def transform_batch(rows):\n    return rows\n"), Contract: PreprocessBatch, TimeoutSeconds: 10}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p, err := New(context.Background(), Config{
				Source: src, SourceName: "grader.py", TimeoutSeconds: 10, Workers: 1, RecycleAfter: 1 << 30,
				Python: py, Sandbox: newSandbox(b), Preprocess: bc.pre,
			})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			if _, err := p.Grade(context.Background(), tasks); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			for b.Loop() {
				if _, err := p.Grade(context.Background(), tasks); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*len(tasks)), "ns/case")
		})
	}
}
