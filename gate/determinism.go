package gate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// ReasonNondeterministicGrader: a canary or a case graded twice got another
// score or class the second time.
const ReasonNondeterministicGrader = "nondeterministic_grader"

// Determinism is the determinism check of one run: every canary and a
// sample of the cases graded twice, each time by freshly started grader
// processes with their own hash seed, the second time in another order. A
// grader that depends on set order, random, the clock or state kept between
// calls shows up as a case whose score or class differed.
type Determinism struct {
	// Seed chose the case sample, the second order and the hash seeds; the
	// same seed on the same dataset picks the same cases again.
	Seed uint64 `json:"seed"`
	// HashSeeds are the PYTHONHASHSEED of the first and second grading.
	HashSeeds [2]uint32 `json:"hash_seeds"`
	// Sample is gate.determinism.sample; Cases is how many cases were graded
	// twice (fewer when the shard has fewer cases with a sample).
	Sample   int `json:"sample"`
	Canaries int `json:"canaries"`
	Cases    int `json:"cases"`
	// Differed lists every canary and case whose score or class differed.
	Differed []Difference `json:"differed"`
	// DurationMS is the wall time of the check, both gradings included.
	DurationMS float64 `json:"duration_ms"`
	// Status is "pass" when nothing differed, "hold" otherwise.
	Status string `json:"status"`
	// Asked says what was graded twice: "" the Python grader (other
	// processes, another hash seed); "model" a model grader, asked again
	// with the judge cache off; "python+model" a multi grader's Python
	// part and its model sub-graders, asked again with the cache off.
	Asked string `json:"asked,omitempty"`
}

// What a determinism check graded twice, besides a Python grader alone.
const (
	DeterminismModel       = "model"
	DeterminismPythonModel = "python+model"
)

// Difference is one task whose two gradings disagree.
type Difference struct {
	ID     string `json:"id"`
	Canary bool   `json:"canary,omitempty"`
	First  Graded `json:"first"`
	Second Graded `json:"second"`
}

// Graded is what one grading of a task gave.
type Graded struct {
	Class Class    `json:"class"`
	Score *float64 `json:"score,omitempty"`
}

// HashSeedRunner starts a fresh runner whose grader processes use the given
// PYTHONHASHSEED; the func releases it. The determinism check calls it
// from two goroutines at once.
type HashSeedRunner func(ctx context.Context, hashSeed uint32) (Runner, func(), error)

// CheckDeterminism grades every canary of m and up to m.Gate.Determinism.Sample
// of the shard's cases that have a sample twice: each time with a runner
// newRunner starts afresh, so no process and no hash seed is shared, and the
// second time in an order shuffled with seed. seed also picks the sample,
// which is spread over the whole dataset, and the two hash seeds.
//
// Under the batch contract every canary is its own batch, as in the gate,
// and the sampled cases form one batch per grading (shuffled the second
// time). Under the sample contract canaries and cases are graded together.
//
// The error is the tool failing, including a runner that cannot start.
func CheckDeterminism(ctx context.Context, m *manifest.Manifest, cases func() (dataset.Case, bool), shard Shard, seed uint64, newRunner HashSeedRunner) (*Determinism, error) {
	ds, err := NewDeterminismSample(m, shard, seed)
	if err != nil {
		return nil, err
	}
	if cases != nil {
		for {
			c, ok := cases()
			if !ok {
				break
			}
			ds.Observe(c)
		}
	}
	return ds.Check(ctx, newRunner)
}

// DeterminismSample draws the determinism check's sample of cases while
// something else reads the dataset: Observe each row as it streams past
// (the gate run's own pass, through Options.Observe), then Check. The
// dataset is read once, and the sample is the one CheckDeterminism draws
// with the same seed from the same rows.
type DeterminismSample struct {
	m     *manifest.Manifest
	shard Shard
	rng   *rand.Rand
	d     *Determinism
	keep  []picked
	seen  int
}

// picked is a sampled case and its place among the shard's cases.
type picked struct {
	seq  int
	task Task
}

