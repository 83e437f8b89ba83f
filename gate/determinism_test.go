package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/gate/verdict"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// detSuite is a manifest with three canaries and n cases with samples, plus
// one case without a sample (never graded).
func detSuite(n, sample int, contract string) (*manifest.Manifest, []dataset.Case) {
	one, zero := 1.0, 0.0
	m := &manifest.Manifest{
		Grader: manifest.Grader{PassThreshold: 1, Contract: contract},
		Canaries: []manifest.Canary{
			{Name: "pos", Sample: json.RawMessage(`{}`), Item: json.RawMessage(`{}`), Expect: &one},
			{Name: "neg", Sample: json.RawMessage(`{}`), Item: json.RawMessage(`{}`), Expect: &zero},
			{Name: "corrupt", Sample: json.RawMessage(`{}`), Item: json.RawMessage(`{}`), ExpectError: true},
		},
		Gate: manifest.Gate{Determinism: manifest.Determinism{Sample: sample}},
	}
	var cases []dataset.Case
	for i := range n {
		cases = append(cases, dataset.Case{ID: fmt.Sprintf("c%03d", i), Sample: json.RawMessage(`{}`), Item: json.RawMessage(`{}`)})
	}
	cases = append(cases, dataset.Case{ID: "no-sample", Item: json.RawMessage(`{}`)})
	return m, cases
}

// seededRunners starts a fakeRunner per grading; judge may make an outcome
// depend on the hash seed, the way set order does in Python.
// The two gradings start their runners at once.
type seededRunners struct {
	judge  func(hashSeed uint32, id string) (grading.Outcome, bool)
	mu     sync.Mutex
	bySeed map[uint32]*fakeRunner
	open   int
}

func (s *seededRunners) start(_ context.Context, hashSeed uint32) (grading.Runner, func(), error) {
	r := &fakeRunner{outcomes: map[string]grading.Outcome{}}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bySeed == nil {
		s.bySeed = map[uint32]*fakeRunner{}
	}
	s.bySeed[hashSeed] = r
	s.open++
	if s.judge != nil {
		for _, id := range []string{"pos", "neg", "corrupt"} {
			if o, ok := s.judge(hashSeed, id); ok {
				r.outcomes[id] = o
			}
		}
		for i := range 1000 {
			id := fmt.Sprintf("c%03d", i)
			if o, ok := s.judge(hashSeed, id); ok {
				r.outcomes[id] = o
			}
		}
	}
	return r, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.open--
	}, nil
}

// ids is every task id a runner was asked to grade, in order.
func (f *fakeRunner) ids() []string {
	var out []string
	for _, c := range f.calls {
		out = append(out, c...)
	}
	return out
}

