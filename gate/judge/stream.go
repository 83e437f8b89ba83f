package judge

import (
	"context"
	"fmt"
	"sync"

	"github.com/gradegate/gradegate/gate/grading"
)

var _ grading.StreamRunner = (*Judge)(nil)

// Stream grades tasks as next produces them, with at most Concurrency
// calls in flight, and emits each outcome as soon as its reply is read:
// a slow reply holds back no other case. It implements gate.StreamRunner.
func (j *Judge) Stream(ctx context.Context, next func() (grading.Task, bool, error), emit func(seq int, o grading.Outcome) error) error {
	start := j.now()
	defer func() {
		j.mu.Lock()
		j.usage.WallMS += float64(j.now().Sub(start).Microseconds()) / 1000
		j.mu.Unlock()
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	type done struct {
		seq int
		o   grading.Outcome
		err error
	}
	results := make(chan done)
	var (
		errMu    sync.Mutex
		firstErr error
	)
	fail := func(err error) {
		errMu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		errMu.Unlock()
		cancel()
	}

	// Outcomes are emitted from their own goroutine, so emit is never held
	// back by a next that waits for it to drain.
	emitted := make(chan struct{})
	go func() {
		defer close(emitted)
		for d := range results {
			if d.err != nil {
				fail(d.err)
				continue
			}
			if ctx.Err() != nil {
				continue
			}
			if err := emit(d.seq, d.o); err != nil {
				fail(err)
			}
		}
	}()

	type job struct {
		seq int
		t   grading.Task
	}
	// A few long-lived workers rather than a goroutine per task: each
	// would grow its stack anew for the JSON work of every task.
	work := make(chan job)
	var wg sync.WaitGroup
	for range j.conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for jb := range work {
				o, err := j.grade(ctx, jb.t)
				if err != nil {
					err = fmt.Errorf("%s: %w", jb.t.ID, err)
				}
				results <- done{seq: jb.seq, o: o, err: err}
			}
		}()
	}
pull:
	for seq := 0; ctx.Err() == nil; seq++ {
		t, ok, err := next()
		if err != nil {
			fail(err)
			break
		}
		if !ok {
			break
		}
		select {
		case work <- job{seq, t}:
		case <-ctx.Done():
			break pull
		}
	}
	close(work)
	wg.Wait()
	close(results)
	<-emitted
	errMu.Lock()
	defer errMu.Unlock()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
