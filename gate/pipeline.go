package gate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/gradegate/gradegate/gate/blind"
	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/gate/verdict"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// CaseSource is the dataset as a run reads it: rows one at a time, in file
// order, then what the whole file showed. *dataset.Reader is one.
type CaseSource interface {
	Next() (dataset.Case, bool)
	// Close reads what is left and returns the summary, or every input
	// error of the dataset at once.
	Close() (*dataset.Summary, error)
}

// failer is a CaseSource that can tell early that Close will fail, so that
// grading stops instead of going on with a dataset that cannot be used.
type failer interface{ Failed() bool }

// setSource streams a dataset already in memory.
type setSource struct {
	set *dataset.Set
	i   int
}

func (s *setSource) Next() (dataset.Case, bool) {
	if s.i >= len(s.set.Cases) {
		return dataset.Case{}, false
	}
	s.i++
	return s.set.Cases[s.i-1], true
}

// Seen reports whether a row read so far has the case id.
func (s *setSource) Seen(id string) bool {
	return slices.ContainsFunc(s.set.Cases[:s.i], func(c dataset.Case) bool { return c.ID == id })
}

func (s *setSource) Close() (*dataset.Summary, error) {
	return &dataset.Summary{Rows: len(s.set.Cases), Intended: s.set.Intended, Findings: s.set.Findings}, nil
}

// Progress hears how far grading is. Implementations must be cheap: Graded
// is called once per case row, under the pipeline's lock.
type Progress interface {
	// Start is called once, before the first row, with the number of rows
	// expected (0 when unknown).
	Start(total int)
	// Graded is called as each row's result is final, in dataset order.
	Graded(done int)
	// Finish is called once grading is over.
	Finish()
}

// maxInFlight bounds the tasks handed to the runner and not yet answered:
// the reorder buffer and the memory of a run do not grow past it, whatever
// the dataset's size.
const inFlightBound = 8192

// taskRef says what a task sequence number stands for.
type taskRef struct {
	row    int // row sequence, or -1 for a canary
	canary int // index into the canaries, when row is -1
}

// heldTask is a row's task waiting one call of next.
type heldTask struct {
	task grading.Task
	row  int
}

// sunkRow is a complete row on its way to sink, with the rows settled once
// it is (for Progress).
type sunkRow struct {
	row  results.CaseResult
	done int
}

// Complete rows go to sink in batches of sinkBatch (a handoff per row cost
// more CPU than formatting the row), at most sinkAhead batches waiting.
const (
	sinkBatch = 128
	sinkAhead = 16
)

// pending is a row waiting in the reorder buffer.
type pending struct {
	row   results.CaseResult
	ready bool
}

// pipeline builds tasks lazily from the dataset, grades them through a
// StreamRunner and folds each result, in dataset order, into the tally,
// the kept cases and the spool.
type pipeline struct {
	m        *manifest.Manifest
	shard    shard.Shard
	src      CaseSource
	sink     func(results.CaseResult) error
	progress Progress
	canaries *blind.Canaries
	observe  func(dataset.Case) // nil for none
	// observeOutcome sees each case's outcome; nil for none.
	observeOutcome func(caseID string, o grading.Outcome)

	// srcMu is held while src reads a row, outside mu: a row is parsed
	// while the runner's outcomes are folded, and run does not return
	// while a read is under way.
	srcMu   sync.Mutex
	mu      sync.Mutex
	drained *sync.Cond
	// sunk carries the complete rows, in dataset order, to the goroutine
	// that passes them to sink, so that formatting and writing a row never
	// holds up the graders' outcomes; nil once run is over.
	sunk     chan []sunkRow
	batch    []sunkRow // complete rows not yet sent on sunk
	queue    []pending // rows from base on, in dataset order
	head     int       // queue[head] is row base
	base     int
	rows     int // rows taken into the queue
	tasks    int // tasks handed out
	inFlight int
	refs     map[int]taskRef
	readRows int // dataset rows read, in any shard
	// held is a row's task sent right after the known-id canary built on
	// it; nil when none waits.
	held    *heldTask
	sinkErr error
	// maxInFlight is the bound on unanswered tasks: inFlightBound, or
	// none for an aggregate grader, whose one batch is every case.
	maxInFlight int
	// batches are the distinct grade_batch reports of the dataset's
	// rows (an aggregate grader's metrics), in the order first seen.
	batches []*grading.BatchReport
}