// NewDeterminismSample starts the sample of a determinism check seeded with
// seed; the hash seeds are drawn now.
func NewDeterminismSample(m *manifest.Manifest, shard Shard, seed uint64) (*DeterminismSample, error) {
	if m == nil {
		return nil, errors.New("determinism: no manifest")
	}
	shard, err := shard.normalize()
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	d := &Determinism{Seed: seed, Sample: m.Gate.Determinism.Sample, Differed: []Difference{}}
	// Two distinct seeds, neither 0 (which turns hash randomisation off).
	d.HashSeeds[0] = 1 + rng.Uint32N(1<<32-2)
	d.HashSeeds[1] = 1 + rng.Uint32N(1<<32-3)
	if d.HashSeeds[1] >= d.HashSeeds[0] {
		d.HashSeeds[1]++
	}
	return &DeterminismSample{m: m, shard: shard, rng: rng, d: d}, nil
}

// Observe sees one dataset row, of any shard, in dataset order. It keeps
// up to the sample's size of the shard's cases that have a sample,
// uniformly at random over the dataset (a reservoir, so memory holds the
// sample whatever the dataset's size).
func (s *DeterminismSample) Observe(c dataset.Case) {
	n := s.d.Sample
	if n <= 0 || c.Sample == nil || ShardOf(c.ID, s.shard.Count) != s.shard.Index {
		return
	}
	t := Task{ID: c.ID, Sample: c.Sample, Item: c.ItemForGrader()}
	if len(s.keep) < n {
		s.keep = append(s.keep, picked{s.seen, t})
	} else if j := s.rng.IntN(s.seen + 1); j < n {
		s.keep[j] = picked{s.seen, t}
	}
	s.seen++
}

// Check grades every canary and the sampled cases twice, as
// CheckDeterminism says. A sample is checked once.
func (s *DeterminismSample) Check(ctx context.Context, newRunner HashSeedRunner) (*Determinism, error) {
	if newRunner == nil {
		return nil, errors.New("determinism: no runner")
	}
	m, d, rng := s.m, s.d, s.rng
	canaries := make([]Task, len(m.Canaries))
	for i, c := range m.Canaries {
		canaries[i] = Task{ID: c.Name, Sample: c.Sample, Item: c.Item}
	}
	slices.SortFunc(s.keep, func(a, b picked) int { return a.seq - b.seq })
	sampled := make([]Task, len(s.keep))
	for i, p := range s.keep {
		sampled[i] = p.task
	}
	d.Canaries, d.Cases = len(canaries), len(sampled)

	// The second order: a permutation of every task, canaries first.
	tasks := append(slices.Clone(canaries), sampled...)
	order := rng.Perm(len(tasks))
	batch := m.Grader.Contract == "batch"

	// The two gradings share nothing but the tasks, so they run at once:
	// each in its own fresh runner, started while the other starts.
	var first, second []Outcome
	var err1, err2 error
	var both sync.WaitGroup
	both.Go(func() {
		first, err1 = gradeOnce(ctx, newRunner, d.HashSeeds[0], tasks, identity(len(tasks)), len(canaries), batch)
	})
	second, err2 = gradeOnce(ctx, newRunner, d.HashSeeds[1], tasks, order, len(canaries), batch)
	both.Wait()
	if err1 != nil {
		return nil, fmt.Errorf("determinism check, first grading: %w", err1)
	}
	if err2 != nil {
		return nil, fmt.Errorf("determinism check, second grading: %w", err2)
	}
	for i, t := range tasks {
		a, b := first[i], second[i]
		if same(a, b) {
			continue
		}
		d.Differed = append(d.Differed, Difference{ID: t.ID, Canary: i < len(canaries), First: gradedAs(a), Second: gradedAs(b)})
	}
	d.Status = StatusPass
	if len(d.Differed) > 0 {
		d.Status = VerdictHold
	}
	return d, nil
}

// gradeOnce grades tasks in the given order with a fresh runner and returns
// the outcomes in task order. The first nCanaries tasks are canaries.
func gradeOnce(ctx context.Context, newRunner HashSeedRunner, hashSeed uint32, tasks []Task, order []int, nCanaries int, batch bool) ([]Outcome, error) {
	r, release, err := newRunner(ctx, hashSeed)
	if err != nil {
		return nil, err
	}
	defer release()
	out := make([]Outcome, len(tasks))
	if !batch {
		ordered := make([]Task, len(order))
		for i, k := range order {
			ordered[i] = tasks[k]
		}
		got, err := GradeTasks(ctx, r, ordered)
		if err != nil {
			return nil, err
		}
		for i, k := range order {
			out[k] = got[i]
		}
		return out, nil
	}
	var caseOrder []int
	for _, k := range order {
		if k >= nCanaries {
			caseOrder = append(caseOrder, k)
			continue
		}
		got, err := GradeTasks(ctx, r, []Task{tasks[k]})
		if err != nil {
			return nil, fmt.Errorf("canary %s: %w", tasks[k].ID, err)
		}
		out[k] = got[0]
	}
	batchTasks := make([]Task, len(caseOrder))
	for i, k := range caseOrder {
		batchTasks[i] = tasks[k]
	}
	got, err := GradeTasks(ctx, r, batchTasks)
	if err != nil {
		return nil, err
	}
	for i, k := range caseOrder {
		out[k] = got[i]
	}
	return out, nil
}

