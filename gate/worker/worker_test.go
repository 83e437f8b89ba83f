//go:build linux

package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/sandbox"
	"github.com/gradegate/gradegate/gate/sandbox/sandboxtest"
)

// TestMain lets the test binary stand in for gradegate, so TestSandboxed
// runs graders under the real layers: re-executed as the sandbox launcher,
// package confine's init runs it as one, before TestMain. The tests reap the orphans of killed workers promptly, as a CI
// runner's init does (sandboxtest.ReapOrphans says why).
func TestMain(m *testing.M) {
	// As main does: keep this process's environment from graders of the
	// same uid.
	if err := sandbox.Init(os.Args); err != nil {
		panic(err)
	}
	os.Exit(sandboxtest.ReapingM{M: m}.Run())
}

// python resolves the interpreter the tests use (python3 on PATH).
// python resolves python3 as gradegate's grading commands do: with the
// worker compiled ahead (TestSourceWorker covers the source).
func python(t testing.TB) Python {
	t.Helper()
	py, err := ResolvePythonWorker(context.Background(), "python3")
	if err != nil {
		t.Fatalf("ResolvePythonWorker: %v", err)
	}
	if len(py.Worker) == 0 {
		t.Fatal("ResolvePythonWorker compiled no worker")
	}
	return py
}

// TestSourceWorker: a pool whose interpreter comes without the compiled
// worker (ResolvePython) runs worker.py's source, and grades alike.
func TestSourceWorker(t *testing.T) {
	py, err := ResolvePython(context.Background(), "python3")
	if err != nil {
		t.Fatal(err)
	}
	if py.Worker != nil {
		t.Fatal("ResolvePython compiled the worker")
	}
	const src = "def grade(sample, item):\n    return 1.0 if sample['v'] == item['expected'] else 0.0\n"
	for _, py := range []Python{py, python(t)} {
		p := newPool(t, py, src, nil)
		if got, boot := p.argv[len(p.argv)-1] == workerBoot, len(py.Worker) > 0; got != boot {
			t.Fatalf("compiled worker %v, bootstrap in argv %v", boot, got)
		}
		got, err := p.Grade(context.Background(), []grading.Task{task("a", map[string]any{"v": 1}), task("b", map[string]any{"v": 2})})
		if err != nil {
			t.Fatal(err)
		}
		if got[0].Score == nil || *got[0].Score != 1 || got[1].Score == nil || *got[1].Score != 0 {
			t.Errorf("compiled=%v: outcomes %+v", len(py.Worker) > 0, got)
		}
	}
}

func newSandbox(t testing.TB) *sandbox.Sandbox {
	t.Helper()
	sb, err := sandbox.New(sandbox.WithUnsandboxed(true))
	if err != nil {
		t.Fatalf("sandbox.New: %v", err)
	}
	return sb
}

// sandboxed returns a Sandbox with every layer this machine allows and an
// interpreter its slot uids can run: python3 on PATH may live under a
// private home (pyenv), the system one not.
func sandboxed(t testing.TB) (*sandbox.Sandbox, Python) {
	t.Helper()
	sb, err := sandbox.New(sandbox.WithLauncher(os.Args[0]))
	if err != nil {
		t.Fatalf("sandbox.New: %v", err)
	}
	var errs []error
	for _, name := range []string{"python3", "/usr/bin/python3"} {
		py, err := ResolvePythonWorker(context.Background(), name)
		if err == nil {
			err = sb.CheckInterpreter(py.Executable)
		}
		if err == nil {
			t.Logf("sandbox: %s; python %s", sb, py.Executable)
			return sb, py
		}
		errs = append(errs, err)
	}
	t.Fatalf("no interpreter the sandbox can run: %v", errors.Join(errs...))
	return nil, Python{}
}