func newPipeline(m *manifest.Manifest, shard shard.Shard, src CaseSource, sink func(results.CaseResult) error, progress Progress, canaries *blind.Canaries) *pipeline {
	p := &pipeline{m: m, shard: shard, src: src, sink: sink, progress: progress, canaries: canaries, refs: map[int]taskRef{},
		maxInFlight: inFlightBound}
	if m.Grader.Aggregate() {
		// The metrics are over the whole set only when grade_batch gets it
		// at once: the memory of the run is then the set's.
		p.maxInFlight = math.MaxInt
	}
	p.drained = sync.NewCond(&p.mu)
	return p
}

// run grades every row through s.
func (p *pipeline) run(ctx context.Context, s grading.StreamRunner) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// A next waiting for room must not outlive the run: ctx ending wakes it
	// (and so does sink failing, which ends ctx).
	stop := context.AfterFunc(ctx, func() {
		p.mu.Lock()
		if p.sinkErr == nil {
			p.sinkErr = context.Cause(ctx)
		}
		p.drained.Broadcast()
		p.mu.Unlock()
	})
	defer stop()
	sunk := make(chan []sunkRow, sinkAhead)
	p.sunk = sunk
	var sinkErr error
	sinking := make(chan struct{})
	go func() {
		defer close(sinking)
		// After a failure the rows are still taken, never passed on, so
		// that flush never waits on a full channel for good.
		for rows := range sunk {
			for _, r := range rows {
				if sinkErr != nil {
					break
				}
				if err := p.sink(r.row); err != nil {
					sinkErr = err
					cancel(err)
					break
				}
				if p.progress != nil {
					p.progress.Graded(r.done)
				}
			}
		}
	}()
	streamErr := s.Stream(ctx, p.next, p.emit)
	// A call of next still under way (the stream does not wait for it)
	// ends before the source is handed back.
	p.srcMu.Lock()
	defer p.srcMu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.batch) > 0 {
		p.sunk <- p.batch
		p.batch = nil
	}
	close(p.sunk)
	p.sunk = nil
	<-sinking
	if sinkErr != nil {
		return sinkErr
	}
	if streamErr != nil {
		return streamErr
	}
	if p.sinkErr != nil {
		return p.sinkErr
	}
	if p.inFlight != 0 || p.head != len(p.queue) {
		return fmt.Errorf("the runner ended with %d tasks unanswered", p.inFlight)
	}
	return nil
}

// next hands the runner its next task. It waits while maxInFlight tasks
// are unanswered (backpressure), so a fast reader never outruns the grader.
func (p *pipeline) next() (grading.Task, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.inFlight >= p.maxInFlight && p.sinkErr == nil {
		p.drained.Wait()
	}
	if p.sinkErr != nil {
		return grading.Task{}, false, p.sinkErr
	}
	if h := p.held; h != nil {
		p.held = nil
		return p.send(h.task, taskRef{row: h.row})
	}
	for {
		if t, i, ok := p.canaries.Due(p.readRows, false); ok {
			return p.send(t, taskRef{row: -1, canary: i})
		}
		c, ok, failed := p.read()
		if p.sunk == nil {
			// The run returned while this row was read: nothing more is
			// handed out, and no canary's state changes.
			return grading.Task{}, false, errRunOver
		}
		if failed {
			// The dataset cannot be used; Close says why, every line at once.
			return grading.Task{}, false, nil
		}
		if p.sinkErr != nil {
			return grading.Task{}, false, p.sinkErr
		}
		if !ok {
			if t, i, ok := p.canaries.Due(p.readRows, true); ok {
				return p.send(t, taskRef{row: -1, canary: i})
			}
			return grading.Task{}, false, nil
		}
		p.readRows++
		p.canaries.Observe(c)
		if p.observe != nil {
			p.observe(c)
		}
		// A known-id canary goes just before the row it is built on, so a
		// grader meets the id first on the canary.
		ahead, ai, isAhead := p.canaries.Ahead(p.readRows, c)
		if shard.ShardOf(c.ID, p.shard.Count) != p.shard.Index {
			if isAhead {
				return p.send(ahead, taskRef{row: -1, canary: ai})
			}
			continue
		}
		row := results.CaseResult{
			CaseID:       c.ID,
			Slices:       nonNil(c.Slices),
			Family:       c.Family,
			HumanScore:   c.Label,
			SampleSHA256: c.SampleSHA256,
			Line:         c.Line,
			LabelStatus:  c.LabelStatus,
			StaleLabel:   c.StaleLabel,
		}
		if c.Label != nil || len(c.Reviewers) > 0 {
			row.RubricVersion, row.ReviewerLabels = c.RubricVersion, c.Reviewers
		}
		switch {
		case c.Unreadable:
			row.Status, row.Reason = results.StatusOmitted, results.OmittedDatasetInvalid
		case c.Sample == nil:
			row.Status, row.Reason = results.StatusOmitted, results.OmittedMissingSample
		}
		if row.Status != "" {
			p.queue = append(p.queue, pending{row: row, ready: true})
			p.rows++
			p.flush()
			if isAhead {
				return p.send(ahead, taskRef{row: -1, canary: ai})
			}
			continue
		}
		p.queue = append(p.queue, pending{row: row})
		t := grading.Task{ID: c.ID, Sample: c.Sample, Item: c.ItemForGrader()}
		p.canaries.CaseBase(p.rows, c, t)
		if isAhead {
			p.held = &heldTask{task: t, row: p.rows}
			p.rows++
			return p.send(ahead, taskRef{row: -1, canary: ai})
		}
		ref := taskRef{row: p.rows}
		p.rows++
		return p.send(t, ref)
	}
}

