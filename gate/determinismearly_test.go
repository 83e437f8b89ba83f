package gate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/input"
)

// TestEarlyDeterminism starts the determinism check's pools with the
// run's only where the check's pools need nothing the run decides: pools
// that grade, one per hash seed, each taken once, on slots after the
// run's, a mutation score or not; and none for a multi grader or a ctx
// grader whose calls the check asks again.
func TestEarlyDeterminism(t *testing.T) {
	mutation := func(s *Suite) { v := 0.5; s.Manifest.Gate.MinMutationScore = &v }
	tests := []struct {
		name     string
		change   func(s *Suite)
		runBlock int
		early    bool
	}{
		{name: "python grader", change: func(*Suite) {}, runBlock: -1, early: true},
		{name: "python grader, run in the second block", change: func(*Suite) {}, runBlock: 1, early: true},
		{name: "mutation score, run's block drawn", change: mutation, runBlock: 0, early: true},
		// No room for four blocks: the mutants take the one after the run's.
		{name: "mutation score, run in the first block", change: mutation, runBlock: -1},
		{name: "multi grader", change: func(s *Suite) { s.Manifest.Grader.Multi = &manifest.MultiGrader{} }, runBlock: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, h, env, sample := exampleEarly(t, tt.change)
			early := h.startEarlyDeterminism(context.Background(), s, env, GraderOptions{}, sample, tt.runBlock)
			defer early.close()
			if (early != nil) != tt.early {
				t.Fatalf("early pools %v, want %v", early != nil, tt.early)
			}
			if early == nil {
				return
			}
			c := s.Manifest.Canaries[0]
			for _, seed := range sample.d.HashSeeds {
				r, stop, err, ok := early.take(seed)
				if !ok || err != nil {
					t.Fatalf("take(%d) = %v, %v", seed, ok, err)
				}
				out, err := grading.GradeTasks(context.Background(), r, []grading.Task{{ID: c.Name, Sample: c.Sample, Item: c.Item}})
				stop()
				if err != nil || len(out) != 1 || out[0].Class != grading.ClassOK {
					t.Fatalf("grading with the early pool of seed %d: %+v, %v", seed, out, err)
				}
				if _, _, _, again := early.take(seed); again {
					t.Fatalf("the pool of seed %d was taken twice", seed)
				}
			}
			if _, _, _, ok := early.take(0); ok { // the check's seeds are never 0
				t.Fatal("a pool for a seed that is not the check's")
			}
		})
	}
}

// TestGradeEarlyDeterminism runs the pipeline in process on the example
// suite, with its mutation score and without, so that the determinism
// check's pools start with the run's: the check grades every canary and
// the sample and compares each sampled case with the run.
func TestGradeEarlyDeterminism(t *testing.T) {
	for _, mutation := range []bool{false, true} {
		t.Run(fmt.Sprintf("mutation=%v", mutation), func(t *testing.T) {
			s, err := LoadSuite("../testdata/examples/order-summary/gradegate.yaml", input.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !mutation {
				s.Manifest.Gate.MinMutationScore = nil
			}
			var notes bytes.Buffer
			h := NewHost(func(string) string { return "" }, &notes)
			res, err := h.Grade(context.Background(), s, GradeOptions{
				GraderOptions: GraderOptions{Python: "/usr/bin/python3", Workers: 2, Unsandboxed: true},
				Version:       "test",
			})
			if err != nil {
				t.Fatalf("Grade: %v\nnotes:\n%s", err, notes.String())
			}
			defer res.Close()
			// The run's pool and the check's end in the background while
			// the run decides, and Grade waits for them: none of its
			// processes is left.
			if left := childProcesses(t); len(left) > 0 {
				t.Errorf("processes left after Grade returned: %v", left)
			}
			d := res.Determinism
			if d == nil || d.Status != results.StatusPass || d.Canaries != len(s.Manifest.Canaries) || d.Cases == 0 || d.ComparedWithRun != d.Cases {
				t.Fatalf("determinism %+v, want a passing check of every canary and the sample, each case compared with the run", d)
			}
			if mutation && (res.MutationScore == nil || *res.MutationScore < *s.Manifest.Gate.MinMutationScore) {
				t.Errorf("mutation score %v, want the example's, at least %v", res.MutationScore, *s.Manifest.Gate.MinMutationScore)
			}
		})
	}
}

// childProcesses lists the command lines of this process's children,
// from /proc/PID/stat's parent pid.
func childProcesses(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var out []string
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: the command name may hold spaces.
		_, rest, ok := bytes.Cut(stat, []byte(") "))
		if f := strings.Fields(string(rest)); !ok || len(f) < 2 || f[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, e.Name()+": "+strings.ReplaceAll(string(bytes.TrimRight(cmdline, "\x00")), "\x00", " "))
	}
	return out
}

