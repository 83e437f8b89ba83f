package mutate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/sandbox"
	"github.com/gradegate/gradegate/gate/worker"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// loadExample reads a suite under testdata/examples.
func loadExample(t testing.TB, dir string) (*manifest.Manifest, []dataset.Case, []byte) {
	t.Helper()
	fsys := os.DirFS("../..")
	m, err := manifest.Load(fsys, filepath.ToSlash(filepath.Join("testdata/examples", dir, "gradegate.yaml")))
	if err != nil {
		t.Fatalf("manifest.Load: %v", err)
	}
	set, err := dataset.Load(fsys, m)
	if err != nil {
		t.Fatalf("dataset.Load: %v", err)
	}
	return m, set.Cases, readFile(t, filepath.Join("../..", m.Path(m.Grader.Source)))
}

// fakeRunner grades nothing: judge decides each outcome from the source and
// the task, so a test states which mutant a check notices.
type fakeRunner struct {
	src   []byte
	judge func(src []byte, t grading.Task) grading.Outcome
}

func (f fakeRunner) Grade(_ context.Context, tasks []grading.Task) ([]grading.Outcome, error) {
	out := make([]grading.Outcome, len(tasks))
	for i, t := range tasks {
		out[i] = f.judge(f.src, t)
	}
	return out, nil
}

func (fakeRunner) Sandbox() grading.Sandbox { return grading.Sandbox{UID: -1, Unsandboxed: true} }

func fptr(f float64) *float64 { return &f }

// perfect grades every canary as the manifest expects and every case as its
// label says.
func perfect(m *manifest.Manifest, cases []dataset.Case) func([]byte, grading.Task) grading.Outcome {
	labels := map[string]int{}
	for _, c := range cases {
		if c.Label != nil {
			labels[c.ID] = *c.Label
		}
	}
	return func(_ []byte, t grading.Task) grading.Outcome {
		for _, c := range m.Canaries {
			if c.Name != t.ID {
				continue
			}
			if c.ExpectError {
				return grading.Outcome{Class: grading.ClassGraderException, Error: &grading.CaseError{Class: grading.ClassGraderException, Type: "KeyError", Message: "corrupt fixture"}}
			}
			return grading.Outcome{Class: grading.ClassOK, Score: fptr(*c.Expect)}
		}
		return grading.Outcome{Class: grading.ClassOK, Score: fptr(float64(labels[t.ID]))}
	}
}

func factory(judge func([]byte, grading.Task) grading.Outcome) RunnerFactory {
	return func(_ context.Context, src []byte) (grading.Runner, func(), error) {
		if bytes.Contains(src, []byte("does-not-load")) {
			return nil, nil, &worker.LoadError{Err: grading.CaseError{Class: grading.ClassGraderException, Type: "SyntaxError", Message: "invalid syntax", Line: 3}}
		}
		return fakeRunner{src: src, judge: judge}, func() {}, nil
	}
}