func TestCheckDeterminism(t *testing.T) {
	tests := []struct {
		name      string
		cases     int
		sample    int
		contract  string
		judge     func(hashSeed uint32, id string) (grading.Outcome, bool)
		wantCases int
		wantDiff  []string
	}{
		{name: "a deterministic grader passes", cases: 50, sample: 20, wantCases: 20},
		{name: "sample 0 checks the canaries only", cases: 50, sample: 0, wantCases: 0},
		{name: "a sample larger than the dataset takes every case", cases: 5, sample: 200, wantCases: 5},
		{
			name: "a score that follows the hash seed differs", cases: 10, sample: 200, wantCases: 10,
			judge: func(seed uint32, id string) (grading.Outcome, bool) {
				if id == "c003" {
					return scored(float64(seed % 2)), true
				}
				return grading.Outcome{}, false
			},
			wantDiff: []string{"c003"},
		},
		{
			name: "a canary whose class changes differs", cases: 3, sample: 200, wantCases: 3,
			judge: func(seed uint32, id string) (grading.Outcome, bool) {
				if id == "corrupt" && seed%2 == 0 {
					return scored(0), true
				}
				if id == "corrupt" {
					return raised("KeyError", "fixture", 3), true
				}
				return grading.Outcome{}, false
			},
			wantDiff: []string{"corrupt"},
		},
		{name: "batch contract", cases: 10, sample: 4, contract: "batch", wantCases: 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, cases := detSuite(tc.cases, tc.sample, tc.contract)
			// Pick a seed whose two hash seeds differ in parity, so a judge
			// that follows the seed's parity changes its answer.
			var seed uint64
			for ; ; seed++ {
				s := &seededRunners{}
				d, err := CheckDeterminism(context.Background(), m, iterCases(cases), shard.Shard{}, seed, s.start)
				if err != nil {
					t.Fatal(err)
				}
				if d.HashSeeds[0]%2 != d.HashSeeds[1]%2 {
					break
				}
			}
			s := &seededRunners{judge: tc.judge}
			d, err := CheckDeterminism(context.Background(), m, iterCases(cases), shard.Shard{}, seed, s.start)
			if err != nil {
				t.Fatal(err)
			}
			if d.Seed != seed || d.Canaries != 3 || d.Cases != tc.wantCases || d.Sample != tc.sample {
				t.Errorf("seed %d canaries %d cases %d sample %d; want %d, 3, %d, %d", d.Seed, d.Canaries, d.Cases, d.Sample, seed, tc.wantCases, tc.sample)
			}
			// Two fresh runners, two distinct non-zero hash seeds, both released.
			if len(s.bySeed) != 2 || s.open != 0 || s.bySeed[d.HashSeeds[0]] == nil || s.bySeed[d.HashSeeds[1]] == nil || d.HashSeeds[0] == 0 || d.HashSeeds[1] == 0 {
				t.Errorf("runners %d open %d hash seeds %v", len(s.bySeed), s.open, d.HashSeeds)
			}
			first, second := s.bySeed[d.HashSeeds[0]].ids(), s.bySeed[d.HashSeeds[1]].ids()
			if len(first) != 3+tc.wantCases || slices.Contains(first, "no-sample") {
				t.Errorf("first grading graded %v", first)
			}
			sortedFirst, sortedSecond := slices.Sorted(slices.Values(first)), slices.Sorted(slices.Values(second))
			if !slices.Equal(sortedFirst, sortedSecond) {
				t.Errorf("the gradings graded different tasks:\n%v\n%v", first, second)
			}
			if len(first) > 3 && slices.Equal(first, second) {
				t.Errorf("the second grading kept the first order %v", first)
			}
			if tc.contract == "batch" {
				for _, r := range s.bySeed {
					for _, call := range r.calls {
						if slices.ContainsFunc(call, func(id string) bool { return id == "pos" || id == "neg" || id == "corrupt" }) && len(call) != 1 {
							t.Errorf("a canary shares a batch: %v", call)
						}
					}
				}
			}
			var got []string
			for _, x := range d.Differed {
				got = append(got, x.ID)
			}
			if !slices.Equal(got, tc.wantDiff) {
				t.Errorf("differed %v, want %v", got, tc.wantDiff)
			}
			// The cases whose status moved, of those graded twice (canaries
			// apart), with their interval.
			flips := 0
			for _, x := range d.Differed {
				if !x.Canary && statusOfGraded(x.First, m.Grader) != statusOfGraded(x.Second, m.Grader) {
					flips++
				}
			}
			switch f := d.FlipRate; {
			case tc.wantCases == 0 && f != nil:
				t.Errorf("flip rate %+v with no case graded twice", f)
			case tc.wantCases > 0 && (f == nil || f.Cases != tc.wantCases || f.Flipped != flips || f.CI.Hi <= 0):
				t.Errorf("flip rate %+v, want %d of %d with an interval", f, flips, tc.wantCases)
			}
			r := verdict.DeterminismReason(d)
			if (r != nil) != (len(tc.wantDiff) > 0) || (d.Status == results.VerdictHold) != (len(tc.wantDiff) > 0) {
				t.Fatalf("reason %+v status %s for differences %v", r, d.Status, tc.wantDiff)
			}
			if r != nil {
				if r.Code != results.ReasonNondeterministicGrader || !strings.Contains(r.Message, tc.wantDiff[0]) {
					t.Errorf("reason %+v", r)
				}
				v := verdict.Decide(m.Gate, verdict.Evidence{Canaries: []results.CanaryResult{}, CanariesOnly: true, Determinism: d})
				if v.Verdict != results.VerdictHold || !slices.ContainsFunc(v.Reasons, func(x results.Reason) bool { return x.Code == results.ReasonNondeterministicGrader }) {
					t.Errorf("Decide with a nondeterministic grader: %s %+v", v.Verdict, v.Reasons)
				}
			}
		})
	}
}