func identity(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// same reports whether two gradings of one task agree: the same class and,
// when ok, the same score.
func same(a, b Outcome) bool {
	if a.Class != b.Class {
		return false
	}
	if a.Class != ClassOK {
		return true
	}
	return a.Score != nil && b.Score != nil && *a.Score == *b.Score
}

// gradedAs is how an outcome is recorded in a difference.
func gradedAs(o Outcome) Graded {
	g := Graded{Class: o.Class}
	if o.Class == ClassOK {
		g.Score = o.Score
	}
	return g
}

// maxNamed is how many differing tasks a reason's message names.
const maxNamed = 10

// determinismReason is the nondeterministic_grader hold of a determinism
// check, naming what differed; nil when nothing did or no check ran.
func determinismReason(d *Determinism) *Reason {
	if d == nil || len(d.Differed) == 0 {
		return nil
	}
	var names []string
	var ids []string
	for _, x := range d.Differed {
		if !x.Canary {
			ids = append(ids, x.ID)
		}
		if len(names) < maxNamed {
			names = append(names, describeDifference(x))
		}
	}
	how := fmt.Sprintf("other processes, PYTHONHASHSEED %d then %d, another order", d.HashSeeds[0], d.HashSeeds[1])
	switch d.Asked {
	case DeterminismModel:
		how = "the model asked again with the judge cache off, another order"
	case DeterminismPythonModel:
		how = fmt.Sprintf("other processes, PYTHONHASHSEED %d then %d, the model sub-graders asked again with the judge cache off, another order", d.HashSeeds[0], d.HashSeeds[1])
	}
	msg := fmt.Sprintf("%d of %d canaries and cases graded twice (%s) differed: %s",
		len(d.Differed), d.Canaries+d.Cases, how, strings.Join(names, "; "))
	if n := len(d.Differed) - len(names); n > 0 {
		msg += fmt.Sprintf("; and %d more", n)
	}
	return &Reason{Code: ReasonNondeterministicGrader, CaseIDs: ids, Message: msg}
}

func describeDifference(x Difference) string {
	kind := "case"
	if x.Canary {
		kind = "canary"
	}
	return fmt.Sprintf("%s %s: %s then %s", kind, x.ID, describeGraded(x.First), describeGraded(x.Second))
}

func describeGraded(g Graded) string {
	if g.Class == ClassOK && g.Score != nil {
		return fmt.Sprintf("%g", *g.Score)
	}
	return string(g.Class)
}

// determinism holds when the determinism check saw a difference.
func (d *decider) determinism() {
	if r := determinismReason(d.ev.Determinism); r != nil {
		d.hold(*r)
	}
}

// AddDeterminism records a determinism check that ran after the results
// were assembled, and holds the verdict when it saw a difference, with the
// same rule Decide applies to Evidence.Determinism.
func (r *Results) AddDeterminism(d *Determinism) {
	r.Determinism = d
	if reason := determinismReason(d); reason != nil {
		r.Reasons = append(r.Reasons, *reason)
		sortReasons(r.Reasons)
		r.Verdict = VerdictHold
	}
}

// mergeDeterminism combines the shards' determinism checks: every
// difference any shard saw, and the counts summed (the canaries once).
// nil when no shard ran one.
func mergeDeterminism(parts []*Results) *Determinism {
	var out *Determinism
	for _, p := range parts {
		d := p.Determinism
		if d == nil {
			continue
		}
		if out == nil {
			c := *d
			c.Differed = slices.Clone(d.Differed)
			out = &c
			continue
		}
		out.Cases += d.Cases
		out.DurationMS += d.DurationMS
		for _, x := range d.Differed {
			if x.Canary && slices.ContainsFunc(out.Differed, func(y Difference) bool { return y.Canary && y.ID == x.ID }) {
				continue
			}
			out.Differed = append(out.Differed, x)
		}
	}
	if out != nil && len(out.Differed) > 0 {
		out.Status = VerdictHold
	}
	return out
}
