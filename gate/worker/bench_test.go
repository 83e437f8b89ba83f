//go:build linux

package worker

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gradegate/gradegate/gate/grading"
)

// pythonFlag picks the interpreter BenchmarkPool uses, e.g. a system Python
// whose start-up is not slowed by a version manager's site-packages.
var pythonFlag = flag.String("python", "python3", "interpreter for BenchmarkPool")

// benchGrader stands in when the order-summary example is not there.
const benchGrader = `import json

def grade(sample, item):
    try:
        got = json.loads(sample["output_text"])
    except ValueError:
        return 0.0
    ok = type(got.get("total_cents")) is int and got["total_cents"] == item["expected_total_cents"]
    return 1.0 if ok else 0.0
`

// benchCases is how many cases one benchmark iteration grades.
const benchCases = 1000

// benchInput returns the grader source and benchCases tasks: the
// order-summary example's cases, repeated, when it exists.
func benchInput(b *testing.B) (source []byte, tasks []grading.Task) {
	dir := filepath.Join("..", "..", "testdata", "examples", "order-summary")
	src, err := os.ReadFile(filepath.Join(dir, "grader.py"))
	var base []grading.Task
	if err == nil {
		base, err = exampleTasks(dir)
	}
	if err != nil || len(base) == 0 {
		b.Logf("order-summary example not usable (%v); grading the built-in grader", err)
		src = []byte(benchGrader)
		base = nil
		for i := range 10 {
			base = append(base, grading.Task{
				ID:     strconv.Itoa(i),
				Sample: json.RawMessage(fmt.Sprintf(`{"output_text": "{\"total_cents\": %d}"}`, 100*i)),
				Item:   json.RawMessage(`{"expected_total_cents": 500}`),
			})
		}
	} else {
		b.Logf("grading testdata/examples/order-summary (%d distinct cases)", len(base))
	}
	for i := range benchCases {
		tasks = append(tasks, base[i%len(base)])
	}
	return src, tasks
}

// exampleTasks pairs cases.jsonl items with samples.jsonl samples.
func exampleTasks(dir string) ([]grading.Task, error) {
	samples := map[string]json.RawMessage{}
	if err := eachLine(filepath.Join(dir, "samples.jsonl"), func(line []byte) error {
		var s struct {
			CaseID string          `json:"case_id"`
			Sample json.RawMessage `json:"sample"`
		}
		if err := json.Unmarshal(line, &s); err != nil {
			return err
		}
		samples[s.CaseID] = s.Sample
		return nil
	}); err != nil {
		return nil, err
	}
	var tasks []grading.Task
	err := eachLine(filepath.Join(dir, "cases.jsonl"), func(line []byte) error {
		var c struct {
			Item   json.RawMessage `json:"item"`
			Sample json.RawMessage `json:"sample"`
		}
		if err := json.Unmarshal(line, &c); err != nil {
			return err
		}
		var id struct {
			CaseID string `json:"case_id"`
		}
		if err := json.Unmarshal(c.Item, &id); err != nil {
			return err
		}
		sample := c.Sample
		if sample == nil {
			sample = samples[id.CaseID]
		}
		if sample != nil {
			tasks = append(tasks, grading.Task{ID: id.CaseID, Sample: sample, Item: c.Item})
		}
		return nil
	})
	return tasks, err
}

func eachLine(path string, fn func([]byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			if err := fn(line); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
	}
	return sc.Err()
}

// inProcessLoop grades the same cases by calling grade in a plain Python
// loop: the floor the pool's per-case overhead is measured against.
const inProcessLoop = `import json, sys, time
src, data = sys.stdin.buffer.read().split(b"\0", 1)
ns = {"__name__": "grader"}
exec(compile(src, "grader.py", "exec"), ns)
grade = ns["grade"]
cases = [(c["sample"], c["item"]) for c in json.loads(data)]
for s, i in cases:  # warm up
    try: grade(s, i)
    except Exception: pass
best = None
for _ in range(5):
    t = time.perf_counter_ns()
    for s, i in cases:
        try: grade(s, i)
        except Exception: pass
    d = (time.perf_counter_ns() - t) / len(cases)
    best = d if best is None else min(best, d)
print(best)
`

func inProcessNsPerCase(b *testing.B, py Python, src []byte, tasks []grading.Task) float64 {
	data, err := json.Marshal(tasks2json(tasks))
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(py.Executable, "-I", "-B", "-c", inProcessLoop)
	cmd.Stdin = bytes.NewReader(append(append(append([]byte{}, src...), 0), data...))
	cmd.Env = environment(b.TempDir(), "", "")
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("in-process loop: %v", err)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		b.Fatalf("in-process loop printed %q: %v", out, err)
	}
	return v
}

