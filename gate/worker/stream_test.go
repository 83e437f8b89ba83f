//go:build linux

package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/manifest"
)

// streamAll runs p.Stream over tasks and returns the outcomes by sequence
// number, failing the test when one is emitted twice or never.
func streamAll(t *testing.T, p *Pool, tasks []grading.Task) ([]grading.Outcome, error) {
	t.Helper()
	out := make([]grading.Outcome, len(tasks))
	seen := make([]int, len(tasks))
	var mu sync.Mutex
	i := 0
	err := p.Stream(context.Background(), func() (grading.Task, bool, error) {
		if i >= len(tasks) {
			return grading.Task{}, false, nil
		}
		i++
		return tasks[i-1], true, nil
	}, func(seq int, o grading.Outcome) error {
		mu.Lock()
		defer mu.Unlock()
		out[seq] = o
		seen[seq]++
		return nil
	})
	if err != nil {
		return nil, err
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("task %d emitted %d times, want once", k, n)
		}
	}
	return out, nil
}

// pipelined grades cases that each say what to do; every other case is a
// plain score, so each failure sits in the middle of a window.
const pipelined = `import os, sys, ctypes, time
def grade(sample, item):
    kind = sample.get("kind")
    if kind == "crash":
        os.write(2, b"below python before the crash\n")
        ctypes.string_at(0)  # LINE segv
    if kind == "exit":
        os._exit(3)
    if kind == "loop":
        while True: pass  # LINE loop
    if kind == "print-c":
        os.write(1, b"c-level output of " + sample["tag"].encode() + b"\n")
        return None
    if kind == "bool":
        return True
    if kind == "raise":
        raise ValueError("no")
    if kind == "fork":
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        return 0.5
    return sample["v"]
`

// TestStreamExactOutcomes: with windows of pipelined requests, each failure
// is its own case's, the cases after it are graded by a fresh process, and
// output written below Python (a faulthandler dump included) lands on the
// case that wrote it.
func TestStreamExactOutcomes(t *testing.T) {
	t.Parallel()
	type want struct {
		class  grading.Class
		score  float64
		output string // substring of Output
		line   string // marker of the grader line the error names
	}
	var tasks []grading.Task
	var wants []want
	add := func(sample map[string]any, w want) {
		tasks = append(tasks, task(fmt.Sprint(len(tasks)), sample))
		wants = append(wants, w)
	}
	for i := range 40 {
		add(map[string]any{"kind": "print-c", "tag": fmt.Sprint("t", i)}, want{class: grading.ClassInvalidReturn, output: fmt.Sprintf("c-level output of t%d\n", i)})
		switch i {
		case 5:
			add(map[string]any{"kind": "crash"}, want{class: grading.ClassWorkerCrash, output: "below python before the crash", line: "# LINE segv"})
		case 11:
			add(map[string]any{"kind": "exit"}, want{class: grading.ClassWorkerCrash})
		case 17:
			add(map[string]any{"kind": "loop"}, want{class: grading.ClassTimeout, line: "# LINE loop"})
		case 23:
			add(map[string]any{"kind": "raise"}, want{class: grading.ClassGraderException})
		default:
			add(map[string]any{"kind": "plain", "v": float64(i) / 100}, want{class: grading.ClassOK, score: float64(i) / 100})
		}
	}
	// print-c cases return nothing: invalid_return, which keeps the process.
	for _, isolation := range []string{IsolationWorker, IsolationCase} {
		t.Run(isolation, func(t *testing.T) {
			p := newPool(t, python(t), pipelined, func(c *Config) { c.Isolation = isolation; c.Workers = 2 })
			got, err := streamAll(t, p, tasks)
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range got {
				w := wants[i]
				if o.Class != w.class {
					t.Errorf("task %d: Class = %s, want %s (error %+v, output %.200q)", i, o.Class, w.class, o.Error, o.Output)
					continue
				}
				if w.class == grading.ClassOK && *o.Score != w.score {
					t.Errorf("task %d: Score = %v, want %v", i, *o.Score, w.score)
				}
				if w.output != "" && !strings.Contains(o.Output, w.output) {
					t.Errorf("task %d: Output = %q, want it to contain %q", i, o.Output, w.output)
				}
				if strings.Contains(o.Output, "c-level output") && (w.output == "" || strings.Count(o.Output, "c-level output") != 1) {
					t.Errorf("task %d: Output = %q, holds another case's output", i, o.Output)
				}
				if w.line != "" && (o.Error == nil || o.Error.Line != lineOf(pipelined, w.line)) {
					t.Errorf("task %d: Error = %+v, want line %d", i, o.Error, lineOf(pipelined, w.line))
				}
			}
			// Task 11 is the segfault: its faulthandler dump is its own.
			if !strings.Contains(got[11].Output, "Fatal Python error") || strings.Contains(got[10].Output+got[12].Output, "Fatal Python error") {
				t.Errorf("the crash dump is not task 11's: %q / %q / %q", got[10].Output, got[11].Output, got[12].Output)
			}
		})
	}
}