func TestDeterminismSampleIsSeeded(t *testing.T) {
	m, cases := detSuite(500, 30, "")
	pick := func(seed uint64) []string {
		s := &seededRunners{}
		d, err := CheckDeterminism(context.Background(), m, iterCases(cases), shard.Shard{}, seed, s.start)
		if err != nil {
			t.Fatal(err)
		}
		return s.bySeed[d.HashSeeds[0]].ids()
	}
	a, again, b := pick(7), pick(7), pick(8)
	if !slices.Equal(a, again) {
		t.Errorf("seed 7 picked %v, then %v", a, again)
	}
	if slices.Equal(a, b) {
		t.Errorf("seeds 7 and 8 picked the same cases %v", a)
	}
	// Spread over the dataset, not its first rows.
	if last := a[len(a)-1]; last < "c250" {
		t.Errorf("the sample ends at %s of c000..c499", last)
	}
}

func TestDeterminismShard(t *testing.T) {
	m, cases := detSuite(100, 1000, "")
	s := &seededRunners{}
	sh := shard.Shard{Index: 2, Count: 3}
	d, err := CheckDeterminism(context.Background(), m, iterCases(cases), sh, 1, s.start)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range s.bySeed[d.HashSeeds[0]].ids()[3:] {
		if shard.ShardOf(id, 3) != 2 {
			t.Errorf("case %s is not in sh 2/3", id)
		}
	}
	if d.Cases == 0 || d.Cases == 100 {
		t.Errorf("sh 2/3 graded %d of 100 cases twice", d.Cases)
	}
}

func TestDecideAndMergeDeterminism(t *testing.T) {
	one := 1.0
	diff := results.Difference{ID: "c1", First: results.Graded{Class: grading.ClassOK, Score: &one}, Second: results.Graded{Class: grading.ClassTimeout}}
	canary := results.Difference{ID: "pos", Canary: true, First: results.Graded{Class: grading.ClassOK, Score: &one}, Second: results.Graded{Class: grading.ClassOK, Score: new(float64)}}

	s := newSuite()
	s.m.Gate.MaxOmitted = 1
	res := decide(t, s, func(ev *verdict.Evidence) {
		ev.Determinism = &results.Determinism{Canaries: 3, Cases: 2, Differed: []results.Difference{}, Status: results.StatusPass}
	})
	if res.Verdict != results.VerdictPass || res.Determinism == nil {
		t.Errorf("a clean check: verdict %s, block %v", res.Verdict, res.Determinism)
	}
	res = decide(t, s, func(ev *verdict.Evidence) {
		ev.Determinism = &results.Determinism{Canaries: 3, Cases: 2, Differed: []results.Difference{diff}, Status: results.VerdictHold}
	})
	if res.Verdict != results.VerdictHold || len(res.Reasons) != 1 || !slices.Equal(res.Reasons[0].CaseIDs, []string{"c1"}) ||
		!strings.Contains(res.Reasons[0].Message, "case c1: 1 then timeout") {
		t.Errorf("a check with a difference: %s %+v", res.Verdict, res.Reasons)
	}

	parts := []*results.Results{
		{Determinism: &results.Determinism{Canaries: 3, Cases: 2, Differed: []results.Difference{canary}, FlipRate: results.NewFlipRate(0, 2, 0.95)}},
		{Determinism: &results.Determinism{Canaries: 3, Cases: 4, Differed: []results.Difference{canary, diff}, FlipRate: results.NewFlipRate(1, 4, 0.95)}},
		{},
	}
	got := mergeDeterminism(parts, 0.95)
	if f := got.FlipRate; f == nil || *f != *results.NewFlipRate(1, 6, 0.95) {
		t.Errorf("merged flip rate %+v, want 1 of 6 recomputed over the union", f)
	}
	if got == nil || got.Cases != 6 || got.Canaries != 3 || len(got.Differed) != 2 || got.Status != results.VerdictHold {
		t.Errorf("merged %+v", got)
	}
	if mergeDeterminism([]*results.Results{{}, {}}, 0.95) != nil {
		t.Error("merging shards without a check made one up")
	}
}