func TestRunFake(t *testing.T) {
	m, cases, src := loadExample(t, "order-summary")
	// These fakes answer by canary name; derived canaries have their own
	// test (TestDerivedCanariesKill).
	m.Gate.Metamorphic.Enabled = false
	ok := perfect(m, cases)
	const isinstanceMutant = `if not isinstance(candidate["total_cents"], int):`

	tests := []struct {
		name  string
		src   []byte
		judge func([]byte, grading.Task) grading.Outcome
		check func(t *testing.T, r *Report)
	}{
		{
			name:  "a suite that notices nothing lets every mutant survive",
			src:   src,
			judge: ok,
			check: func(t *testing.T, r *Report) {
				if r.Killed != 0 || r.Survived != len(r.Mutants) || r.Score != 0 {
					t.Errorf("killed %d survived %d score %v; want all survived", r.Killed, r.Survived, r.Score)
				}
				if r.Canaries != len(m.Canaries) || r.Cases == 0 || len(r.Blind) != 0 {
					t.Errorf("canaries %d cases %d blind %v", r.Canaries, r.Cases, r.Blind)
				}
			},
		},
		{
			name: "the isinstance mutant is killed by the one-cent canary only",
			src:  src,
			judge: func(s []byte, task grading.Task) grading.Outcome {
				if bytes.Contains(s, []byte(isinstanceMutant)) && task.ID == "boolean-total-one-cent" {
					return grading.Outcome{Class: grading.ClassOK, Score: fptr(1)}
				}
				return ok(s, task)
			},
			check: func(t *testing.T, r *Report) {
				if r.Killed != 1 {
					t.Fatalf("killed %d, want 1", r.Killed)
				}
				for _, mu := range r.Mutants {
					if mu.Status != StatusKilled {
						continue
					}
					if mu.Operator != "type-is-to-isinstance" || mu.Line != totalTypeLine(t) || !slices.Equal(mu.KilledBy, []string{"boolean-total-one-cent"}) {
						t.Errorf("killed %+v", mu)
					}
				}
				if want := 1 / float64(len(r.Mutants)); r.Score < want-0.0001 || r.Score > want+0.0001 {
					t.Errorf("score %v, want %v", r.Score, want)
				}
			},
		},
		{
			name: "a labeled case that starts to error kills the mutant",
			src:  src,
			judge: func(s []byte, task grading.Task) grading.Outcome {
				if bytes.Contains(s, []byte("if not missing:")) && task.ID == "ship-cancel-001" {
					return grading.Outcome{Class: grading.ClassGraderException, Error: &grading.CaseError{Type: "KeyError"}}
				}
				return ok(s, task)
			},
			check: func(t *testing.T, r *Report) {
				mu := find(t, r, "negate-condition", "if not missing:")
				if mu.Status != StatusKilled || !slices.Equal(mu.KilledBy, []string{"ship-cancel-001"}) {
					t.Errorf("negated `if missing` = %+v, want killed by ship-cancel-001", mu)
				}
			},
		},
		{
			name: "a pragma without a reason counts its mutants as survivors",
			// Every tested mutant is killed; the unexcused pragma alone keeps
			// the score below 1.
			src: bytes.Replace(src, []byte("# gradegate: no-mutate: JSON has no dict subclass"), []byte("# gradegate: no-mutate"), 1),
			judge: func(s []byte, task grading.Task) grading.Outcome {
				if !bytes.Equal(s, bytes.Replace(src, []byte("# gradegate: no-mutate: JSON has no dict subclass"), []byte("# gradegate: no-mutate"), 1)) && task.ID == "equivalent-serialization" {
					return grading.Outcome{Class: grading.ClassOK, Score: fptr(0)}
				}
				return ok(s, task)
			},
			check: func(t *testing.T, r *Report) {
				if r.Survived != 0 || r.Killed != len(r.Mutants) {
					t.Fatalf("killed %d survived %d of %d; want every tested mutant killed", r.Killed, r.Survived, len(r.Mutants))
				}
				var bare []Exclusion
				for _, e := range r.Excluded {
					if e.Unexcused() {
						bare = append(bare, e)
					}
				}
				if len(r.Excluded) != 5 || len(bare) != 1 || bare[0].Mutants == 0 || r.ExcludedWithoutReason != bare[0].Mutants {
					t.Fatalf("excluded %+v, without reason %d", r.Excluded, r.ExcludedWithoutReason)
				}
				want := float64(r.Killed) / float64(r.Killed+r.ExcludedWithoutReason)
				if r.Score < want-0.0001 || r.Score > want+0.0001 || r.Score == 1 {
					t.Errorf("score %v, want %v", r.Score, want)
				}
				if r.Passes(nil) || r.Passes(fptr(1)) {
					t.Error("a report with an unexcused exclusion passes")
				}
			},
		},
		{
			name: "a canary the unmutated grader fails cannot kill",
			src:  src,
			judge: func(s []byte, task grading.Task) grading.Outcome {
				if task.ID == "wrong-currency" {
					return grading.Outcome{Class: grading.ClassOK, Score: fptr(1)}
				}
				return ok(s, task)
			},
			check: func(t *testing.T, r *Report) {
				if r.Killed != 0 || r.Canaries != len(m.Canaries)-1 || !slices.Equal(r.Blind, []string{"canary wrong-currency"}) {
					t.Errorf("killed %d canaries %d blind %v", r.Killed, r.Canaries, r.Blind)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Run(context.Background(), tc.src, "grader.py", m, cases, factory(tc.judge), python(t))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if r.Schema != Schema || r.Killed+r.Survived != len(r.Mutants) {
				t.Errorf("schema %q, %d+%d of %d", r.Schema, r.Killed, r.Survived, len(r.Mutants))
			}
			tc.check(t, r)
		})
	}
}

func TestRunLoadFailure(t *testing.T) {
	m, cases, src := loadExample(t, "order-summary")
	// The fake fails to load a source with the marker.
	marked := bytes.Replace(src, []byte("    return 1.0\n"), []byte("    if True: return 1.0  # does-not-load\n    return 1.0\n"), 1)
	_, err := Run(context.Background(), marked, "grader.py", m, cases, factory(perfect(m, cases)), python(t))
	if !errors.Is(err, manifest.ErrInput) {
		t.Fatalf("an unmutated grader that does not load: err = %v, want an input error", err)
	}

	// A mutant that no longer loads is equivalent-suspect, not killed: a
	// grader that checks its own source fails to load on purpose.
	loads := func(_ context.Context, s []byte) (grading.Runner, func(), error) {
		// Only the broaden-except mutant loses this line.
		if !bytes.Contains(s, []byte("except ValueError:")) {
			return nil, nil, &worker.LoadError{Err: grading.CaseError{Class: grading.ClassGraderException, Message: "boom"}}
		}
		return fakeRunner{src: s, judge: perfect(m, cases)}, func() {}, nil
	}
	r, err := Run(context.Background(), src, "grader.py", m, cases, loads, python(t))
	if err != nil {
		t.Fatal(err)
	}
	var suspect []string
	for _, mu := range r.Mutants {
		switch mu.Status {
		case StatusKilled:
			t.Errorf("%s killed by %v, want no kill", mu.ID, mu.KilledBy)
		case StatusEquivalentSuspect:
			suspect = append(suspect, mu.ID)
			if mu.Suspect != SuspectLoad || len(mu.KilledBy) != 0 {
				t.Errorf("%s: suspect %q killed by %v, want %q and no killer", mu.ID, mu.Suspect, mu.KilledBy, SuspectLoad)
			}
		}
	}
	if len(suspect) == 0 || r.EquivalentSuspect != len(suspect) || r.Score != 0 {
		t.Errorf("suspects %v (counted %d), score %v; want the load failures equivalent-suspect and a score of 0", suspect, r.EquivalentSuspect, r.Score)
	}
}

// TestRunFakedDeath: a grader that raises on every input once its source
// changed (it carries a digest of itself) gets no kill from it; nor does a
// check whose outcome the mutant did not change.
func TestRunFakedDeath(t *testing.T) {
	m, cases, src := loadExample(t, "order-summary")
	raises := grading.Outcome{Class: grading.ClassGraderException, Error: &grading.CaseError{Class: grading.ClassGraderException, Type: "RuntimeError", Message: "source changed"}}
	honest := perfect(m, cases)
	judge := func(s []byte, task grading.Task) grading.Outcome {
		if !bytes.Equal(s, src) {
			return raises
		}
		return honest(s, task)
	}
	r, err := Run(context.Background(), src, "grader.py", m, cases, factory(judge), python(t))
	if err != nil {
		t.Fatal(err)
	}
	if r.Killed != 0 || r.EquivalentSuspect != len(r.Mutants) || r.Score != 0 {
		t.Errorf("killed %d, equivalent-suspect %d of %d, score %v; want every mutant suspect and a score of 0", r.Killed, r.EquivalentSuspect, len(r.Mutants), r.Score)
	}
	for _, mu := range r.Mutants {
		if mu.Suspect != SuspectRaises {
			t.Errorf("%s: suspect %q, want %q", mu.ID, mu.Suspect, SuspectRaises)
		}
	}
}

func TestRunSlowMutant(t *testing.T) {
	m, cases, src := loadExample(t, "order-summary")
	// The mutant that drops the raise for a blank expected_status hangs
	// until stopped.
	hangs := func(_ context.Context, s []byte) (grading.Runner, func(), error) {
		if !bytes.Contains(s, []byte("expected_status must be")) {
			return hangRunner{}, func() {}, nil
		}
		return fakeRunner{src: s, judge: perfect(m, cases)}, func() {}, nil
	}
	r, err := run(context.Background(), []Part{{File: "grader.py", Src: src, NewRunner: hangs}}, m, cases, python(t), 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	mu := find(t, r, "drop-raise", "pass")
	if mu.Status != StatusNotGraded || len(mu.KilledBy) != 0 {
		t.Errorf("hanging mutant = %+v, want not graded", mu)
	}
	if r.Killed != 0 || r.NotGraded != 1 {
		t.Errorf("killed %d, not graded %d, want 0 and 1", r.Killed, r.NotGraded)
	}
	if want := 0.0; r.Score != want {
		t.Errorf("score %v, want %v: a mutant the budget stopped is no kill", r.Score, want)
	}
}

// TestRunTimeouts: a check that times out on a mutant (and not on the
// unmutated grader) is never a kill: a mutant whose only changed checks
// timed out is timeout_killed, counted as not killed unless
// gate.mutation.timeout_counts_as_kill; a mutant that also fails another
// check is killed by that one alone.
func TestRunTimeouts(t *testing.T) {
	m, cases, src := loadExample(t, "order-summary")
	m.Gate.Metamorphic.Enabled = false
	ok := perfect(m, cases)
	timeout := grading.Outcome{Class: grading.ClassTimeout, Error: &grading.CaseError{Class: grading.ClassTimeout, Message: "the grader ran past timeout_seconds=1"}}
	const hangs, hangsAndFails = "if not missing:", `if type(candidate["total_cents"]) is int:`
	judge := func(s []byte, task grading.Task) grading.Outcome {
		switch {
		case bytes.Contains(s, []byte(hangs)) && task.ID == "ship-cancel-001":
			return timeout
		case bytes.Contains(s, []byte(hangsAndFails)) && task.ID == "ship-cancel-002":
			return timeout
		case bytes.Contains(s, []byte(hangsAndFails)) && task.ID == "wrong-currency":
			return grading.Outcome{Class: grading.ClassOK, Score: fptr(1)}
		}
		return ok(s, task)
	}
	for _, counts := range []bool{false, true} {
		t.Run(fmt.Sprintf("timeout_counts_as_kill=%v", counts), func(t *testing.T) {
			mm := *m
			mm.Gate.Mutation.TimeoutCountsAsKill = counts
			r, err := Run(context.Background(), src, "grader.py", &mm, cases, factory(judge), python(t))
			if err != nil {
				t.Fatal(err)
			}
			mu := find(t, r, "negate-condition", hangs)
			if mu.Status != StatusTimeoutKilled || len(mu.KilledBy) != 0 || !slices.Equal(mu.TimedOut, []string{"ship-cancel-001"}) {
				t.Errorf("the mutant that only times out = %+v, want timeout_killed by ship-cancel-001", mu)
			}
			mu = find(t, r, "flip-comparison", hangsAndFails)
			if mu.Status != StatusKilled || !slices.Equal(mu.KilledBy, []string{"wrong-currency"}) || !slices.Equal(mu.TimedOut, []string{"ship-cancel-002"}) {
				t.Errorf("the mutant that times out and fails = %+v, want killed by wrong-currency alone", mu)
			}
			if r.Killed != 1 || r.TimeoutKilled != 1 || r.TimeoutCountsAsKill != counts {
				t.Errorf("killed %d timeout-killed %d counts %v", r.Killed, r.TimeoutKilled, r.TimeoutCountsAsKill)
			}
			want := 1 / float64(len(r.Mutants))
			if counts {
				want = 2 / float64(len(r.Mutants))
			}
			if math.Abs(r.Score-want) > 0.0001 {
				t.Errorf("score %v, want %v", r.Score, want)
			}
			var text bytes.Buffer
			if err := r.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(text.String(), "gate.mutation.timeout_counts_as_kill"); got != counts {
				t.Errorf("the text names the option: %v, want %v:\n%s", got, counts, text.String())
			}
			if !strings.Contains(text.String(), "1 timeout-killed") {
				t.Errorf("the text does not count the timeout-killed mutant:\n%s", text.String())
			}
		})
	}
}

// hangRunner grades until its context ends, like a pool whose grader loops.
type hangRunner struct{}

func (hangRunner) Grade(ctx context.Context, _ []grading.Task) ([]grading.Outcome, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (hangRunner) Sandbox() grading.Sandbox { return grading.Sandbox{} }

func TestRunToolError(t *testing.T) {
	m, cases, src := loadExample(t, "order-summary")
	broken := func(context.Context, []byte) (grading.Runner, func(), error) {
		return nil, nil, errors.New("no sandbox")
	}
	if _, err := Run(context.Background(), src, "grader.py", m, cases, broken, python(t)); err == nil || errors.Is(err, manifest.ErrInput) {
		t.Errorf("err = %v, want a tool error", err)
	}
}

func find(t *testing.T, r *Report, operator, mutated string) Mutant {
	t.Helper()
	for _, mu := range r.Mutants {
		if mu.Operator == operator && mu.Mutated == mutated {
			return mu
		}
	}
	t.Fatalf("no %s mutant %q", operator, mutated)
	return Mutant{}
}

func TestReportJSON(t *testing.T) {
	r := &Report{
		Schema: Schema, Score: 0.5, Killed: 1, Survived: 1,
		Mutants: []Mutant{
			{ID: "m01", Line: 28, Operator: "type-is-to-isinstance", Diff: "- if type(x) is not int: / + if not isinstance(x, int):", Status: StatusSurvived, KilledBy: []string{}, Source: []byte("x")},
			{ID: "m02", Line: 30, Operator: "return-constant-flip", Diff: "- return 0.0 / + return 1.0", Status: StatusKilled, KilledBy: []string{"boolean-total-one-cent"}},
		},
		Excluded: []Exclusion{
			{Line: 12, Reason: "JSON has no str subclass", Mutants: 1, Code: "if type(s) is not str:  # gradegate: no-mutate: JSON has no str subclass"},
			{Line: 14, Mutants: 2, Code: "if type(d) is not dict:  # gradegate: no-mutate"},
		},
		ExcludedWithoutReason: 2,
		Source:                "grader.py",
	}
	got, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"schema":"gradegate.mutate/v1","score":0.5,"killed":1,"survived":1,"not_graded":0,"equivalent_suspect":0,"timeout_killed":0,"timeout_counts_as_kill":false,"killed_by_canary":0,"killed_by_case_only":0,"mutants":[` +
		`{"id":"m01","line":28,"operator":"type-is-to-isinstance","diff":"- if type(x) is not int: / + if not isinstance(x, int):","status":"survived","killed_by":[]},` +
		`{"id":"m02","line":30,"operator":"return-constant-flip","diff":"- return 0.0 / + return 1.0","status":"killed","killed_by":["boolean-total-one-cent"]}],` +
		`"excluded":[{"line":12,"reason":"JSON has no str subclass","mutants":1,"code":"if type(s) is not str:  # gradegate: no-mutate: JSON has no str subclass"},` +
		`{"line":14,"reason":"","mutants":2,"code":"if type(d) is not dict:  # gradegate: no-mutate"}],"excluded_without_reason":2}`
	if string(got) != want {
		t.Errorf("JSON\n got %s\nwant %s", got, want)
	}

	for name, write := range map[string]func(*bytes.Buffer) error{
		"text":     func(b *bytes.Buffer) error { return r.WriteText(b) },
		"markdown": func(b *bytes.Buffer) error { return r.WriteMarkdown(b) },
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out := b.String()
		s, k := strings.Index(out, "Survived (1)"), strings.Index(out, "Killed (1)")
		if s < 0 || k < 0 || s > k || !strings.Contains(out, "isinstance(x, int)") {
			t.Errorf("%s: want survivors listed before the killed mutants:\n%s", name, out)
		}
		for _, want := range []string{"JSON has no str subclass", "no reason given: counted as survived", "2 excluded without a reason"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: want every exclusion with its reason (%q):\n%s", name, want, out)
			}
		}
	}
}

// TestRunWorkerPool mutation-tests the example grader and the broken
// isinstance grader with real worker pools (unsandboxed: the sandbox has
// its own tests).
func TestRunWorkerPool(t *testing.T) {
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
	for _, dir := range []string{"order-summary", "broken/isinstance"} {
		t.Run(dir, func(t *testing.T) {
			m, cases, src := loadExample(t, dir)
			pools := func(ctx context.Context, s []byte) (grading.Runner, func(), error) {
				p, err := worker.New(ctx, worker.Config{
					Source: s, SourceName: "grader.py", Contract: m.Grader.Contract, Metric: m.Grader.Metric,
					TimeoutSeconds: 10, MemoryMB: m.Grader.MemoryMB, Isolation: m.Grader.Isolation,
					Workers: 1, Python: py, Sandbox: sb,
				})
				if err != nil {
					return nil, nil, err
				}
				return p, func() {
					if err := p.Close(); err != nil {
						t.Errorf("Close: %v", err)
					}
				}, nil
			}
			r, err := Run(context.Background(), src, "grader.py", m, cases, pools, py.Executable)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			var b strings.Builder
			if err := r.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			t.Logf("\n%s", b.String())
			if dir != "order-summary" {
				return
			}
			mu := find(t, r, "type-is-to-isinstance", `if not isinstance(candidate["total_cents"], int):`)
			if mu.Status != StatusKilled || !slices.Contains(mu.KilledBy, "boolean-total-one-cent") {
				t.Errorf("isinstance mutant = %+v, want killed by boolean-total-one-cent", mu)
			}
			if r.Score < 0.5 {
				t.Errorf("score %v of the example grader, want at least 0.5", r.Score)
			}
		})
	}
}

// TestRunParts mutates both parts of a two-part grader: each mutant goes
// to its own part's runner factory (the other part keeps its source), says
// which part it is in, and the ids run on across the parts.
func TestRunParts(t *testing.T) {
	m, cases, srcA := loadExample(t, "order-summary")
	srcB := []byte("def grade(sample, item):\n    if sample:\n        return 1.0\n    return 0.0\n")
	var gotA, gotB [][]byte
	always := perfect(m, cases)
	parts := []Part{
		{Name: "a", File: "grader.py", Src: srcA, NewRunner: func(_ context.Context, s []byte) (grading.Runner, func(), error) {
			gotA = append(gotA, s)
			judge := always
			if !bytes.Equal(s, srcA) {
				// Every mutant of part a gets every canary wrong.
				judge = func([]byte, grading.Task) grading.Outcome {
					return grading.Outcome{Class: grading.ClassOK, Score: fptr(0.5)}
				}
			}
			return fakeRunner{src: s, judge: judge}, func() {}, nil
		}},
		{Name: "b", File: "b.py", Src: srcB, NewRunner: func(_ context.Context, s []byte) (grading.Runner, func(), error) {
			gotB = append(gotB, s)
			return fakeRunner{src: s, judge: always}, func() {}, nil
		}},
	}
	r, err := RunParts(context.Background(), parts, m, cases, python(t))
	if err != nil {
		t.Fatal(err)
	}
	var inA, inB int
	for i, mu := range r.Mutants {
		if want := fmt.Sprintf("m%02d", i+1); mu.ID != want {
			t.Errorf("mutant %d has id %s, want %s", i, mu.ID, want)
		}
		switch mu.Part {
		case "a":
			inA++
			if mu.Status != StatusKilled {
				t.Errorf("%s in part a survived", mu.ID)
			}
		case "b":
			inB++
			if mu.Status != StatusSurvived {
				t.Errorf("%s in part b was killed by %v", mu.ID, mu.KilledBy)
			}
		default:
			t.Errorf("%s names part %q", mu.ID, mu.Part)
		}
	}
	if inA == 0 || inB == 0 || len(r.Mutants) > MaxMutants {
		t.Fatalf("%d mutants in a, %d in b", inA, inB)
	}
	// Part a's factory starts the unmutated grader and a's mutants; part
	// b's gets only b's mutants, never its pinned source.
	if len(gotA) != inA+1 || !bytes.Equal(gotA[0], srcA) || len(gotB) != inB {
		t.Errorf("factory a started %d runners, b %d; want %d and %d", len(gotA), len(gotB), inA+1, inB)
	}
	for _, s := range gotB {
		if bytes.Equal(s, srcB) {
			t.Error("part b's factory was asked for its unmutated source")
		}
	}
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "grader.py, b.py") || !strings.Contains(text.String(), "│ part │") {
		t.Errorf("text does not name the parts:\n%s", text.String())
	}
}
