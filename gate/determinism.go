package gate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// HashSeedRunner starts a fresh runner whose grader processes use the given
// PYTHONHASHSEED; the func releases it. The determinism check calls it
// from two goroutines at once.
type HashSeedRunner func(ctx context.Context, hashSeed uint32) (grading.Runner, func(), error)

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
func CheckDeterminism(ctx context.Context, m *manifest.Manifest, cases func() (dataset.Case, bool), shard shard.Shard, seed uint64, newRunner HashSeedRunner) (*results.Determinism, error) {
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
	shard shard.Shard
	rng   *rand.Rand
	d     *results.Determinism
	keep  []picked
	seen  int

	// ran holds the main grading's outcome of each case in keep, by id
	// (Graded), so the check compares its two gradings with the run's too.
	mu   sync.Mutex
	kept map[string]bool
	ran  map[string]grading.Outcome
	// sent are the written canaries as the run sent them, and sentRan
	// their outcomes there (SentCanaries); nil: graded as written.
	sent    []grading.Task
	sentRan []grading.Outcome
}

// SentCanaries keeps the written canaries as the run sent them (built on
// a dataset row, with an id like the rows') and their outcomes: the check
// grades those same bytes, so a canary looks in its processes as it did in
// the run's, and compares each with its outcome in the run.
func (s *DeterminismSample) SentCanaries(sent []grading.Task, outcomes []grading.Outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(sent) == len(s.m.Canaries) && len(outcomes) == len(sent) {
		s.sent, s.sentRan = sent, outcomes
	}
}

// picked is a sampled case and its place among the shard's cases.
type picked struct {
	seq  int
	task grading.Task
}

// NewDeterminismSample starts the sample of a determinism check seeded with
// seed; the hash seeds are drawn now.
func NewDeterminismSample(m *manifest.Manifest, shard shard.Shard, seed uint64) (*DeterminismSample, error) {
	if m == nil {
		return nil, errors.New("determinism: no manifest")
	}
	shard, err := shard.Normalize()
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	d := &results.Determinism{Seed: seed, Sample: m.Gate.Determinism.Sample, Differed: []results.Difference{}}
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
	if n <= 0 || c.Sample == nil || c.Unreadable || shard.ShardOf(c.ID, s.shard.Count) != s.shard.Index {
		return
	}
	t := grading.Task{ID: c.ID, Sample: c.Sample, Item: c.ItemForGrader()}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ran == nil {
		s.kept, s.ran = map[string]bool{}, map[string]grading.Outcome{}
	}
	if len(s.keep) < n {
		s.keep = append(s.keep, picked{s.seen, t})
		s.kept[t.ID] = true
	} else if j := s.rng.IntN(s.seen + 1); j < n {
		delete(s.ran, s.keep[j].task.ID)
		delete(s.kept, s.keep[j].task.ID)
		s.keep[j] = picked{s.seen, t}
		s.kept[t.ID] = true
	}
	s.seen++
}

// Graded sees the main grading's outcome of a case (the run's
// Options.ObserveOutcome); the check compares the sampled cases' gradings
// with it. A case Observe did not keep (or no longer keeps) is ignored.
func (s *DeterminismSample) Graded(id string, o grading.Outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kept[id] {
		s.ran[id] = grading.Outcome{Class: o.Class, Score: o.Score}
	}
}

// Check grades every canary and the sampled cases twice, as
// CheckDeterminism says. A sample is checked once.
func (s *DeterminismSample) Check(ctx context.Context, newRunner HashSeedRunner) (*results.Determinism, error) {
	if newRunner == nil {
		return nil, errors.New("determinism: no runner")
	}
	m, d, rng := s.m, s.d, s.rng
	s.mu.Lock()
	sent, sentRan := s.sent, s.sentRan
	s.mu.Unlock()
	canaries := make([]grading.Task, len(m.Canaries))
	for i, c := range m.Canaries {
		canaries[i] = grading.Task{ID: c.Name, Sample: c.Sample, Item: c.Item}
		if sent != nil {
			canaries[i] = sent[i]
		}
	}
	slices.SortFunc(s.keep, func(a, b picked) int { return a.seq - b.seq })
	sampled := make([]grading.Task, len(s.keep))
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
	var first, second []grading.Outcome
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
	flipped := 0
	for i, t := range tasks {
		a, b := first[i], second[i]
		if i >= len(canaries) && statusOf(a, m.Grader) != statusOf(b, m.Grader) {
			flipped++
		}
		// A sampled case is compared with the main grading too: a grader
		// that behaves alike in both check passes and otherwise in the run
		// differs from the run.
		var run *results.Graded
		id := t.ID
		if i < len(canaries) {
			id = m.Canaries[i].Name
			if sentRan != nil {
				if o := sentRan[i]; !same(o, a) || !same(o, b) {
					g := gradedAs(o)
					run = &g
				}
			}
		} else {
			if o, ok := s.ran[t.ID]; ok {
				d.ComparedWithRun++
				if !same(o, a) || !same(o, b) {
					g := gradedAs(o)
					run = &g
				}
			}
		}
		if same(a, b) && run == nil {
			continue
		}
		d.Differed = append(d.Differed, results.Difference{ID: id, Canary: i < len(canaries), First: gradedAs(a), Second: gradedAs(b), Run: run})
	}
	d.FlipRate = results.NewFlipRate(flipped, len(sampled), m.Gate.Confidence.Level)
	d.Status = results.StatusPass
	if len(d.Differed) > 0 {
		d.Status = results.VerdictHold
	}
	return d, nil
}

// statusOf is the status a grading gives a case: error without a score,
// otherwise pass or fail at the threshold.
func statusOf(o grading.Outcome, g manifest.Grader) string {
	if o.Class != grading.ClassOK || o.Score == nil {
		return results.StatusError
	}
	if *o.Score >= g.PassThreshold {
		return results.StatusPass
	}
	return results.StatusFail
}

// gradeOnce grades tasks in the given order with a fresh runner and returns
// the outcomes in task order. The first nCanaries tasks are canaries.
func gradeOnce(ctx context.Context, newRunner HashSeedRunner, hashSeed uint32, tasks []grading.Task, order []int, nCanaries int, batch bool) ([]grading.Outcome, error) {
	r, release, err := newRunner(ctx, hashSeed)
	if err != nil {
		return nil, err
	}
	defer release()
	out := make([]grading.Outcome, len(tasks))
	if !batch {
		ordered := make([]grading.Task, len(order))
		for i, k := range order {
			ordered[i] = tasks[k]
		}
		got, err := grading.GradeTasks(ctx, r, ordered)
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
		got, err := grading.GradeTasks(ctx, r, []grading.Task{tasks[k]})
		if err != nil {
			return nil, fmt.Errorf("canary %s: %w", tasks[k].ID, err)
		}
		out[k] = got[0]
	}
	batchTasks := make([]grading.Task, len(caseOrder))
	for i, k := range caseOrder {
		batchTasks[i] = tasks[k]
	}
	got, err := grading.GradeTasks(ctx, r, batchTasks)
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
func same(a, b grading.Outcome) bool {
	if a.Class != b.Class {
		return false
	}
	if a.Class != grading.ClassOK {
		return true
	}
	return a.Score != nil && b.Score != nil && *a.Score == *b.Score
}

// gradedAs is how an outcome is recorded in a difference.
func gradedAs(o grading.Outcome) results.Graded {
	g := results.Graded{Class: o.Class}
	if o.Class == grading.ClassOK {
		g.Score = o.Score
	}
	return g
}