// errRunOver answers a call of next that was under way when run returned.
var errRunOver = errors.New("the run is over")

// read takes the source's next row without holding mu (next holds it
// when it calls read, and holds it again when read returns): the runner's
// outcomes are folded meanwhile. failed says the source can tell already
// that the dataset cannot be used. next has one caller at a time.
func (p *pipeline) read() (c dataset.Case, ok, failed bool) {
	// Never both locks at once here: run takes srcMu, then mu.
	p.mu.Unlock()
	p.srcMu.Lock()
	defer func() {
		p.srcMu.Unlock()
		p.mu.Lock()
	}()
	if p.sunk == nil {
		return dataset.Case{}, false, false // the run is over
	}
	if f, isFailer := p.src.(failer); isFailer && f.Failed() {
		return dataset.Case{}, false, true
	}
	c, ok = p.src.Next()
	return c, ok, false
}

// send hands t, the task ref names, to the runner: next's answer.
func (p *pipeline) send(t grading.Task, ref taskRef) (grading.Task, bool, error) {
	p.refs[p.tasks] = ref
	p.tasks++
	p.inFlight++
	return t, true, nil
}

// emit records one outcome and passes on every row that is now complete.
func (p *pipeline) emit(seq int, o grading.Outcome) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	ref, ok := p.refs[seq]
	if !ok {
		return fmt.Errorf("the runner returned an outcome for task %d, which it was not given or already answered", seq)
	}
	if err := grading.CheckOutcome(o); err != nil {
		return fmt.Errorf("task %d: %w", seq, err)
	}
	delete(p.refs, seq)
	p.inFlight--
	p.drained.Broadcast()
	if ref.row < 0 {
		p.canaries.Record(ref.canary, o)
		return nil
	}
	if o.Batch != nil && !slices.Contains(p.batches, o.Batch) {
		p.batches = append(p.batches, o.Batch)
	}
	pr := &p.queue[p.head+ref.row-p.base]
	if p.observeOutcome != nil {
		p.observeOutcome(pr.row.CaseID, o)
	}
	verdict.FillCase(&pr.row, o, p.m.Grader)
	p.canaries.CaseGraded(ref.row, pr.row, o)
	pr.ready = true
	p.flush()
	return p.sinkErr
}

// flush passes on the rows at the head of the queue that are complete.
func (p *pipeline) flush() {
	for p.head < len(p.queue) && p.queue[p.head].ready && p.sinkErr == nil {
		row := p.queue[p.head].row
		p.queue[p.head] = pending{}
		p.head++
		p.base++
		if p.sunk == nil {
			continue // the run is over: a late outcome is not passed on
		}
		// Rows of other shards are settled as soon as they are read.
		p.batch = append(p.batch, sunkRow{row: row, done: p.readRows - (len(p.queue) - p.head)})
		if len(p.batch) >= sinkBatch {
			p.sunk <- p.batch
			p.batch = make([]sunkRow, 0, sinkBatch)
		}
	}
	// Reuse the queue's memory once its head has moved far enough.
	if p.head > 4096 && p.head*2 > len(p.queue) {
		n := copy(p.queue, p.queue[p.head:])
		clear(p.queue[n:])
		p.queue = p.queue[:n]
		p.head = 0
	}
}