// TestRestartsOnlyWhenNeeded counts process starts: a result the grader
// returned (valid or not), an exception, or a child process that exits on
// its own never costs a restart; a crash costs exactly one.
func TestRestartsOnlyWhenNeeded(t *testing.T) {
	tests := []struct {
		name   string
		kind   string
		n      int
		starts int64
		class  grading.Class
	}{
		{"invalid returns", "bool", 600, 1, grading.ClassInvalidReturn},
		{"exceptions", "raise", 300, 1, grading.ClassGraderException},
		{"a child forked per case", "fork", 100, 1, grading.ClassOK},
		{"one crash", "exit", 1, 2, grading.ClassWorkerCrash},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPool(t, python(t), pipelined, nil)
			var tasks []grading.Task
			for i := range tt.n {
				tasks = append(tasks, task(fmt.Sprint(i), map[string]any{"kind": tt.kind}))
			}
			tasks = append(tasks, task("after", map[string]any{"v": 1}))
			got, err := p.Grade(context.Background(), tasks)
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range got[:tt.n] {
				if o.Class != tt.class {
					t.Fatalf("task %d: Class = %s, want %s (%+v)", i, o.Class, tt.class, o.Error)
				}
			}
			if o := got[tt.n]; o.Class != grading.ClassOK {
				t.Errorf("the case after: %s %+v", o.Class, o.Error)
			}
			if n := p.starts.Load(); n != tt.starts {
				t.Errorf("%d processes started, want %d", n, tt.starts)
			}
		})
	}
}

