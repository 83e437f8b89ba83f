package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// slots is what both pools (Pool, PortablePool) keep of their concurrency
// units: a token for each free slot, the free slots, every live process
// and why the pool closed, under one lock. S is a slot, P a process.
type slots[S any, P interface {
	comparable
	kill()
}] struct {
	// tokens counts free slots; a goroutine grading holds one slot.
	tokens chan struct{}

	mu     sync.Mutex
	free   []S
	live   map[P]bool // every running process, for Close and cancellation
	closed error      // set by Close or New's context; no process starts after

	// warmth ranks a free slot for acquire: 2 its process runs, 1 one is
	// loading, 0 neither.
	warmth func(S) int

	// peakBuffered is the most bytes of response pipe any process made the
	// pool buffer (tests and benchmarks read it).
	peakBuffered atomic.Int64
}

// init makes room for n slots, none free yet (release them).
func (t *slots[S, P]) init(n int, warmth func(S) int) {
	t.tokens = make(chan struct{}, n)
	t.live = map[P]bool{}
	t.warmth = warmth
}

// acquire takes a free slot, preferring one whose process is running, then
// one whose process is loading: a Grade call with fewer tasks than workers
// (a canary) should not start a cold interpreter while a loaded one is
// idle. Among equals it takes the slot released last.
func (t *slots[S, P]) acquire(ctx context.Context) (S, error) {
	select {
	case <-t.tokens:
	case <-ctx.Done():
		var none S
		return none, fmt.Errorf("worker: %w", context.Cause(ctx))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	i, best := len(t.free)-1, -1
	for j := len(t.free) - 1; j >= 0 && best < 2; j-- {
		if w := t.warmth(t.free[j]); w > best {
			i, best = j, w
		}
	}
	s := t.free[i]
	t.free = slices.Delete(t.free, i, i+1)
	return s, nil
}

// release hands s back.
func (t *slots[S, P]) release(s S) {
	t.mu.Lock()
	t.free = append(t.free, s)
	t.mu.Unlock()
	t.tokens <- struct{}{}
}

// markClosed records reason as why the pool closed, unless it closed
// already; no process starts after. It kills nothing (shut does).
func (t *slots[S, P]) markClosed(reason error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed == nil {
		t.closed = reason
	}
}

// shut marks the pool closed and kills every live process.
func (t *slots[S, P]) shut(reason error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed == nil {
		t.closed = reason
	}
	for pr := range t.live {
		pr.kill()
	}
}

// closedReason is why the pool was closed, or nil.
func (t *slots[S, P]) closedReason() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closed
}

// closedBy reports whether err carries the reason the pool was closed.
func (t *slots[S, P]) closedBy(err error) bool {
	closed := t.closedReason()
	return closed != nil && errors.Is(err, closed)
}

// track counts pr as live and returns why the pool closed, if it did in
// the meantime: the caller then stops pr, which shut did not see.
func (t *slots[S, P]) track(pr P) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.live[pr] = true
	return t.closed
}

// forget drops pr, stopped, from the live processes, keeping the most
// bytes of response pipe it made the pool buffer.
func (t *slots[S, P]) forget(pr P, peak int64) {
	for {
		old := t.peakBuffered.Load()
		if peak <= old || t.peakBuffered.CompareAndSwap(old, peak) {
			break
		}
	}
	t.mu.Lock()
	delete(t.live, pr)
	t.mu.Unlock()
}
