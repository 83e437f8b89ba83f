package gate

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The gate's live heap is small and grows with the number of cases (their
// ids, the near-duplicate signatures), while every row it reads leaves
// garbage behind. Go's default (a collection each time the heap doubles)
// then spends a third of a million-row validate in the collector. gradegate
// lets the heap grow to five times what is live (GOGC=400), under a soft
// memory limit that follows the live heap: an eighth above it, and at least
// gcRoom above it, never under gcFloor. A small suite never meets the limit;
// a large one collects more often rather than let garbage fill hundreds of
// MB. GOGC or GOMEMLIMIT in the environment leave Go's own settings in
// force.
const (
	gcPercent    = 400
	gcFloor      = 96 << 20
	gcRoom       = 24 << 20
	gcWatchEvery = 100 * time.Millisecond
)

// TuneGC applies the policy above to this process until ctx ends; main calls
// it once.
func TuneGC(ctx context.Context, getenv func(string) string) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(gcPercent)
	limit := int64(gcFloor)
	debug.SetMemoryLimit(limit)
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	go func() {
		t := time.NewTicker(gcWatchEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() != metrics.KindUint64 {
				return
			}
			if next := gcLimit(int64(sample[0].Value.Uint64()), limit); next != limit {
				limit = next
				debug.SetMemoryLimit(limit)
			}
		}
	}()
}

// gcLimit is the memory limit for a live heap of live bytes: an eighth
// above it and at least gcRoom above it, never under gcFloor. It stays at
// limit while the new one is within a sixteenth of it, so the limit is not
// set again every tick.
func gcLimit(live, limit int64) int64 {
	next := max(gcFloor, live+max(live/8, gcRoom))
	if d := next - limit; d < limit/16 && -d < limit/16 {
		return limit
	}
	return next
}