// TestMergeKeepsDeterminism checks that a difference one shard's check saw
// holds the merged verdict, and that a clean check stays a pass.
func TestMergeKeepsDeterminism(t *testing.T) {
	s := newSuite()
	s.m.Gate.MaxOmitted = 1
	one := 1.0
	for _, differ := range []bool{false, true} {
		parts := runShards(t, s, 2, sameOutcomes)
		base, err := Merge(s.m, parts)
		if err != nil {
			t.Fatal(err)
		}
		// Each shard's determinism check is evidence of its own run.
		parts = nil
		for k := 1; k <= 2; k++ {
			d := &results.Determinism{Canaries: 3, Cases: 2, Differed: []results.Difference{}, Status: results.StatusPass}
			if differ && k == 2 {
				d.Differed = []results.Difference{{ID: "c9", First: results.Graded{Class: grading.ClassOK, Score: &one}, Second: results.Graded{Class: grading.ClassTimeout}}}
				d.Status = results.VerdictHold
			}
			r := &fakeRunner{outcomes: sameOutcomes(k), sandbox: grading.Sandbox{UID: 60001, Seccomp: true, LandlockABI: 7, Rlimits: true}}
			g, err := gradeRun(context.Background(), s.inputs(), r, Options{Shard: shard.Shard{Index: k, Count: 2}, Version: "1.2.3", CanarySeed: testSeed})
			if err != nil {
				t.Fatal(err)
			}
			g.ev.Determinism = d
			parts = append(parts, roundTrip(t, g.document()))
		}
		merged, err := Merge(s.m, parts)
		if err != nil {
			t.Fatal(err)
		}
		held := slices.ContainsFunc(merged.Reasons, func(r results.Reason) bool { return r.Code == results.ReasonNondeterministicGrader })
		if merged.Determinism == nil || merged.Determinism.Cases != 4 || held != differ || (merged.Verdict == results.VerdictHold) != (differ || base.Verdict == results.VerdictHold) {
			t.Errorf("differ %v: verdict %s reasons %+v determinism %+v", differ, merged.Verdict, merged.Reasons, merged.Determinism)
		}
	}
}

// BenchmarkCheckDeterminism100k measures what the check adds beyond grading
// at 100k cases: picking the sample of 200 and ordering the two passes, with
// runners that grade instantly.
//
//	go test -run '^$' -bench CheckDeterminism -benchtime 20x ./gate/
func BenchmarkCheckDeterminism100k(b *testing.B) {
	m, cases := detSuite(100_000, 200, "")
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		s := &seededRunners{}
		if _, err := CheckDeterminism(ctx, m, iterCases(cases), shard.Shard{}, uint64(i), s.start); err != nil {
			b.Fatal(err)
		}
	}
}

// iterCases yields cases one at a time, as the dataset reader does.
func iterCases(cases []dataset.Case) func() (dataset.Case, bool) {
	i := 0
	return func() (dataset.Case, bool) {
		if i >= len(cases) {
			return dataset.Case{}, false
		}
		i++
		return cases[i-1], true
	}
}