func tasks2json(tasks []grading.Task) []map[string]json.RawMessage {
	var out []map[string]json.RawMessage
	for _, t := range tasks {
		out = append(out, map[string]json.RawMessage{"sample": t.Sample, "item": t.Item})
	}
	return out
}

// BenchmarkPool grades benchCases cases per iteration through the pool and
// compares the time per case with a plain in-process Python loop over the
// same cases. Custom metrics: ns/case-pool, ns/case-inprocess and
// ns/case-overhead (their difference: process, pipe and JSON cost).
func BenchmarkPool(b *testing.B) {
	py, err := ResolvePythonWorker(context.Background(), *pythonFlag)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("python: %s %s", py.Executable, py.Version)
	src, tasks := benchInput(b)
	inproc := inProcessNsPerCase(b, py, src, tasks)
	for _, bc := range []struct {
		name      string
		isolation string
		workers   int // 0: NumCPU
		recycle   int // 0: DefaultRecycleAfter
	}{
		{"isolation=worker/workers=1", IsolationWorker, 1, 0},
		// Without recycling: the steady-state cost of one case, apart from
		// interpreter start-up (which a host's site-packages can make slow).
		{"isolation=worker/workers=1/recycle=never", IsolationWorker, 1, 1 << 30},
		{"isolation=worker/workers=NumCPU", IsolationWorker, 0, 0},
		{"isolation=case/workers=1", IsolationCase, 1, 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p, err := New(context.Background(), Config{
				Source: src, SourceName: "grader.py", TimeoutSeconds: 10,
				Isolation: bc.isolation, Workers: bc.workers, RecycleAfter: bc.recycle,
				Python: py, Sandbox: newSandbox(b),
			})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			// Warm every process up (lazy start) before timing.
			if _, err := p.Grade(context.Background(), tasks); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			for b.Loop() {
				if _, err := p.Grade(context.Background(), tasks); err != nil {
					b.Fatal(err)
				}
			}
			perCase := float64(time.Since(start).Nanoseconds()) / float64(b.N*len(tasks))
			b.ReportMetric(perCase, "ns/case-pool")
			b.ReportMetric(inproc, "ns/case-inprocess")
			b.ReportMetric(perCase-inproc, "ns/case-overhead")
		})
	}
}

// benchLarge is how many cases BenchmarkLarge grades per iteration.
var benchLarge = flag.Int("large", 100_000, "cases per iteration of BenchmarkLarge")

// plainLoop reads a JSON lines file of {"sample", "item"} rows, decodes each
// line and calls grade: the physical limit of doing the work once, in one
// process, without isolation. It prints its wall time in seconds.
const plainLoop = `import json, sys, time
src = open(sys.argv[1], "rb").read()
ns = {"__name__": "grader"}
exec(compile(src, "grader.py", "exec"), ns)
grade = ns["grade"]
t = time.perf_counter()
with open(sys.argv[2], "rb") as f:
    for line in f:
        row = json.loads(line)
        try:
            grade(row["sample"], row["item"])
        except Exception:
            pass
print(time.perf_counter() - t)
`

// plainLoopSeconds runs plainLoop over tasks, written to a file first.
func plainLoopSeconds(b *testing.B, py Python, src []byte, tasks []grading.Task) float64 {
	dir := b.TempDir()
	var buf bytes.Buffer
	for _, t := range tasks {
		buf.WriteString(`{"sample":`)
		buf.Write(t.Sample)
		buf.WriteString(`,"item":`)
		buf.Write(t.Item)
		buf.WriteString("}\n")
	}
	data, grader := filepath.Join(dir, "tasks.jsonl"), filepath.Join(dir, "grader.py")
	if err := os.WriteFile(data, buf.Bytes(), 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(grader, src, 0o600); err != nil {
		b.Fatal(err)
	}
	out, err := exec.Command(py.Executable, "-I", "-B", "-c", plainLoop, grader, data).Output()
	if err != nil {
		b.Fatalf("plain loop: %v", err)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		b.Fatalf("plain loop printed %q: %v", out, err)
	}
	return v
}

// BenchmarkLarge grades -large cases (default 100k) of the order-summary
// example through the pool's Stream, NumCPU workers, and runs a plain
// in-process Python loop over the same tasks in the same iteration.
// Metrics: s/pool, s/loop, and x/loop (pool time over loop time: the
// ratio the README reports), plus us/case of the pool.
func BenchmarkLarge(b *testing.B) {
	py, err := ResolvePythonWorker(context.Background(), *pythonFlag)
	if err != nil {
		b.Fatal(err)
	}
	src, base := benchInput(b)
	tasks := make([]grading.Task, *benchLarge)
	for i := range tasks {
		tasks[i] = base[i%len(base)]
	}
	for _, bc := range []struct {
		name      string
		sandboxed bool
	}{
		{"unsandboxed", false},
		{"sandboxed", true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			sb, pyRun := newSandbox(b), py
			if bc.sandboxed {
				sb, pyRun = sandboxed(b)
			}
			var pool, loop float64
			for b.Loop() {
				start := time.Now()
				p, err := New(context.Background(), Config{
					Source: src, SourceName: "grader.py", TimeoutSeconds: 10,
					Python: pyRun, Sandbox: sb,
				})
				if err != nil {
					b.Fatal(err)
				}
				if err := streamTasks(p, tasks); err != nil {
					b.Fatal(err)
				}
				pool += time.Since(start).Seconds()
				if err := p.Close(); err != nil {
					b.Fatal(err)
				}
				loop += plainLoopSeconds(b, pyRun, src, tasks)
			}
			n := float64(b.N)
			b.ReportMetric(pool/n, "s/pool")
			b.ReportMetric(loop/n, "s/loop")
			b.ReportMetric(pool/loop, "x/loop")
			b.ReportMetric(pool/n/float64(len(tasks))*1e6, "us/case")
		})
	}
}