// The run's pools take one of three blocks of sandbox slots at random and
// the check's early pools the other two, so a grader's uid and scratch
// folder name say nothing of which it is in.
func TestEarlyDeterminismSlotsDrawn(t *testing.T) {
	s, h, env, sample := exampleEarly(t, func(*Suite) {})
	size := env.slotsPerRunner()
	for k := range 3 {
		first, block := earlySlots(s, env, sample, func(n int) int {
			if n != 3 {
				t.Fatalf("drew among %d blocks, want 3", n)
			}
			return k
		})
		if block != k || first != env.firstSlot+k*size {
			t.Fatalf("block %d: the run's pools start at slot %d (block %d), want %d", k, first, block, env.firstSlot+k*size)
		}
		early := h.startEarlyDeterminism(context.Background(), s, env, GraderOptions{}, sample, block)
		if early == nil {
			t.Fatal("no early pools")
		}
		got := []int{first, early.slots[0], early.slots[1]}
		early.close()
		slices.Sort(got)
		if want := []int{env.firstSlot, env.firstSlot + size, env.firstSlot + 2*size}; !slices.Equal(got, want) {
			t.Errorf("block %d: the run's and the check's pools start at %v, want the three blocks %v", k, got, want)
		}
	}
	// Under a mutation score the run's block is drawn too; its mutants'
	// pools take a fourth block, so there must be room for four.
	v := 0.5
	s.Manifest.Gate.MinMutationScore = &v
	if first, block := earlySlots(s, env, sample, func(int) int { return 2 }); block != 2 || first != env.firstSlot+2*size {
		t.Errorf("with a mutation score the run's pools start at %d (block %d), want %d (2)", first, block, env.firstSlot+2*size)
	}
}

// exampleEarly loads the example suite without its mutation score, changed
// by change, with a grader environment of two unsandboxed workers (closed
// when t ends) and its determinism sample.
func exampleEarly(t *testing.T, change func(*Suite)) (*Suite, *Host, *graderEnv, *DeterminismSample) {
	t.Helper()
	s, err := LoadSuite("../testdata/examples/order-summary/gradegate.yaml", input.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	s.Manifest.Gate.MinMutationScore = nil
	change(s)
	var notes bytes.Buffer
	h := NewHost(func(string) string { return "" }, &notes)
	env, err := h.graders(context.Background(), s, GraderOptions{Python: "/usr/bin/python3", Workers: 2, Unsandboxed: true})
	if err != nil {
		t.Skipf("no grader environment: %v", err)
	}
	t.Cleanup(env.close)
	sample, err := determinismSample(s, shard.Shard{})
	if err != nil {
		t.Fatal(err)
	}
	return s, h, env, sample
}

// TestMutationSuiteEarlyDeterminism walks the stages of a run of the
// example suite, mutation score and all, in the sandbox when the tests run
// as root: the check's pools start with the run's, on the two blocks of
// slots the run's pools are not in, the mutants are graded on a fourth
// beside them, and the check takes its pools.
func TestMutationSuiteEarlyDeterminism(t *testing.T) {
	s, err := LoadSuite("../testdata/examples/order-summary/gradegate.yaml", input.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var notes bytes.Buffer
	g := &gateRun{h: NewHost(func(string) string { return "" }, &notes), s: s, o: GradeOptions{
		GraderOptions: GraderOptions{Python: "/usr/bin/python3", Workers: 2, Unsandboxed: os.Geteuid() != 0},
		Version:       "test",
	}}
	defer g.close()
	ctx := context.Background()
	if err := g.verifyInputs(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g.startGraders(ctx); err != nil {
		t.Fatalf("%v\nnotes:\n%s", err, notes.String())
	}
	if g.early == nil || g.runBlock < 0 {
		t.Fatalf("early pools %v, run block %d: want the check's pools up with the run's", g.early != nil, g.runBlock)
	}
	size := g.env.slotsPerRunner()
	blocks := map[int]bool{g.runBlock: true}
	for _, slot := range g.early.slots {
		blocks[(slot-g.env.firstSlot)/size] = true
	}
	if mutants := g.mutantSlot(); mutants != g.env.firstSlot+3*size {
		t.Errorf("the mutants' pools start at slot %d, want the fourth block, %d", mutants, g.env.firstSlot+3*size)
	}
	if len(blocks) != 3 || blocks[3] {
		t.Errorf("the run's and the check's pools are in blocks %v, want 0, 1 and 2 (blocks of %d slots)", blocks, size)
	}
	for _, stage := range []func(context.Context) error{g.mutationScore, g.grade, g.determinism} {
		if err := stage(ctx); err != nil {
			t.Fatalf("%v\nnotes:\n%s", err, notes.String())
		}
	}
	if g.mutation == nil || *g.mutation < *s.Manifest.Gate.MinMutationScore {
		t.Errorf("mutation score %v, want the example's, at least %v", g.mutation, *s.Manifest.Gate.MinMutationScore)
	}
	for i := range g.early.pools {
		if !g.early.pools[i].taken {
			t.Errorf("the check did not take early pool %d", i)
		}
	}
	if d := g.ev.ev.Determinism; d == nil || d.Status != results.StatusPass || d.ComparedWithRun != d.Cases {
		t.Errorf("determinism %+v, want a pass with every sampled case compared with the run", d)
	}
}
