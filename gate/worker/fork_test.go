//go:build linux

package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
)

// TestFork: a variant's cases are graded by its own source, in a child
// forked from the pool's loaded process (no new interpreter), and a child
// that dies costs only its own case.
func TestFork(t *testing.T) {
	variant := func(score string) string {
		return "import os\ndef grade(sample, item):\n" +
			"    if sample.get('exit'):\n        os._exit(4)\n" +
			"    return {'scores': {'score': " + score + "}, 'judge': {'pid': os.getpid(), 'ppid': os.getppid()}}\n"
	}
	sb, sbPython := sandboxed(t)
	for _, env := range []struct {
		name      string
		isolation string
		sandboxed bool
	}{
		{IsolationWorker, IsolationWorker, false},
		{IsolationCase, IsolationCase, false},
		{"sandboxed", IsolationWorker, true},
	} {
		isolation := env.isolation
		t.Run(env.name, func(t *testing.T) {
			py := python(t)
			if env.sandboxed {
				py = sbPython
			}
			base := newPool(t, py, variant("0.0"), func(c *Config) {
				c.Isolation = isolation
				if env.sandboxed {
					c.Sandbox = sb
				}
			})
			got, err := base.Grade(context.Background(), []grading.Task{task("warm", map[string]any{})})
			if err != nil {
				t.Fatal(err)
			}
			var basePid struct{ Pid int }
			_ = json.Unmarshal(got[0].Judge, &basePid)
			for i := range 5 {
				v, err := base.Fork(context.Background(), []byte(variant(fmt.Sprintf("0.%d", i+1))))
				if err != nil {
					t.Fatalf("Fork: %v", err)
				}
				tasks := []grading.Task{task("a", map[string]any{}), task("b", map[string]any{})}
				if i == 2 {
					tasks = append(tasks, task("dies", map[string]any{"exit": true}), task("after", map[string]any{}))
				}
				got, err := v.Grade(context.Background(), tasks)
				if err != nil {
					t.Fatal(err)
				}
				for k, o := range got {
					if tasks[k].ID == "dies" {
						if o.Class != grading.ClassWorkerCrash || !strings.Contains(o.Error.Message, "status 4") {
							t.Errorf("variant %d: the dying case = %s %+v, want worker_crash with status 4", i, o.Class, o.Error)
						}
						continue
					}
					if o.Class != grading.ClassOK || *o.Score != float64(i+1)/10 {
						t.Fatalf("variant %d task %s: %s %v %+v, want ok %v", i, tasks[k].ID, o.Class, o.Score, o.Error, float64(i+1)/10)
					}
					var pids struct{ Pid, Ppid int }
					_ = json.Unmarshal(o.Judge, &pids)
					if i < 2 && isolation == IsolationWorker && (pids.Ppid == basePid.Pid || pids.Pid == basePid.Pid) {
						t.Errorf("variant %d: pid %d ppid %d, want a child of a process that loaded no grader, not of %d", i, pids.Pid, pids.Ppid, basePid.Pid)
					}
				}
				if err := v.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
			}
			// One interpreter for the base and one pristine one for every
			// fork: a child that died in the middle of its requests leaves
			// its zygote as it was, which skips the requests sent to the
			// child and serves the next fork.
			if n, want := base.starts.Load(), int64(2); n != want {
				t.Errorf("%d interpreters started, want %d", n, want)
			}
			if _, err := base.Fork(context.Background(), []byte("def grade(sample, item)\n")); !errors.As(err, new(*LoadError)) {
				t.Errorf("Fork of a source that does not load: %v, want a *LoadError", err)
			}
			// The zygote serves the next fork after one that did not load.
			startsBefore := base.starts.Load()
			v, err := base.Fork(context.Background(), []byte(variant("0.9")))
			if err != nil {
				t.Fatalf("Fork after a load error: %v", err)
			}
			if got, err := v.Grade(context.Background(), []grading.Task{task("x", map[string]any{})}); err != nil || got[0].Class != grading.ClassOK || *got[0].Score != 0.9 {
				t.Errorf("the fork after a load error: %v %+v", err, got)
			}
			if err := v.Close(); err != nil {
				t.Fatal(err)
			}
			if n := base.starts.Load(); n != startsBefore {
				t.Errorf("a fork after a load error started %d interpreters, want none", n-startsBefore)
			}
			got, err = base.Grade(context.Background(), []grading.Task{task("again", map[string]any{})})
			if err != nil || got[0].Class != grading.ClassOK || *got[0].Score != 0 {
				t.Errorf("the base pool after its forks: %v %+v", err, got)
			}
		})
	}
}