// newPool starts a pool for source and closes it when the test ends.
func newPool(t testing.TB, py Python, source string, mod func(*Config)) *Pool {
	t.Helper()
	cfg := Config{
		Source:         []byte(source),
		SourceName:     "grader.py",
		Metric:         "score",
		TimeoutSeconds: 1,
		MemoryMB:       256,
		Workers:        1,
		Python:         py,
		Sandbox:        newSandbox(t),
	}
	if mod != nil {
		mod(&cfg)
	}
	p, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

func task(id string, sample any) grading.Task {
	s, _ := json.Marshal(sample)
	return grading.Task{ID: id, Sample: s, Item: json.RawMessage(`{"expected": 1}`)}
}

// grader wraps body as the tail of grade(sample, item). A sample with
// "followup" returns 0.5 before body runs, so one grader also proves that the
// case after a failure is still graded.
func grader(body string) string {
	return "import os, sys, signal, ctypes\n\n" +
		"def helper(item):\n" +
		"    return item['missing']  # LINE helper\n\n" +
		"def grade(sample, item):\n" +
		"    if sample.get('followup'):\n" +
		"        return 0.5\n" +
		body + "\n"
}

// lineOf is the 1-based line of the first line of src containing marker.
func lineOf(src, marker string) int {
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, marker) {
			return i + 1
		}
	}
	return 0
}