// streamTasks grades tasks through Stream, discarding the outcomes.
func streamTasks(p *Pool, tasks []grading.Task) error {
	i := 0
	return p.Stream(context.Background(), func() (grading.Task, bool, error) {
		if i >= len(tasks) {
			return grading.Task{}, false, nil
		}
		i++
		return tasks[i-1], true, nil
	}, func(int, grading.Outcome) error { return nil })
}

// BenchmarkIsolationCase is the cost of one case under isolation: case
// (a fork per case), one worker: ms/case.
func BenchmarkIsolationCase(b *testing.B) {
	py, err := ResolvePythonWorker(context.Background(), *pythonFlag)
	if err != nil {
		b.Fatal(err)
	}
	src, tasks := benchInput(b)
	tasks = tasks[:200]
	p, err := New(context.Background(), Config{
		Source: src, SourceName: "grader.py", TimeoutSeconds: 10,
		Isolation: IsolationCase, Workers: 1, Python: py, Sandbox: newSandbox(b),
	})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	start := time.Now()
	for b.Loop() {
		if _, err := p.Grade(context.Background(), tasks); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(time.Since(start).Seconds()*1000/float64(b.N*len(tasks)), "ms/case")
}

// BenchmarkWorkerStart starts a one-worker pool of the example grader and
// closes it, every sandbox layer on: ms/start, with worker.py given as its
// source and compiled ahead (Python.Worker).
func BenchmarkWorkerStart(b *testing.B) {
	sb, compiled := sandboxed(b)
	source := compiled
	source.Worker = nil
	src, _ := benchInput(b)
	for _, bc := range []struct {
		name string
		py   Python
	}{{"source", source}, {"compiled", compiled}} {
		b.Run(bc.name, func(b *testing.B) {
			start := time.Now()
			for b.Loop() {
				p, err := New(context.Background(), Config{
					Source: src, SourceName: "grader.py", TimeoutSeconds: 10, Workers: 1, Python: bc.py, Sandbox: sb,
				})
				if err != nil {
					b.Fatal(err)
				}
				if err := p.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(time.Since(start).Seconds()*1000/float64(b.N), "ms/start")
		})
	}
}

// BenchmarkVariants grades 27 variants of the grader (as mutation testing
// does) on 47 cases each: forked from one loaded pool, against a fresh pool
// per variant (how mutants were graded before Pool.Fork). ms/variant.
func BenchmarkVariants(b *testing.B) {
	py, err := ResolvePythonWorker(context.Background(), *pythonFlag)
	if err != nil {
		b.Fatal(err)
	}
	src, tasks := benchInput(b)
	tasks = tasks[:47]
	const variants = 27
	cfg := Config{Source: src, SourceName: "grader.py", TimeoutSeconds: 10, Workers: 2, Python: py, Sandbox: newSandbox(b)}
	variant := func(i int) []byte { return append(append([]byte{}, src...), fmt.Sprintf("\n_VARIANT = %d\n", i)...) }
	b.Run("fork", func(b *testing.B) {
		base, err := New(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer base.Close()
		start := time.Now()
		for b.Loop() {
			for i := range variants {
				v, err := base.Fork(context.Background(), variant(i))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := v.Grade(context.Background(), tasks); err != nil {
					b.Fatal(err)
				}
				if err := v.Close(); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(time.Since(start).Seconds()*1000/float64(b.N*variants), "ms/variant")
	})
	b.Run("fresh-pool", func(b *testing.B) {
		start := time.Now()
		for b.Loop() {
			for i := range variants {
				c := cfg
				c.Source = variant(i)
				p, err := New(context.Background(), c)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := p.Grade(context.Background(), tasks); err != nil {
					b.Fatal(err)
				}
				if err := p.Close(); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(time.Since(start).Seconds()*1000/float64(b.N*variants), "ms/variant")
	})
}