// TestForkPristine: a variant loads in a process that never loaded the
// pool's grader, so module state the grader leaves behind (a marker that
// refuses a second load, a digest of the source it first saw) is not there.
func TestForkPristine(t *testing.T) {
	const src = "import sys\n" +
		"if getattr(sys, 'graded_before', None) is not None:\n" +
		"    raise RuntimeError('loaded twice')\n" +
		"sys.graded_before = __file__\n" +
		"SCORE = 0.0\n" +
		"def grade(sample, item):\n    return SCORE\n"
	base := newPool(t, python(t), src, nil)
	if _, err := base.Grade(context.Background(), []grading.Task{task("warm", map[string]any{})}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		v, err := base.Fork(context.Background(), []byte(strings.Replace(src, "SCORE = 0.0", "SCORE = 0.5", 1)))
		if err != nil {
			t.Fatalf("fork %d: %v, want a variant that loads as in a fresh interpreter", i, err)
		}
		got, err := v.Grade(context.Background(), []grading.Task{task("a", map[string]any{})})
		if err != nil || got[0].Class != grading.ClassOK || *got[0].Score != 0.5 {
			t.Errorf("fork %d: %v %+v, want ok 0.5", i, err, got)
		}
		if err := v.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStrayForkedChild: a grader whose forked child does not exit (a
// mutant of `if pid == 0:`) comes back into the worker in two processes.
// The child finds /dev/null where the protocol's pipes were and exits, so
// it takes no request meant for the worker and answers none: every case
// gets the parent's score, in the pool's own processes and in a variant
// forked from a zygote, whose next variant then starts as usual.
func TestStrayForkedChild(t *testing.T) {
	t.Parallel()
	const stray = "import os\n" +
		"def grade(sample, item):\n" +
		"    pid = os.fork()\n" +
		"    if pid:\n" +
		"        os.waitpid(pid, 0)\n" +
		"        return 1.0\n" +
		"    return 0.5\n"
	// The variant's child exits in the middle of its requests, leaving
	// requests it never read in the pipe.
	const exits = "import os\n" +
		"def grade(sample, item):\n" +
		"    if sample.get('exit'):\n        os._exit(0)\n" +
		"    return 0.25\n"
	tasks := func(n int) []grading.Task {
		var out []grading.Task
		for i := range n {
			out = append(out, task(fmt.Sprintf("c%02d", i), map[string]any{"i": i}))
		}
		return out
	}
	check := func(t *testing.T, what string, got []grading.Outcome, want float64) {
		t.Helper()
		for i, o := range got {
			if o.Class != grading.ClassOK || o.Score == nil || *o.Score != want {
				t.Errorf("%s: case %d: %s %v %+v, want ok %v", what, i, o.Class, o.Score, o.Error, want)
			}
		}
	}
	for _, isolation := range []string{IsolationWorker, IsolationCase} {
		t.Run(isolation, func(t *testing.T) {
			p := newPool(t, python(t), stray, func(c *Config) { c.Isolation = isolation; c.Workers = 1; c.TimeoutSeconds = 10 })
			got, err := p.Grade(context.Background(), tasks(40))
			if err != nil {
				t.Fatal(err)
			}
			check(t, "pool", got, 1)
			for round := range 3 {
				v, err := p.Fork(context.Background(), []byte(stray))
				if err != nil {
					t.Fatalf("Fork: %v", err)
				}
				got, err := v.Grade(context.Background(), tasks(40))
				if err != nil {
					t.Fatal(err)
				}
				check(t, fmt.Sprintf("variant %d", round), got, 1)
				if err := v.Close(); err != nil {
					t.Fatal(err)
				}
				v, err = p.Fork(context.Background(), []byte(exits))
				if err != nil {
					t.Fatalf("Fork: %v", err)
				}
				ts := append(tasks(3), task("exit", map[string]any{"exit": true}))
				got, err = v.Grade(context.Background(), append(ts, tasks(20)...))
				if err != nil {
					t.Fatal(err)
				}
				if o := got[3]; o.Class != grading.ClassWorkerCrash {
					t.Errorf("the exiting case: %s %+v, want worker_crash", o.Class, o.Error)
				}
				check(t, "around the exit", append(got[:3:3], got[4:]...), 0.25)
				if err := v.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