// The sample a run's own pass draws (Options.Observe) is the sample
// CheckDeterminism draws from a second pass with the same seed, for every
// shard, and it spreads over the whole dataset.
func TestDeterminismSampleFromRun(t *testing.T) {
	const n = 3000
	for _, shard := range []shard.Shard{{}, {Index: 2, Count: 3}} {
		s := bigSuite(n)
		s.m.Gate.Determinism.Sample = 50
		during, err := NewDeterminismSample(s.m, shard, 7)
		if err != nil {
			t.Fatal(err)
		}
		opts := Options{CanarySeed: testSeed, Shard: shard, Observe: during.Observe}
		if _, err := Run(context.Background(), s.inputs(), &fakeRunner{outcomes: bigOutcomes(n)}, opts); err != nil {
			t.Fatal(err)
		}
		again, err := NewDeterminismSample(s.m, shard, 7)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range bigSuite(n).set.Cases {
			again.Observe(c)
		}
		ids := func(ds *DeterminismSample) []string {
			var out []string
			for _, p := range ds.keep {
				out = append(out, p.task.ID)
			}
			return out
		}
		got, want := ids(during), ids(again)
		if len(got) != 50 || !slices.Equal(got, want) {
			t.Errorf("shard %+v: sampled during the run %v, from a second pass %v", shard, got, want)
		}
		if during.d.HashSeeds != again.d.HashSeeds {
			t.Errorf("shard %+v: hash seeds %v and %v", shard, during.d.HashSeeds, again.d.HashSeeds)
		}
		if slices.Max(got) < "c-02000" {
			t.Errorf("shard %+v: the sample %v does not reach the end of the dataset", shard, got)
		}
	}
}

func statusOfGraded(g results.Graded, gr manifest.Grader) string {
	return statusOf(grading.Outcome{Class: g.Class, Score: g.Score}, gr)
}

// TestDeterminismComparedWithRun: the check's two gradings are compared
// with the main grading's outcome of each sampled case: a grader that
// behaves alike in both check passes and otherwise in the run differs.
func TestDeterminismComparedWithRun(t *testing.T) {
	m, cases := detSuite(10, 200, "")
	tests := []struct {
		name string
		// run is the main grading's score of each case (the check's
		// runners give every task 1).
		run      func(id string) float64
		wantDiff []string
	}{
		{name: "the run agrees", run: func(string) float64 { return 1 }},
		{name: "the run gave another score", run: func(id string) float64 {
			if id == "c004" || id == "c007" {
				return 0
			}
			return 1
		}, wantDiff: []string{"c004", "c007"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := NewDeterminismSample(m, shard.Shard{}, 7)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cases {
				ds.Observe(c)
				if c.Sample != nil {
					ds.Graded(c.ID, scored(tc.run(c.ID)))
				}
			}
			s := &seededRunners{}
			d, err := ds.Check(context.Background(), s.start)
			if err != nil {
				t.Fatal(err)
			}
			if d.ComparedWithRun != 10 {
				t.Errorf("compared with the run: %d, want every sampled case (10)", d.ComparedWithRun)
			}
			var got []string
			for _, x := range d.Differed {
				got = append(got, x.ID)
				if x.Run == nil || x.Run.Score == nil || *x.Run.Score != 0 {
					t.Errorf("%s: run %+v, want the run's score 0", x.ID, x.Run)
				}
			}
			if !slices.Equal(got, tc.wantDiff) {
				t.Errorf("differed %v, want %v", got, tc.wantDiff)
			}
			r := verdict.DeterminismReason(d)
			if (r != nil) != (len(tc.wantDiff) > 0) {
				t.Fatalf("reason %+v", r)
			}
			if r != nil && !strings.Contains(r.Message, "0 in the run, then 1 and 1") {
				t.Errorf("reason message %q does not say what the run gave", r.Message)
			}
		})
	}
}

