package mutate

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/sandbox"
	"github.com/gradegate/gradegate/gate/worker"
)

// slowPools is a factory of two-process worker pools (unsandboxed) for a
// grader that sleeps 5 ms a call: slow enough that two mutants graded at
// once always want a process at the same time.
func slowPools(t *testing.T) (RunnerFactory, string) {
	t.Helper()
	py, err := worker.ResolvePython(context.Background(), python(t))
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.New(sandbox.WithUnsandboxed(true), sandbox.WithLauncher(os.Args[0]))
	if err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context, s []byte) (grading.Runner, func(), error) {
		p, err := worker.New(ctx, worker.Config{
			Source: s, SourceName: "grader.py", TimeoutSeconds: 10,
			Workers: 2, Python: py, Sandbox: sb,
		})
		if err != nil {
			return nil, nil, err
		}
		return p, func() {
			if err := p.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}, nil
	}, py.Executable
}

// TestRunForkedNoDeadlock: mutants forked from a two-process pool, graded
// at once, each own the process they grade on, so none waits for another's
// and none reaches the time budget; the score is the same on every run.
func TestRunForkedNoDeadlock(t *testing.T) {
	if testing.Short() {
		t.Skip("grades every mutant of the example with real processes")
	}
	// Beside the other: one sleeps, the other forks.
	t.Parallel()
	m, cases, src := loadExample(t, "order-summary")
	src = bytes.Replace(src, []byte("def grade(sample, item):\n"),
		[]byte("def grade(sample, item):\n    __import__('time').sleep(0.005)\n"), 1)
	pools, py := slowPools(t)
	var scores []float64
	for range 2 {
		r, err := run(context.Background(), []Part{{File: "grader.py", Src: src, NewRunner: pools}}, m, cases, py, 0)
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		for _, mu := range r.Mutants {
			if mu.Status == StatusNotGraded {
				t.Errorf("mutant %s (line %d, %s) stopped by the time budget", mu.ID, mu.Line, mu.Operator)
			}
		}
		scores = append(scores, r.Score)
	}
	for _, s := range scores[1:] {
		if s != scores[0] {
			t.Errorf("scores %v, want one score", scores)
			break
		}
	}
}

// forkingGrader is the example's grader computing a length in a forked
// child, as graders that run code in a subprocess do: its mutants include
// children that never exit (`if pid == 1:`), parents that exit in the
// child's place (`if pid != 0:`) and waits that are dropped.
func forkingGrader(src []byte) []byte {
	src = bytes.Replace(src, []byte("import json\n"), []byte("import json\nimport os\n"), 1)
	return bytes.Replace(src, []byte("def grade(sample, item):\n    status, currency, total = _expectations(item)\n"), []byte(
		"def _forked_len(text):\n"+
			"    r, w = os.pipe()\n"+
			"    pid = os.fork()\n"+
			"    if pid == 0:\n"+
			"        os.close(r)\n"+
			"        os.write(w, str(len(text)).encode())\n"+
			"        os._exit(0)\n"+
			"    os.close(w)\n"+
			"    data = os.read(r, 64)\n"+
			"    os.close(r)\n"+
			"    os.waitpid(pid, 0)\n"+
			"    return int(data)\n\n\n"+
			"def grade(sample, item):\n    status, currency, total = _expectations(item)\n"+
			"    if _forked_len(str(sample)) < 0:\n        return 0.0\n"), 1)
}

// TestRunForkingGraderExact: a grader that forks gets the same report,
// mutant by mutant, on every run, and no mutant reaches the time budget:
// a mutant's forked child that goes on into the worker cannot take its
// parent's requests, and a zygote whose child died serves the next fork.
func TestRunForkingGraderExact(t *testing.T) {
	if testing.Short() {
		t.Skip("grades every mutant of a forking grader twice with real processes (the ten-run figure is gate/bench/mutate_fork.py)")
	}
	// Beside the other: one sleeps, the other forks.
	t.Parallel()
	m, cases, src := loadExample(t, "order-summary")
	src = forkingGrader(src)
	pools, py := slowPools(t)
	var first *Report
	for run := range 2 {
		r, err := Run(context.Background(), src, "grader.py", m, cases, pools, py)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if r.NotGraded != 0 {
			t.Errorf("run %d: %d mutants stopped by the time budget", run, r.NotGraded)
		}
		if first == nil {
			first = r
			if !slices.ContainsFunc(r.Mutants, func(mu Mutant) bool { return strings.Contains(mu.Mutated, "if pid != 0:") }) {
				t.Fatal("no mutant of `if pid == 0:`: the grader is not the one this test is about")
			}
			continue
		}
		if r.Score != first.Score {
			t.Errorf("run %d: score %v, run 0: %v", run, r.Score, first.Score)
		}
		for i, mu := range r.Mutants {
			if was := first.Mutants[i]; mu.Status != was.Status || mu.Suspect != was.Suspect || !slices.Equal(mu.KilledBy, was.KilledBy) {
				t.Errorf("run %d: %s (line %d, %s) %s %s %v; run 0: %s %s %v", run, mu.ID, mu.Line, mu.Operator,
					mu.Status, mu.Suspect, mu.KilledBy, was.Status, was.Suspect, was.KilledBy)
			}
		}
	}
}