func TestGradeClasses(t *testing.T) {
	py := python(t)
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
			body:  `    return {"scores": {"score": 0.0, "aux": 3}, "judge": {"why": "total differs", "ratio": float("nan")}}`,
			class: grading.ClassOK, score: 0,
			check: func(t *testing.T, o grading.Outcome) {
				if o.Scores["aux"] != 3 || len(o.Scores) != 2 {
					t.Errorf("Scores = %v, want score and aux", o.Scores)
				}
				var judge map[string]any
				if err := json.Unmarshal(o.Judge, &judge); err != nil || judge["why"] != "total differs" || judge["ratio"] != "nan" {
					t.Errorf("Judge = %s (%v), want why and ratio \"nan\"", o.Judge, err)
				}
			},
		},
		{name: "dict without metric", body: `    return {"scores": {"accuracy": 1.0}}`, class: grading.ClassInvalidReturn, message: "'score'"},
		{name: "dict without scores", body: `    return {"score": 1.0}`, class: grading.ClassInvalidReturn, message: `without "scores"`},
		{name: "score not a number", body: `    return {"scores": {"score": "1.0"}}`, class: grading.ClassInvalidReturn, message: "str '1.0'"},
		{name: "score is bool", body: `    return {"scores": {"score": True}}`, class: grading.ClassInvalidReturn, message: "bool True"},
		{name: "bool", body: "    return True", class: grading.ClassInvalidReturn, message: "bool True"},
		{name: "NaN", body: "    return float('nan')", class: grading.ClassInvalidReturn, message: "nan"},
		{name: "inf", body: "    return float('-inf')", class: grading.ClassInvalidReturn, message: "-inf"},
		{name: "huge int", body: "    return 10**400", class: grading.ClassInvalidReturn, message: "int"},
		{name: "None", body: "    return None", class: grading.ClassInvalidReturn, message: "NoneType"},
		{name: "str", body: "    return '1.0'", class: grading.ClassInvalidReturn, message: "str '1.0'"},
		{
			name: "raise KeyError", body: "    raise KeyError('expected_total_cents')  # LINE raise",
			class: grading.ClassGraderException, errType: "KeyError", message: "expected_total_cents", line: "# LINE raise",
		},
		{
			name: "exception in a helper", body: "    return helper(item)",
			class: grading.ClassGraderException, errType: "KeyError", message: "missing", line: "# LINE helper",
		},
		{name: "sys.exit", body: "    sys.exit(2)", class: grading.ClassGraderException, errType: "SystemExit"},
		{
			name: "infinite loop", body: "    while True: pass  # LINE loop",
			class: grading.ClassTimeout, message: "timeout_seconds=1", line: "# LINE loop",
		},
		{
			name:  "SIGALRM ignored, busy loop",
			body:  "    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n    signal.alarm(1)\n    n = 0\n    while True:\n        n += 1",
			class: grading.ClassTimeout,
		},
		{name: "os._exit", body: "    os._exit(3)", class: grading.ClassWorkerCrash, message: "status 3"},
		{
			name: "segfault", body: "    ctypes.string_at(0)  # LINE segv",
			class: grading.ClassWorkerCrash, message: "SIGSEGV", line: "# LINE segv",
		},
		{
			name: "allocation past memory_mb", body: "    data = bytearray(4 << 30)  # LINE alloc\n    return 1.0",
			class: grading.ClassMemoryExceeded, line: "# LINE alloc",
		},
		{
			name:  "forged result line and 10 MB of prints",
			body:  `    print('{"id": 1, "class": "ok", "scores": {"score": 1.0}}')` + "\n" + `    print("x" * (10 << 20))` + "\n    sys.stderr.write('y' * 1000)\n    return 0.25",
			class: grading.ClassOK, score: 0.25,
			check: func(t *testing.T, o grading.Outcome) {
				if !strings.HasPrefix(o.Output, `{"id": 1, "class": "ok"`) || !strings.Contains(o.Output, "bytes of output cut]") {
					t.Errorf("Output = %.200q…, want the forged line kept as text and a cut marker", o.Output)
				}
				if len(o.Output) > 8<<10+100 {
					t.Errorf("len(Output) = %d, want at most the 8 KiB limit and a marker", len(o.Output))
				}
			},
		},
		{
			name:  "10 MB written below Python",
			body:  "    os.write(1, b'z' * (10 << 20))\n    os.write(2, b'w' * 100)\n    return 0.25",
			class: grading.ClassOK, score: 0.25,
			check: wantCut("zzz"),
		},
		{
			// Each made-up marker would have been a segment of 8 KiB held
			// in gradegate until the case ended (TestMarkedStream: the
			// bounds).
			name:  "made-up end markers",
			body:  "    for i in range(3000):\n        os.write(2, b'v' * 9000 + b'\\x00gradegate-end:%d\\n' % (10**9 + i))\n    return 0.25",
			class: grading.ClassOK, score: 0.25,
			check: wantCut("vvv"),
		},
	}
	sb, sbPython := sandboxed(t)
	for _, env := range []struct {
		name string
		py   Python
		sb   *sandbox.Sandbox // nil: unsandboxed
	}{{"unsandboxed", py, nil}, {"sandboxed", sbPython, sb}} {
		for _, isolation := range []string{IsolationWorker, IsolationCase} {
			t.Run(env.name+"/"+isolation, func(t *testing.T) {
				for _, tt := range tests {
					t.Run(tt.name, func(t *testing.T) {
						t.Parallel()
						src := grader(tt.body)
						p := newPool(t, env.py, src, func(c *Config) {
							c.Isolation = isolation
							if env.sb != nil {
								c.Sandbox = env.sb
							}
						})
						got, err := p.Grade(context.Background(), []grading.Task{
							task("case", map[string]any{}),
							task("next", map[string]any{"followup": true}),
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
							if tt.line != "" && o.Error.Line != lineOf(src, tt.line) {
								t.Errorf("Error.Line = %d, want %d (output %.500q)", o.Error.Line, lineOf(src, tt.line), o.Output)
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
}

func TestLoadErrors(t *testing.T) {
	py := python(t)
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
		{name: "import not available", source: "import not_a_module_gradegate_knows\n", class: grading.ClassGraderException, message: "ModuleNotFoundError", line: 1},
		{name: "no grade function", source: "def score(sample, item):\n    return 1\n", class: grading.ClassGraderException, message: "defines no grade(sample, item)"},
		{name: "grade not callable", source: "grade = 1\n", class: grading.ClassGraderException, message: "defines no grade(sample, item)"},
		{name: "wrong arity", source: "def grade(sample):\n    return 1\n", class: grading.ClassGraderException, message: "grade(sample) must take exactly two", line: 1},
		{name: "exit at import", source: "import os\nos._exit(7)\n", class: grading.ClassWorkerCrash, message: "status 7"},
		{name: "loop at import", source: "import os\nwhile True: pass\n", class: grading.ClassTimeout, message: "load_timeout_seconds=1", line: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := New(context.Background(), Config{
				Source: []byte(tt.source), SourceName: "grader.py", TimeoutSeconds: 1, LoadTimeoutSeconds: 1,
				Workers: 1, Python: py, Sandbox: newSandbox(t),
			})
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("New error = %v, want a *LoadError", err)
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

func TestLoadedFromExactBytes(t *testing.T) {
	// Latin-1 bytes with a coding cookie: the worker must compile the bytes
	// as sent, not a re-encoded string.
	src := []byte("# -*- coding: latin-1 -*-\nWORD = '\xe9t\xe9'\ndef grade(sample, item):\n    return {'scores': {'score': 1}, 'judge': {'word': WORD}}\n")
	p := newPool(t, python(t), string(src), nil)
	got, err := p.Grade(context.Background(), []grading.Task{task("a", map[string]any{})})
	if err != nil {
		t.Fatal(err)
	}
	var judge struct{ Word string }
	if err := json.Unmarshal(got[0].Judge, &judge); err != nil || judge.Word != "été" {
		t.Errorf("Judge = %s, want the word decoded as latin-1", got[0].Judge)
	}
}

func TestEnvironmentAllowlist(t *testing.T) {
	for _, k := range []string{"GITHUB_TOKEN", "OPENAI_API_KEY", "ACTIONS_RUNTIME_TOKEN", "INPUT_GITHUB-TOKEN", "PYTHONPATH", "PYTHONSTARTUP"} {
		t.Setenv(k, "secret-"+k)
	}
	src := "import os\ndef grade(sample, item):\n    return {'scores': {'score': 1}, 'judge': {'env': dict(os.environ), 'cwd': os.getcwd()}}\n"
	for _, isolation := range []string{IsolationWorker, IsolationCase} {
		t.Run(isolation, func(t *testing.T) {
			p := newPool(t, python(t), src, func(c *Config) { c.Isolation = isolation })
			got, err := p.Grade(context.Background(), []grading.Task{task("a", map[string]any{})})
			if err != nil {
				t.Fatal(err)
			}
			var judge struct {
				Env map[string]string
				Cwd string
			}
			if err := json.Unmarshal(got[0].Judge, &judge); err != nil {
				t.Fatalf("Judge %s: %v", got[0].Judge, err)
			}
			allowed := []string{"PATH", "LANG", "LC_ALL", "HOME", "TMPDIR", "PYTHONIOENCODING", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE"}
			for k, v := range judge.Env {
				if !slices.Contains(allowed, k) || strings.Contains(v, "secret-") {
					t.Errorf("the grader sees %s=%q; only %v may reach it", k, v, allowed)
				}
			}
			if judge.Env["HOME"] != judge.Cwd || judge.Env["TMPDIR"] != judge.Cwd || !strings.Contains(judge.Cwd, "gradegate-scratch") {
				t.Errorf("HOME=%q TMPDIR=%q cwd=%q; want all the scratch directory", judge.Env["HOME"], judge.Env["TMPDIR"], judge.Cwd)
			}
		})
	}
}

// TestIsolation checks that worker mode reuses and recycles a process and
// case mode gives every case fresh grader state.
func TestIsolation(t *testing.T) {
	src := "import os\nCALLS = 0\ndef grade(sample, item):\n    global CALLS\n    CALLS += 1\n    return {'scores': {'score': CALLS}, 'judge': {'pid': os.getpid(), 'ppid': os.getppid()}}\n"
	tasks := []grading.Task{task("1", nil), task("2", nil), task("3", nil), task("4", nil), task("5", nil)}
	type seen struct {
		Pid, Ppid int
	}
	run := func(t *testing.T, isolation string) ([]float64, []seen) {
		p := newPool(t, python(t), src, func(c *Config) { c.Isolation = isolation; c.RecycleAfter = 2 })
		got, err := p.Grade(context.Background(), tasks)
		if err != nil {
			t.Fatal(err)
		}
		var scores []float64
		var pids []seen
		for _, o := range got {
			var s seen
			_ = json.Unmarshal(o.Judge, &s)
			scores = append(scores, *o.Score)
			pids = append(pids, s)
		}
		return scores, pids
	}
	t.Run("worker", func(t *testing.T) {
		scores, pids := run(t, IsolationWorker)
		if want := []float64{1, 2, 1, 2, 1}; !slices.Equal(scores, want) {
			t.Errorf("calls seen = %v, want %v (state kept, recycled after 2)", scores, want)
		}
		if pids[0].Pid != pids[1].Pid || pids[1].Pid == pids[2].Pid || pids[2].Pid == pids[4].Pid {
			t.Errorf("pids = %v, want a new process every 2 cases", pids)
		}
	})
	t.Run("case", func(t *testing.T) {
		scores, pids := run(t, IsolationCase)
		if want := []float64{1, 1, 1, 1, 1}; !slices.Equal(scores, want) {
			t.Errorf("calls seen = %v, want %v (fresh state per case)", scores, want)
		}
		if pids[0].Pid == pids[1].Pid || pids[0].Ppid != pids[1].Ppid {
			t.Errorf("pids = %v, want a fresh child of one parent per case", pids)
		}
	})
}

func TestConcurrentOrder(t *testing.T) {
	src := "import time\ndef grade(sample, item):\n    time.sleep(sample['sleep'])\n    return sample['i']\n"
	p := newPool(t, python(t), src, func(c *Config) { c.Workers = 3 })
	var tasks []grading.Task
	for i := range 12 {
		tasks = append(tasks, task(fmt.Sprint(i), map[string]any{"i": i, "sleep": float64(12-i) / 400}))
	}
	got, err := p.Grade(context.Background(), tasks)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range got {
		if o.Class != grading.ClassOK || *o.Score != float64(i) {
			t.Errorf("outcome %d = %s %v, want ok %d", i, o.Class, o.Score, i)
		}
	}
}

func TestCancel(t *testing.T) {
	src := "import time\ndef grade(sample, item):\n    time.sleep(60)\n    return 1\n"
	for _, isolation := range []string{IsolationWorker, IsolationCase} {
		t.Run(isolation, func(t *testing.T) {
			p := newPool(t, python(t), src, func(c *Config) { c.TimeoutSeconds = 60; c.Workers = 2; c.Isolation = isolation })
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := p.Grade(ctx, []grading.Task{task("a", nil), task("b", nil), task("c", nil)})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Grade error = %v, want context.DeadlineExceeded", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Grade returned after %v, want soon after the cancel", d)
			}
			p.mu.Lock()
			live := len(p.live)
			p.mu.Unlock()
			if live != 0 {
				t.Errorf("%d processes still live after cancel", live)
			}
			// The pool is still usable after one cancelled Grade call.
			if _, err := p.Grade(context.Background(), nil); err != nil {
				t.Errorf("Grade after cancel: %v", err)
			}
		})
	}
}

func TestPoolContextKillsEverything(t *testing.T) {
	src := "import time\ndef grade(sample, item):\n    time.sleep(60)\n    return 1\n"
	ctx, cancel := context.WithCancel(context.Background())
	p, err := New(ctx, Config{Source: []byte(src), TimeoutSeconds: 60, Workers: 2, Python: python(t), Sandbox: newSandbox(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	time.AfterFunc(200*time.Millisecond, cancel)
	if _, err := p.Grade(context.Background(), []grading.Task{task("a", nil), task("b", nil)}); err == nil {
		t.Error("Grade succeeded after the pool's context ended")
	}
	if _, err := p.Grade(context.Background(), []grading.Task{task("a", nil)}); err == nil {
		t.Error("Grade on a pool whose context ended succeeded")
	}
}

func TestBatch(t *testing.T) {
	src := `def grade_batch(samples):
    if samples[0]["sample"].get("boom"):
        raise ValueError("bad batch")  # LINE boom
    out = []
    for s in samples:
        if s["case_id"] == "skip":
            continue
        out.append({"case_id": s["case_id"], "scores": {"score": s["sample"]["v"]}, "judge": {"seen": s["item"]["expected"]}})
    return {"metrics": {"n": len(out)}, "samples": out}
`
	for _, isolation := range []string{IsolationWorker, IsolationCase} {
		t.Run(isolation, func(t *testing.T) {
			p := newPool(t, python(t), src, func(c *Config) { c.Contract = ContractBatch; c.Isolation = isolation })
			got, err := p.Grade(context.Background(), []grading.Task{
				task("a", map[string]any{"v": 1}), task("skip", map[string]any{"v": 1}),
				task("b", map[string]any{"v": true}), task("c", map[string]any{"v": 0.5}),
			})
			if err != nil {
				t.Fatal(err)
			}
			classes := []grading.Class{got[0].Class, got[1].Class, got[2].Class, got[3].Class}
			if want := []grading.Class{grading.ClassOK, grading.ClassInvalidReturn, grading.ClassInvalidReturn, grading.ClassOK}; !slices.Equal(classes, want) {
				t.Fatalf("classes = %v, want %v", classes, want)
			}
			if *got[3].Score != 0.5 || string(got[0].Judge) != `{"seen":1}` {
				t.Errorf("c score = %v, a judge = %s", *got[3].Score, got[0].Judge)
			}
			if !strings.Contains(got[1].Error.Message, "no entry for case_id 'skip'") {
				t.Errorf("skip: %+v", got[1].Error)
			}
			got, err = p.Grade(context.Background(), []grading.Task{task("x", map[string]any{"boom": true}), task("y", nil)})
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range got {
				if o.Class != grading.ClassGraderException || o.Error.Line != lineOf(src, "# LINE boom") {
					t.Errorf("outcome = %s %+v, want grader_exception at the raise", o.Class, o.Error)
				}
			}
		})
	}
}

// TestBatchAmbiguousReturns: two entries for one case, or entries for cases
// that were never in the batch, are never resolved by guessing.
func TestBatchAmbiguousReturns(t *testing.T) {
	src := `def grade_batch(samples):
    out = [{"case_id": s["case_id"], "scores": {"score": 1.0}} for s in samples]
    if samples[0]["sample"].get("dupe"):
        out.append({"case_id": samples[0]["case_id"], "scores": {"score": 0.0}})
    if samples[0]["sample"].get("stranger"):
        out.append({"case_id": "phantom", "scores": {"score": 1.0}})
    return {"samples": out}
`
	p := newPool(t, python(t), src, func(c *Config) { c.Contract = ContractBatch })
	tests := []struct {
		name   string
		sample map[string]any
		want   []grading.Class
		msg    string
	}{
		{"duplicate entry", map[string]any{"dupe": true}, []grading.Class{grading.ClassInvalidReturn, grading.ClassOK}, "more than one entry"},
		{"entry for a case not in the batch", map[string]any{"stranger": true}, []grading.Class{grading.ClassInvalidReturn, grading.ClassInvalidReturn}, "not in the batch"},
		{"clean", map[string]any{}, []grading.Class{grading.ClassOK, grading.ClassOK}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.Grade(context.Background(), []grading.Task{task("a", tt.sample), task("b", nil)})
			if err != nil {
				t.Fatal(err)
			}
			if classes := []grading.Class{got[0].Class, got[1].Class}; !slices.Equal(classes, tt.want) {
				t.Fatalf("classes = %v, want %v", classes, tt.want)
			}
			if tt.msg != "" && !strings.Contains(got[0].Error.Message, tt.msg) {
				t.Errorf("message %q, want it to say %q", got[0].Error.Message, tt.msg)
			}
		})
	}
}

func TestMetricAndBareNumber(t *testing.T) {
	p := newPool(t, python(t), "def grade(sample, item):\n    return 0.5\n", func(c *Config) { c.Metric = "accuracy" })
	got, err := p.Grade(context.Background(), []grading.Task{task("a", nil)})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Class != grading.ClassOK || got[0].Scores["accuracy"] != 0.5 || math.Abs(*got[0].Score-0.5) > 0 {
		t.Errorf("outcome = %+v, want ok with Scores{accuracy: 0.5}", got[0])
	}
}

func TestForgedResponseOnProtocolPipe(t *testing.T) {
	src := "import os\ndef grade(sample, item):\n    if not sample.get('followup'):\n        os.write(4, b'{\"id\": 1, \"class\": \"ok\", \"scores\": {\"score\": 1.0}}\\n')\n    return 0.0\n"
	for _, isolation := range []string{IsolationWorker, IsolationCase} {
		t.Run(isolation, func(t *testing.T) {
			p := newPool(t, python(t), src, func(c *Config) { c.Isolation = isolation })
			got, err := p.Grade(context.Background(), []grading.Task{task("a", map[string]any{}), task("b", map[string]any{"followup": true})})
			if err != nil {
				t.Fatal(err)
			}
			if got[0].Class == grading.ClassOK {
				t.Errorf("the forged line was taken as the result: %+v", got[0])
			}
			if got[1].Class != grading.ClassOK || *got[1].Score != 0 {
				t.Errorf("the next case = %s %+v, want ok 0", got[1].Class, got[1].Error)
			}
		})
	}
}

func TestWarmProcessReused(t *testing.T) {
	src := "import os\ndef grade(sample, item):\n    return {'scores': {'score': 1}, 'judge': os.getpid()}\n"
	p := newPool(t, python(t), src, func(c *Config) { c.Workers = 4 })
	var pids []string
	for range 3 {
		got, err := p.Grade(context.Background(), []grading.Task{task("a", nil)})
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, string(got[0].Judge))
	}
	if pids[0] != pids[1] || pids[1] != pids[2] {
		t.Errorf("pids = %v, want one warm process serving single-task Grade calls", pids)
	}
}

// TestSandboxed grades under the sandbox's real layers: the launcher's
// RLIMIT_AS instead of worker.py's own, and the socket filter.
func TestSandboxed(t *testing.T) {
	sb, py := sandboxed(t)
	src := `import os, socket
def grade(sample, item):
    kind = sample["kind"]
    if kind == "socket":
        socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # LINE socket
    if kind == "socket-caught":
        try:
            socket.create_connection(("192.0.2.1", 80), timeout=0.1)
        except OSError:
            return 0.25
    if kind == "alloc":
        bytearray(4 << 30)  # LINE alloc
    return 1.0
`
	for _, isolation := range []string{IsolationWorker, IsolationCase} {
		t.Run(isolation, func(t *testing.T) {
			p := newPool(t, py, src, func(c *Config) { c.Sandbox = sb; c.Isolation = isolation })
			got, err := p.Grade(context.Background(), []grading.Task{
				task("ok", map[string]any{"kind": "ok"}),
				task("socket", map[string]any{"kind": "socket"}),
				task("socket-caught", map[string]any{"kind": "socket-caught"}),
				task("alloc", map[string]any{"kind": "alloc"}),
				task("after", map[string]any{"kind": "ok"}),
			})
			if err != nil {
				t.Fatal(err)
			}
			want := []grading.Class{grading.ClassOK, grading.ClassSandboxViolation, grading.ClassOK, grading.ClassMemoryExceeded, grading.ClassOK}
			for i, o := range got {
				if o.Class != want[i] {
					t.Errorf("task %d: Class = %s, want %s (error %+v, output %.300q)", i, o.Class, want[i], o.Error, o.Output)
				}
			}
			if e := got[1].Error; e == nil || e.Line != lineOf(src, "# LINE socket") || !strings.Contains(e.Message, "network socket") {
				t.Errorf("socket: Error = %+v, want the socket line and a sandbox message", e)
			}
			if e := got[3].Error; e == nil || e.Line != lineOf(src, "# LINE alloc") {
				t.Errorf("alloc: Error = %+v, want the allocating line", e)
			}
		})
	}
}

// TestWarmReplacement: a process retired for RecycleAfter is replaced by one
// that loaded beside it under the slot's other sandbox slot (its own scratch
// and, as root, its own uid), and a process retired after a failure by one
// that never served a case.
func TestWarmReplacement(t *testing.T) {
	src := `import os
CALLS = 0
def grade(sample, item):
    global CALLS
    CALLS += 1
    if sample and sample.get("crash"):
        os._exit(3)
    return {"scores": {"score": CALLS}, "judge": {"pid": os.getpid(), "uid": os.getuid(), "cwd": os.path.basename(os.getcwd())}}
`
	type seen struct {
		Pid, UID int
		Cwd      string
	}
	slotOf := func(cwd string) string {
		// gradegate-scratch-<slot>-<random>
		parts := strings.Split(cwd, "-")
		if len(parts) < 4 {
			return "?"
		}
		return parts[2]
	}
	sb, py := sandboxed(t)
	unsandboxed := newSandbox(t)
	oneSlot, err := sandbox.New(sandbox.WithUnsandboxed(true), sandbox.WithSlots(1))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		sb        *sandbox.Sandbox
		firstSlot int
		slots     []string // sandbox slot of each process, in order
	}{
		{"sandboxed", sb, 0, []string{"0", "1", "0", "1"}},
		{"unsandboxed", unsandboxed, 0, []string{"0", "1", "0", "1"}},
		// Too few sandbox slots for a second one: replaced on demand.
		{"one sandbox slot", oneSlot, 0, []string{"0", "0", "0", "0"}},
		// A pool beside another on one sandbox keeps to its own slots.
		{"from slot 5", sb, 5, []string{"5", "6", "5", "6"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPool(t, py, src, func(c *Config) {
				c.Sandbox = tc.sb
				c.RecycleAfter = 2
				c.TimeoutSeconds = 10
				c.FirstSlot = tc.firstSlot
			})
			tasks := []grading.Task{
				task("1", nil), task("2", nil), // first process, retired at 2
				task("3", nil), task("4", map[string]any{"crash": true}), // second, crashes
				task("5", nil), task("6", nil), // third, fresh after the crash
				task("7", nil), // fourth
			}
			got, err := p.Grade(context.Background(), tasks)
			if err != nil {
				t.Fatal(err)
			}
			var scores []float64
			var procs []seen
			for i, o := range got {
				if i == 3 {
					if o.Class != grading.ClassWorkerCrash {
						t.Errorf("task 4: Class = %s, want worker_crash", o.Class)
					}
					continue
				}
				if o.Class != grading.ClassOK {
					t.Fatalf("task %d: Class = %s (%+v)", i+1, o.Class, o.Error)
				}
				scores = append(scores, *o.Score)
				var s seen
				if err := json.Unmarshal(o.Judge, &s); err != nil {
					t.Fatal(err)
				}
				if len(procs) == 0 || procs[len(procs)-1].Pid != s.Pid {
					procs = append(procs, s)
				}
			}
			if want := []float64{1, 2, 1, 1, 2, 1}; !slices.Equal(scores, want) {
				t.Errorf("calls seen = %v, want %v (a fresh process after 2 cases and after the crash)", scores, want)
			}
			var slots []string
			for _, s := range procs {
				slots = append(slots, slotOf(s.Cwd))
			}
			if !slices.Equal(slots, tc.slots) {
				t.Errorf("sandbox slots of the processes = %v, want %v", slots, tc.slots)
			}
			if uid := tc.sb.SlotUID(tc.firstSlot); uid >= 0 {
				for i, s := range procs {
					if want := uid + i%2; s.UID != want {
						t.Errorf("process %d: uid %d, want %d", i, s.UID, want)
					}
				}
			}
		})
	}
}

// A case that fills its scratch directory past the disk budget and answers
// before the guard's next measure is still the one that answers for it:
// the end of a case that ran long enough to write the budget is followed by
// a measure.
func TestDiskBudgetNamesTheCase(t *testing.T) {
	sb, py := sandboxed(t)
	src := `import time
def grade(sample, item):
    if item.get("fill"):
        time.sleep(0.08)
        with open("fill.bin", "wb") as f:
            f.write(b"x" * (3 << 20))
    return 1.0
`
	p := newPool(t, py, src, func(c *Config) {
		c.Sandbox = sb
		c.TimeoutSeconds = 10
		c.ScratchBytes = 1 << 20
	})
	got, err := p.Grade(context.Background(), []grading.Task{
		task("before", nil),
		{ID: "fill", Sample: json.RawMessage(`{}`), Item: json.RawMessage(`{"fill": true}`)},
		task("after", nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Class != grading.ClassOK || got[2].Class != grading.ClassOK {
		t.Errorf("before: %s, after: %s; want ok (a fresh process after the kill)", got[0].Class, got[2].Class)
	}
	if got[1].Class != grading.ClassSandboxViolation || got[1].Error == nil || !strings.Contains(got[1].Error.Message, "disk budget") {
		t.Errorf("fill: %s %+v, want sandbox_violation naming the disk budget", got[1].Class, got[1].Error)
	}
}

// TestTraceReturnLine: a traced task names the grader line whose return
// produced the score, followed back through functions that hand the same
// value on; an untraced task names none.
func TestTraceReturnLine(t *testing.T) {
	src := `def parse(text):
    try:
        return float(text)
    except Exception:
        return 1.0  # LINE handler

def same(x):
    return x

def grade(sample, item):
    if sample.get("mode") == "nested":
        return same(parse(sample["text"]))
    if sample.get("mode") == "dict":
        return {"scores": {"score": 0.0}}  # LINE dict
    if sample.get("mode") == "raise":
        raise ValueError("broken")
    return 0.5 if sample.get("half") else 1.0  # LINE direct
`
	tests := []struct {
		name   string
		sample any
		trace  bool
		want   int
	}{
		{"a handler in a function, through a second function", map[string]any{"mode": "nested", "text": "x"}, true, lineOf(src, "LINE handler")},
		{"a function's computed value", map[string]any{"mode": "nested", "text": "0.25"}, true, lineOf(src, "return float(text)")},
		{"a dict", map[string]any{"mode": "dict"}, true, lineOf(src, "LINE dict")},
		{"grade's own return", map[string]any{}, true, lineOf(src, "LINE direct")},
		{"a raise has a line of its own, not a return line", map[string]any{"mode": "raise"}, true, 0},
		{"untraced", map[string]any{"mode": "nested", "text": "x"}, false, 0},
	}
	p := newPool(t, python(t), src, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tk := task("c", tt.sample)
			tk.Trace = tt.trace
			got, err := p.Grade(context.Background(), []grading.Task{tk})
			if err != nil {
				t.Fatal(err)
			}
			if got[0].ReturnLine != tt.want {
				t.Errorf("ReturnLine = %d, want %d (outcome %+v)", got[0].ReturnLine, tt.want, got[0])
			}
		})
	}
}