// capturingRunner grades every task 1 and keeps the tasks it was sent.
type capturingRunner struct {
	mu    sync.Mutex
	tasks []grading.Task
}

func (c *capturingRunner) Grade(_ context.Context, tasks []grading.Task) ([]grading.Outcome, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tasks = append(c.tasks, tasks...)
	out := make([]grading.Outcome, len(tasks))
	for i := range out {
		out[i] = scored(1)
	}
	return out, nil
}

func (c *capturingRunner) Sandbox() grading.Sandbox { return grading.Sandbox{} }

// The check grades the written canaries as the run sent them (built on a
// row, with a row's id) and compares each with its outcome in the run, so
// a canary cannot tell the check's processes from the run's by its shape.
func TestDeterminismSendsCanariesAsTheRunDid(t *testing.T) {
	m, cases := detSuite(4, 20, "")
	sent := make([]grading.Task, len(m.Canaries))
	ran := make([]grading.Outcome, len(m.Canaries))
	for i, c := range m.Canaries {
		sent[i] = grading.Task{ID: fmt.Sprintf("c%03d", 900+i), Sample: c.Sample,
			Item: json.RawMessage(fmt.Sprintf(`{"case_id":"c%03d","request":"a row's text"}`, 900+i))}
		ran[i] = scored(1)
	}
	ran[1] = scored(0) // the run gave this canary another score than the check will
	ds, err := NewDeterminismSample(m, shard.Shard{}, 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		ds.Observe(c)
		if c.Sample != nil {
			ds.Graded(c.ID, scored(1))
		}
	}
	ds.SentCanaries(sent, ran)
	var runners []*capturingRunner
	var mu sync.Mutex
	d, err := ds.Check(context.Background(), func(context.Context, uint32) (grading.Runner, func(), error) {
		r := &capturingRunner{}
		mu.Lock()
		runners = append(runners, r)
		mu.Unlock()
		return r, func() {}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runners {
		for _, want := range sent {
			if !slices.ContainsFunc(r.tasks, func(got grading.Task) bool {
				return got.ID == want.ID && string(got.Item) == string(want.Item) && string(got.Sample) == string(want.Sample)
			}) {
				t.Errorf("the check did not send canary %s as the run did; it sent %v", want.ID, r.tasks)
			}
		}
	}
	if len(d.Differed) != 1 || d.Differed[0].ID != m.Canaries[1].Name || !d.Differed[0].Canary || d.Differed[0].Run == nil {
		t.Fatalf("differed %+v, want canary %s, named, with its run outcome", d.Differed, m.Canaries[1].Name)
	}
}

// A row the reader refused as Python would (invalid UTF-8, an integer
// past int()'s digits) is never sent to a grader: not in the run, and not
// in the check's sample either, where it stopped the whole run as unusable
// input instead of holding on dataset_invalid.
func TestDeterminismSkipsUnreadableRows(t *testing.T) {
	m, cases := detSuite(6, 20, "")
	for i := range cases {
		cases[i].Unreadable = i%2 == 0
	}
	ds, err := NewDeterminismSample(m, shard.Shard{}, 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		ds.Observe(c)
		if c.Sample != nil && !c.Unreadable {
			ds.Graded(c.ID, scored(1))
		}
	}
	var runners []*capturingRunner
	var mu sync.Mutex
	if _, err := ds.Check(context.Background(), func(context.Context, uint32) (grading.Runner, func(), error) {
		r := &capturingRunner{}
		mu.Lock()
		runners = append(runners, r)
		mu.Unlock()
		return r, func() {}, nil
	}); err != nil {
		t.Fatal(err)
	}
	sent := 0
	for _, r := range runners {
		for _, task := range r.tasks {
			for _, c := range cases {
				if c.ID == task.ID && c.Unreadable {
					t.Errorf("the check sent unreadable row %s", c.ID)
				}
			}
			sent++
		}
	}
	if sent == 0 {
		t.Error("the check sent nothing")
	}
}
