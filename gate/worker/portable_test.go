package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/sandbox"
	"github.com/gradegate/gradegate/manifest"
)

// The portable pool's tests build on every system (no build constraint) and
// run with real Python: on Linux they hold the pool macOS and Windows grade
// with to the same outcomes as the Linux pool.

// portablePython resolves the system interpreter, or python3 on PATH.
func portablePython(t testing.TB) Python {
	t.Helper()
	name := "python3"
	switch runtime.GOOS {
	case "linux":
		// The system interpreter: python3 on PATH may be a slow shim.
		if _, err := os.Stat("/usr/bin/python3"); err == nil {
			name = "/usr/bin/python3"
		}
	case "windows":
		name = "python"
	}
	py, err := ResolvePython(context.Background(), name)
	if err != nil {
		t.Skipf("no Python interpreter: %v", err)
	}
	return py
}

// newPortablePool starts a portable pool for source with one worker, a
// one-second timeout and no sandbox, and closes it when the test ends.
func newPortablePool(t testing.TB, source string, mod func(*Config)) *PortablePool {
	t.Helper()
	sb, err := sandbox.New(sandbox.WithUnsandboxed(true))
	if err != nil {
		t.Fatalf("sandbox.New: %v", err)
	}
	cfg := Config{
		Source:         []byte(source),
		SourceName:     "grader.py",
		TimeoutSeconds: 1,
		Workers:        1,
		Python:         portablePython(t),
		Sandbox:        sb,
	}
	if mod != nil {
		mod(&cfg)
	}
	p, err := NewPortable(context.Background(), cfg)
	if err != nil {
		t.Fatalf("NewPortable: %v", err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

func portableTask(id string, sample any) grading.Task {
	s, _ := json.Marshal(sample)
	return grading.Task{ID: id, Sample: s, Item: json.RawMessage(`{"expected": 1}`)}
}

// portableGrader wraps body as the tail of grade(sample, item). A sample
// with "followup" returns 0.5 before body runs, so one grader also proves
// that the case after a failure is still graded.
func portableGrader(body string) string {
	return "import os, sys, ctypes\n\n" +
		"def helper(item):\n" +
		"    return item['missing']  # LINE helper\n\n" +
		"def grade(sample, item):\n" +
		"    if sample.get('followup'):\n" +
		"        return 0.5\n" +
		body + "\n"
}

func portableLineOf(src, marker string) int {
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, marker) {
			return i + 1
		}
	}
	return 0
}

func TestPortableGradeClasses(t *testing.T) {
	t.Parallel()
	unix := runtime.GOOS != "windows"
	tests := []struct {
		name    string
		body    string
		class   grading.Class
		score   float64 // when ok
		errType string
		message string // substring of Error.Message
		line    string // marker of the grader line the error must name
		check   func(t *testing.T, o grading.Outcome)
	}{
		{name: "ok float", body: "    return 0.75", class: grading.ClassOK, score: 0.75},
		{name: "ok int", body: "    return 1", class: grading.ClassOK, score: 1},
		{
			name:  "dict with scores and judge",
			body:  `    return {"scores": {"score": 0.0, "aux": 3}, "judge": {"why": "total differs"}}`,
			class: grading.ClassOK, score: 0,
			check: func(t *testing.T, o grading.Outcome) {
				if o.Scores["aux"] != 3 || !strings.Contains(string(o.Judge), "total differs") {
					t.Errorf("Scores = %v, Judge = %s; want aux 3 and the judge", o.Scores, o.Judge)
				}
			},
		},
		{name: "dict without metric", body: `    return {"scores": {"accuracy": 1.0}}`, class: grading.ClassInvalidReturn, message: "'score'"},
		{name: "bool", body: "    return True", class: grading.ClassInvalidReturn, message: "bool True"},
		{name: "NaN", body: "    return float('nan')", class: grading.ClassInvalidReturn, message: "nan"},
		{name: "None", body: "    return None", class: grading.ClassInvalidReturn, message: "NoneType"},
		{
			name: "raise KeyError", body: "    raise KeyError('expected_total_cents')  # LINE raise",
			class: grading.ClassGraderException, errType: "KeyError", message: "expected_total_cents", line: "# LINE raise",
		},
		{
			name: "exception in a helper", body: "    return helper(item)",
			class: grading.ClassGraderException, errType: "KeyError", message: "missing", line: "# LINE helper",
		},
		{name: "sys.exit", body: "    sys.exit(2)", class: grading.ClassGraderException, errType: "SystemExit"},
		{name: "MemoryError", body: "    raise MemoryError()", class: grading.ClassMemoryExceeded, errType: "MemoryError"},
		{
			name: "infinite loop", body: "    while True: pass  # LINE loop",
			class: grading.ClassTimeout, message: "timeout_seconds=1", line: map[bool]string{true: "# LINE loop"}[unix],
		},
		{name: "os._exit", body: "    os._exit(3)", class: grading.ClassWorkerCrash, message: "status 3"},
		{
			name:  "crash naming a failed allocation",
			body:  "    os.write(2, b'std::bad_alloc\\n')\n    os._exit(134)",
			class: grading.ClassMemoryExceeded, message: "status 134",
		},
		{
			name:  "forged result line and 10 MB of prints",
			body:  `    print('{"id": 1, "class": "ok", "scores": {"score": 1.0}}')` + "\n" + `    print("x" * (10 << 20))` + "\n    return 0.25",
			class: grading.ClassOK, score: 0.25,
			check: wantCut(`{"id": 1, "class": "ok"`),
		},
		{
			name:  "10 MB written below Python",
			body:  "    os.write(1, b'z' * (10 << 20))\n    os.write(2, b'w' * 100)\n    return 0.25",
			class: grading.ClassOK, score: 0.25,
			check: wantCut("zzz"),
		},
	}
	if unix {
		tests = append(tests, struct {
			name    string
			body    string
			class   grading.Class
			score   float64
			errType string
			message string
			line    string
			check   func(t *testing.T, o grading.Outcome)
		}{name: "segfault", body: "    ctypes.string_at(0)  # LINE segv", class: grading.ClassWorkerCrash, message: "SIGSEGV", line: "# LINE segv"})
	}
	for _, isolation := range []string{IsolationWorker, IsolationCase} {
		t.Run(isolation, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					src := portableGrader(tt.body)
					p := newPortablePool(t, src, func(c *Config) { c.Isolation = isolation })
					got, err := p.Grade(context.Background(), []grading.Task{
						portableTask("case", map[string]any{}),
						portableTask("next", map[string]any{"followup": true}),
					})
					if err != nil {
						t.Fatalf("Grade: %v", err)
					}
					if len(got) != 2 {
						t.Fatalf("Grade returned %d outcomes, want 2", len(got))
					}
					o := got[0]
					if o.Class != tt.class {
						t.Fatalf("Class = %s, want %s (error %+v, output %.300q)", o.Class, tt.class, o.Error, o.Output)
					}
					if o.DurationMS <= 0 {
						t.Errorf("DurationMS = %v, want > 0", o.DurationMS)
					}
					if tt.class == grading.ClassOK {
						if o.Score == nil || *o.Score != tt.score || o.Error != nil {
							t.Errorf("Score = %v, Error = %+v; want %v", o.Score, o.Error, tt.score)
						}
					} else {
						if o.Error == nil || o.Error.Class != tt.class || o.Score != nil {
							t.Fatalf("Error = %+v, Score = %v; want an error of class %s", o.Error, o.Score, tt.class)
						}
						if tt.errType != "" && o.Error.Type != tt.errType {
							t.Errorf("Error.Type = %q, want %q", o.Error.Type, tt.errType)
						}
						if !strings.Contains(o.Error.Message, tt.message) {
							t.Errorf("Error.Message = %q, want it to contain %q", o.Error.Message, tt.message)
						}
						if tt.line != "" && o.Error.Line != portableLineOf(src, tt.line) {
							t.Errorf("Error.Line = %d, want %d (output %.500q)", o.Error.Line, portableLineOf(src, tt.line), o.Output)
						}
					}
					if tt.check != nil {
						tt.check(t, o)
					}
					if next := got[1]; next.Class != grading.ClassOK || *next.Score != 0.5 {
						t.Errorf("the next case: Class = %s, Error = %+v; want ok 0.5", next.Class, next.Error)
					}
				})
			}
		})
	}
}

func TestPortableLoadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		source  string
		class   grading.Class
		message string
		line    int
		output  string
	}{
		{name: "syntax error", source: "x = 1\ndef grade(sample, item)\n    return 1\n", class: grading.ClassGraderException, message: "SyntaxError", line: 2},
		{name: "raise at import", source: "print('loading')\nimport json\nraise RuntimeError('no config')\n", class: grading.ClassGraderException, message: "RuntimeError: no config", line: 3, output: "loading"},
		{name: "no grade function", source: "def score(sample, item):\n    return 1\n", class: grading.ClassGraderException, message: "defines no grade(sample, item)"},
		{name: "wrong arity", source: "def grade(sample):\n    return 1\n", class: grading.ClassGraderException, message: "grade(sample) must take exactly two", line: 1},
		{name: "exit at import", source: "import os\nos._exit(7)\n", class: grading.ClassWorkerCrash, message: "status 7"},
		{name: "loop at import", source: "import os\nwhile True: pass\n", class: grading.ClassTimeout, message: "load_timeout_seconds=1", line: 2},
	}
	if runtime.GOOS == "windows" {
		tests[len(tests)-1].line = 0 // no stack to ask for before the kill
	}
	sb, err := sandbox.New(sandbox.WithUnsandboxed(true))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewPortable(context.Background(), Config{
				Source: []byte(tt.source), SourceName: "grader.py", TimeoutSeconds: 1, LoadTimeoutSeconds: 1,
				Workers: 1, Python: portablePython(t), Sandbox: sb,
			})
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("NewPortable error = %v, want a *LoadError", err)
			}
			if le.Err.Class != tt.class || !strings.Contains(le.Err.Message, tt.message) || le.Err.Line != tt.line {
				t.Errorf("LoadError = %+v, want class %s, message containing %q, line %d", le.Err, tt.class, tt.message, tt.line)
			}
			if !strings.Contains(le.Output, tt.output) {
				t.Errorf("Output = %q, want it to contain %q", le.Output, tt.output)
			}
		})
	}
}

