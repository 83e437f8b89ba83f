package mutate

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/sandbox"
	"github.com/gradegate/gradegate/gate/worker"
)

// slowPools is a factory of two-process worker pools (unsandboxed) for a
// grader that sleeps 20 ms a call: slow enough that two mutants graded at
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
	m, cases, src := loadExample(t, "order-summary")
	src = bytes.Replace(src, []byte("def grade(sample, item):\n"),
		[]byte("def grade(sample, item):\n    __import__('time').sleep(0.02)\n"), 1)
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
