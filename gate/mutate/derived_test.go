package mutate

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/sandbox"
	"github.com/gradegate/gradegate/gate/worker"
	"github.com/gradegate/gradegate/manifest"
)

// TestDerivedCanariesKill: with only a right and a wrong canary, the
// example grader's mutants that only a malformed answer, an empty output or
// a refusal reveal survive; the derived canaries kill them.
func TestDerivedCanariesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Python pool per mutant")
	}
	py, err := worker.ResolvePython(context.Background(), python(t))
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.New(sandbox.WithUnsandboxed(true), sandbox.WithLauncher(os.Args[0]))
	if err != nil {
		t.Fatal(err)
	}
	m, _, src := loadExample(t, "order-summary")
	var two []manifest.Canary
	for _, c := range m.Canaries {
		if c.Name == "equivalent-serialization" || c.Name == "wrong-currency" {
			two = append(two, c)
		}
	}
	m.Canaries = two
	pools := func(ctx context.Context, s []byte) (grading.Runner, func(), error) {
		p, err := worker.New(ctx, worker.Config{
			Source: s, SourceName: "grader.py", Contract: m.Grader.Contract, Metric: m.Grader.Metric,
			TimeoutSeconds: 10, MemoryMB: m.Grader.MemoryMB, Isolation: m.Grader.Isolation,
			Workers: 1, Python: py, Sandbox: sb,
		})
		if err != nil {
			return nil, nil, err
		}
		return p, func() { _ = p.Close() }, nil
	}
	run := func(on bool) *Report {
		mm := *m
		mm.Gate.Metamorphic.Enabled = on
		r, err := Run(context.Background(), src, "grader.py", &mm, nil, pools, py.Executable)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		return r
	}
	off, on := run(false), run(true)
	if on.Canaries <= off.Canaries || on.Killed <= off.Killed {
		t.Fatalf("derived canaries on: %d canaries, %d killed; off: %d canaries, %d killed", on.Canaries, on.Killed, off.Canaries, off.Killed)
	}
	onlyDerived := 0
	for _, mu := range on.Mutants {
		if mu.Status != StatusKilled {
			continue
		}
		derived := true
		for _, k := range mu.KilledBy {
			derived = derived && strings.Contains(k, "/")
		}
		if derived {
			onlyDerived++
		}
	}
	if onlyDerived == 0 {
		t.Errorf("no mutant was killed by derived canaries alone")
	}
	t.Logf("two canaries: %d of %d mutants killed; with derived canaries (%d checks): %d, %d by derived ones alone",
		off.Killed, len(off.Mutants), on.Canaries, on.Killed, onlyDerived)
}