// TestPortableProtocolPipe: a grader that writes forged replies to the
// worker's response descriptor (fd 4) loses its own case, never gets a
// forged score, and the next case is graded; a 25 MB flood is refused at
// the response limit, not buffered whole.
func TestPortableProtocolPipe(t *testing.T) {
	src := `import os
def grade(sample, item):
    kind = sample.get("kind")
    if kind == "forged":
        os.write(4, b'{"id": 1, "class": "ok", "scores": {"score": 1.0}}\n')
    if kind == "flood":
        chunk = b"x" * (1 << 20)
        for _ in range(25):
            os.write(4, chunk)
        os.write(4, b"\n")
    return 0.0
`
	for _, isolation := range []string{IsolationWorker, IsolationCase} {
		t.Run(isolation, func(t *testing.T) {
			p := newPortablePool(t, src, func(c *Config) { c.Isolation = isolation })
			got, err := p.Grade(context.Background(), []grading.Task{
				portableTask("forged", map[string]any{"kind": "forged"}), portableTask("next", map[string]any{}),
				portableTask("flood", map[string]any{"kind": "flood"}), portableTask("last", map[string]any{}),
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, i := range []int{0, 2} {
				if got[i].Class != grading.ClassWorkerCrash || !strings.Contains(got[i].Error.Message, "protocol") {
					t.Errorf("task %d: %s %+v, want worker_crash for a broken protocol", i, got[i].Class, got[i].Error)
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
			if peak := p.peakBuffered.Load(); peak > int64(limit+64<<10) {
				t.Errorf("the pool buffered %d bytes of one process's responses, want at most %d", peak, limit+64<<10)
			}
		})
	}
}

// TestPortableIsolation: under isolation "worker" one process serves the
// cases, and module state carries over; under "case" every case gets a
// fresh process.
func TestPortableIsolation(t *testing.T) {
	src := "import os\nseen = []\ndef grade(sample, item):\n    seen.append(1)\n    return {'scores': {'score': len(seen)}, 'judge': os.getpid()}\n"
	for _, tt := range []struct {
		isolation string
		scores    []float64
		pids      int
	}{
		{IsolationWorker, []float64{1, 2, 3}, 1},
		{IsolationCase, []float64{1, 1, 1}, 3},
	} {
		t.Run(tt.isolation, func(t *testing.T) {
			p := newPortablePool(t, src, func(c *Config) { c.Isolation = tt.isolation })
			got, err := p.Grade(context.Background(), []grading.Task{portableTask("a", nil), portableTask("b", nil), portableTask("c", nil)})
			if err != nil {
				t.Fatal(err)
			}
			var scores []float64
			pids := map[string]bool{}
			for _, o := range got {
				if o.Class != grading.ClassOK {
					t.Fatalf("outcome %+v, want ok", o)
				}
				scores = append(scores, *o.Score)
				pids[string(o.Judge)] = true
			}
			if !slices.Equal(scores, tt.scores) || len(pids) != tt.pids {
				t.Errorf("scores %v in %d processes, want %v in %d", scores, len(pids), tt.scores, tt.pids)
			}
		})
	}
}

// TestPortableStream: many cases over several processes, one of them
// crashing its process, come back exactly once each with their own score.
func TestPortableStream(t *testing.T) {
	src := "import os\ndef grade(sample, item):\n    if sample['v'] == 13:\n        os._exit(1)\n    print('case', sample['v'])\n    return float(sample['v'])\n"
	p := newPortablePool(t, src, func(c *Config) { c.Workers = 3 })
	const n = 60
	i := 0
	next := func() (grading.Task, bool, error) {
		if i == n {
			return grading.Task{}, false, nil
		}
		i++
		return portableTask(fmt.Sprint(i-1), map[string]any{"v": i - 1}), true, nil
	}
	var mu sync.Mutex
	got := map[int]grading.Outcome{}
	emit := func(seq int, o grading.Outcome) error {
		mu.Lock()
		defer mu.Unlock()
		if _, dup := got[seq]; dup {
			t.Errorf("seq %d emitted twice", seq)
		}
		got[seq] = o
		return nil
	}
	if err := p.Stream(context.Background(), next, emit); err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d outcomes, want %d", len(got), n)
	}
	for seq, o := range got {
		switch {
		case seq == 13 && o.Class != grading.ClassWorkerCrash:
			t.Errorf("seq 13: %s, want worker_crash", o.Class)
		case seq != 13 && (o.Class != grading.ClassOK || *o.Score != float64(seq) || o.Output != fmt.Sprintf("case %d\n", seq)):
			t.Errorf("seq %d: %s %v output %q, want ok %d with its own output", seq, o.Class, o.Error, o.Output, seq)
		}
	}
}

// TestPortableBatch: under the batch contract a batch that kills its
// process is that batch's failure only.
func TestPortableBatch(t *testing.T) {
	src := `import os
def grade_batch(samples):
    if any(s["sample"].get("exit") for s in samples):
        os._exit(5)
    return {"samples": [{"case_id": s["case_id"], "scores": {"score": s["sample"]["v"]}} for s in samples]}
`
	p := newPortablePool(t, src, func(c *Config) { c.Contract = ContractBatch; c.BatchSize = 3 })
	var tasks []grading.Task
	for i := range 12 {
		s := map[string]any{"v": float64(i)}
		if i == 7 {
			s["exit"] = true
		}
		tasks = append(tasks, portableTask(fmt.Sprint(i), s))
	}
	got, err := p.Grade(context.Background(), tasks)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range got {
		inBad := i >= 6 && i < 9 // the batch of 7
		switch {
		case inBad && (o.Class != grading.ClassWorkerCrash || !strings.Contains(o.Error.Message, "status 5")):
			t.Errorf("task %d: %s %+v, want worker_crash (status 5) with its batch", i, o.Class, o.Error)
		case !inBad && (o.Class != grading.ClassOK || *o.Score != float64(i)):
			t.Errorf("task %d: %s %+v, want ok %d", i, o.Class, o.Error, i)
		}
	}
}

// TestPortableUndecodableRequest: a request the worker cannot read is an
// input error naming the case, never a grader's outcome.
func TestPortableUndecodableRequest(t *testing.T) {
	p := newPortablePool(t, "def grade(sample, item):\n    return 1.0\n", nil)
	_, err := p.Grade(context.Background(), []grading.Task{
		portableTask("fine", map[string]any{"v": 1}),
		{ID: "broken-row", Sample: json.RawMessage("{\"text\": \"\xff\xfe\"}"), Item: json.RawMessage(`{}`)},
	})
	if err == nil || !strings.Contains(err.Error(), `"broken-row"`) || !errors.Is(err, manifest.ErrInput) {
		t.Errorf("Grade error = %v, want an input error naming broken-row", err)
	}
}

// TestPortableEnvironment: a grader sees only the environment the pool
// builds (none of gradegate's), stdin reads nothing, and its working
// directory is a scratch directory removed at Close.
func TestPortableEnvironment(t *testing.T) {
	t.Setenv("GRADEGATE_TEST_SECRET", "leak")
	src := `import os, sys
def grade(sample, item):
    return {"scores": {"score": 1}, "judge": {"env": sorted(os.environ), "cwd": os.getcwd(), "stdin": sys.stdin.read()}}
`
	sb, err := sandbox.New(sandbox.WithUnsandboxed(true))
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPortable(context.Background(), Config{Source: []byte(src), Workers: 1, Python: portablePython(t), Sandbox: sb})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Grade(context.Background(), []grading.Task{portableTask("a", nil)})
	if err != nil || got[0].Class != grading.ClassOK {
		t.Fatalf("Grade = %+v, %v", got, err)
	}
	var judge struct {
		Env   []string
		Cwd   string
		Stdin string
	}
	if err := json.Unmarshal(got[0].Judge, &judge); err != nil {
		t.Fatal(err)
	}
	for _, k := range judge.Env {
		if strings.HasPrefix(k, "GRADEGATE_") {
			t.Errorf("the grader saw %s of gradegate's environment", k)
		}
	}
	if !slices.Contains(judge.Env, "HOME") || judge.Stdin != "" {
		t.Errorf("env %v, stdin %q: want HOME set and an empty stdin", judge.Env, judge.Stdin)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(judge.Cwd); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("scratch directory %s after Close: %v, want it removed", judge.Cwd, err)
	}
	if s := p.Sandbox(); !s.Unsandboxed {
		t.Errorf("Sandbox() = %+v, want Unsandboxed", s)
	}
}

// TestPortableCancel: cancelling a Grade call stops it with the context's
// error and kills the process grading.
func TestPortableCancel(t *testing.T) {
	src := "import os\ndef grade(sample, item):\n    os.write(1, b'started\\n')\n    while True: pass\n"
	p := newPortablePool(t, src, func(c *Config) { c.TimeoutSeconds = 600 })
	ctx, cancel := context.WithCancel(context.Background())
	// Cancel as soon as the case runs: a grader that never returns
	// must not hold Grade up.
	pr := p.free[0].proc
	go func() {
		<-pr.out.notify // the case wrote "started"
		cancel()
	}()
	_, err := p.Grade(ctx, []grading.Task{portableTask("a", nil)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Grade error = %v, want context.Canceled", err)
	}
	select {
	case <-pr.exited:
	default:
		t.Error("the grading process is still running after Grade returned")
	}
}

// TestPortableRefusesSandboxStatus: the portable pool refuses a Sandbox
// that puts layers in force (it would run graders outside them), and
// checks its config like the Linux pool.
func TestPortableConfig(t *testing.T) {
	_, err := NewPortable(context.Background(), Config{Source: []byte("x"), Isolation: "thread"})
	for _, want := range []string{"no sandbox", "no python interpreter", `isolation "thread"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("NewPortable error = %v, want it to say %q", err, want)
		}
	}
}

// TestPortableWorkerSource: worker.py still ends with its main() call, which
// the portable pool moves behind its own setup.
func TestPortableWorkerSource(t *testing.T) {
	src, err := portableWorkerSource(workerPy)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(src, portablePrologue) || !strings.HasSuffix(src, portableEpilogue+"\nmain()\n") {
		t.Errorf("the worker source does not run the prologue first and the epilogue before main()")
	}
	if _, err := portableWorkerSource("def main(): pass\n"); err == nil {
		t.Error("a worker source without its main() call was accepted")
	}
	if strings.ContainsAny(portableBootstrap, `"\`) {
		t.Error("the bootstrap holds a double quote or a backslash, which Windows' command line escapes")
	}
}

func TestPortableEnvironmentList(t *testing.T) {
	tests := []struct {
		goos string
		want []string
		not  []string
	}{
		{"darwin", []string{"PATH=/opt/py/bin:/usr/local/bin:/usr/bin:/bin", "HOME=/s", "TMPDIR=/s", "PYTHONHASHSEED=0"}, []string{"TEMP=/s"}},
		{"windows", []string{"PATH=/opt/py/bin", "TEMP=/s", "TMP=/s", "USERPROFILE=/s"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.goos, func(t *testing.T) {
			env := portableEnvironment(tt.goos, "/opt/py/bin/python3", "/s", "")
			for _, w := range tt.want {
				if !slices.Contains(env, w) {
					t.Errorf("environment %q lacks %q", env, w)
				}
			}
			for _, n := range tt.not {
				if slices.Contains(env, n) {
					t.Errorf("environment %q has %q", env, n)
				}
			}
		})
	}
}

// TestPortableBootstrapExact: the bootstrap reads exactly the worker source
// from stdin and leaves what follows for the worker.
func TestPortableBootstrapExact(t *testing.T) {
	py := portablePython(t)
	code := "import os, sys\nos.write(1, os.read(0, 100))\n"
	in := fmt.Sprintf("%016d%srest of the stream", len(code), code)
	cmd := exec.Command(py.Executable, "-I", "-c", portableBootstrap)
	cmd.Stdin = strings.NewReader(in)
	out, err := cmd.Output()
	if err != nil || string(out) != "rest of the stream" {
		t.Errorf("the program after the source read %q (%v), want the rest of the stream", out, err)
	}
}