// TestHostileProtocolWriter: a grader that writes forged 25 MB replies to
// the protocol pipe loses its own case (worker_crash), the next case is
// graded, and the gate never buffers more than one response's limit.
func TestHostileProtocolWriter(t *testing.T) {
	src := `import os
def grade(sample, item):
    if sample.get("kind") == "flood":
        chunk = b"x" * (1 << 20)
        for _ in range(25):
            os.write(4, chunk)
        os.write(4, b"\n")
    if sample.get("kind") == "lines":
        line = b'{"id": 1, "class": "ok", "scores": {"score": 1.0}, "judge": "' + b"y" * (1 << 20) + b'"}\n'
        for _ in range(25):
            os.write(4, line)
    return 0.0
`
	for _, isolation := range []string{IsolationWorker, IsolationCase} {
		t.Run(isolation, func(t *testing.T) {
			p := newPool(t, python(t), src, func(c *Config) { c.Isolation = isolation })
			got, err := p.Grade(context.Background(), []grading.Task{
				task("flood", map[string]any{"kind": "flood"}), task("next", map[string]any{}),
				task("lines", map[string]any{"kind": "lines"}), task("last", map[string]any{}),
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, i := range []int{0, 2} {
				if got[i].Class == grading.ClassOK && *got[i].Score == 1 {
					t.Errorf("task %d: a forged reply was taken: %+v", i, got[i])
				}
				if len(got[i].Judge) > 0 || len(got[i].Output) > 9<<10 {
					t.Errorf("task %d: %d bytes of judge, %d of output reached the outcome", i, len(got[i].Judge), len(got[i].Output))
				}
			}
			for _, i := range []int{1, 3} {
				if got[i].Class != grading.ClassOK || *got[i].Score != 0 {
					t.Errorf("task %d: %s %+v, want ok 0", i, got[i].Class, got[i].Error)
				}
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			limit := (&request{seqs: []int{0}}).limit(p.cfg.OutputLimit)
			if peak := p.peakBuffered.Load(); peak > int64(limit+2*(64<<10)) {
				t.Errorf("the pool buffered %d bytes of one process's responses, want at most %d", peak, limit+2*(64<<10))
			}
		})
	}
}

// TestUndecodableRequest: a request the worker cannot read is a tool
// failure naming the case, never a grader's outcome.
func TestUndecodableRequest(t *testing.T) {
	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	tests := []struct {
		name   string
		sample json.RawMessage
	}{
		{"invalid UTF-8", json.RawMessage("{\"text\": \"\xff\xfe\"}")},
		{"nested too deep", json.RawMessage(`{"a": ` + deep + `}`)},
		{"not JSON", json.RawMessage(`{"a": }`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPool(t, python(t), pipelined, nil)
			_, err := p.Grade(context.Background(), []grading.Task{
				task("fine", map[string]any{"v": 1}),
				{ID: "broken-row", Sample: tt.sample, Item: json.RawMessage(`{}`)},
			})
			if err == nil || !strings.Contains(err.Error(), `"broken-row"`) || !strings.Contains(err.Error(), "cannot decode") {
				t.Errorf("Grade error = %v, want a tool error naming broken-row", err)
			}
			if !errors.Is(err, manifest.ErrInput) {
				t.Errorf("Grade error = %v, want an input error (exit 2)", err)
			}
			var le *LoadError
			if errors.As(err, &le) {
				t.Errorf("got a LoadError: %v", err)
			}
		})
	}
}

// TestStreamBatches: under the batch contract a window holds several
// batches; a batch that kills its process is that batch's failure only.
func TestStreamBatches(t *testing.T) {
	src := `import os
def grade_batch(samples):
    if any(s["sample"].get("exit") for s in samples):
        os._exit(5)
    return {"samples": [{"case_id": s["case_id"], "scores": {"score": s["sample"]["v"]}} for s in samples]}
`
	p := newPool(t, python(t), src, func(c *Config) { c.Contract = ContractBatch; c.BatchSize = 3 })
	var tasks []grading.Task
	for i := range 20 {
		s := map[string]any{"v": float64(i)}
		if i == 7 {
			s["exit"] = true
		}
		tasks = append(tasks, task(fmt.Sprint(i), s))
	}
	got, err := streamAll(t, p, tasks)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range got {
		inBad := i >= 6 && i < 9 // the batch of 7
		switch {
		case inBad && o.Class != grading.ClassWorkerCrash:
			t.Errorf("task %d: Class = %s, want worker_crash with its batch", i, o.Class)
		case !inBad && (o.Class != grading.ClassOK || *o.Score != float64(i)):
			t.Errorf("task %d: %s %+v, want ok %d", i, o.Class, o.Error, i)
		}
	}
}

// TestBacklog: a slot without a process waits for requests that stay
// queued for startWait before it starts one, and gives up when every
// request is queued and taken, or when the stream ends.
func TestBacklog(t *testing.T) {
	tests := []struct {
		name   string
		queued int  // requests left in the queue
		fed    bool // every request is queued
		cancel bool
		want   bool
	}{
		{"all taken", 0, true, false, false},
		{"requests wait", 3, false, false, true},
		{"requests wait after the last is queued", 3, true, false, true},
		{"stream ended", 0, false, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reqs := make(chan *request, 8)
			for range tt.queued {
				reqs <- &request{}
			}
			fed := make(chan struct{})
			if tt.fed {
				close(fed)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				cancel()
			}
			start := time.Now()
			if got := backlog(ctx, reqs, fed); got != tt.want {
				t.Fatalf("backlog = %v, want %v", got, tt.want)
			}
			if tt.want && time.Since(start) < startWait {
				t.Errorf("backlog said true after %v, before startWait (%v)", time.Since(start), startWait)
			}
		})
	}
	t.Run("empty until the stream is fed", func(t *testing.T) {
		// The processes that are up keep the queue empty; backlog waits
		// for the end of the stream, and starts nothing.
		reqs := make(chan *request, 8)
		fed := make(chan struct{})
		time.AfterFunc(3*startWait, func() { close(fed) })
		if backlog(context.Background(), reqs, fed) {
			t.Fatal("backlog = true for a queue that was never waiting")
		}
	})
}

// TestSecondProcessForBacklog: the cases of a slow grader wait, so the
// second worker's process starts for them; StartAll starts every process
// with the pool.
func TestSecondProcessForBacklog(t *testing.T) {
	const src = "import time\ndef grade(sample, item):\n    time.sleep(sample.get('sleep', 0))\n    return 1.0\n"
	tests := []struct {
		name     string
		n        int
		sleep    float64
		startAll bool
		starts   int64
	}{
		{"slow grader", 6, 0.1, false, 2},
		{"start all", 4, 0, true, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPool(t, python(t), src, func(c *Config) { c.Workers, c.StartAll = 2, tt.startAll })
			var tasks []grading.Task
			for i := range tt.n {
				tasks = append(tasks, task(fmt.Sprint(i), map[string]any{"sleep": tt.sleep}))
			}
			got, err := p.Grade(context.Background(), tasks)
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range got {
				if o.Class != grading.ClassOK {
					t.Fatalf("task %d: %s %+v", i, o.Class, o.Error)
				}
			}
			// Close waits for a process still loading.
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			if n := p.starts.Load(); n != tt.starts {
				t.Errorf("%d processes started, want %d", n, tt.starts)
			}
		})
	}
}
