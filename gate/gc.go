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
// lets the heap grow to five times what is live (GOGC=400) but caps it with
// a soft memory limit, so a large suite stays within a few hundred MB; when
// the live heap itself nears the limit (millions of cases), the limit moves
// up with it rather than making the collector run without pause. GOGC or
// GOMEMLIMIT in the environment leave Go's own settings in force.
const (
	gcPercent    = 400
	gcFirstLimit = 224 << 20
	gcWatchEvery = 250 * time.Millisecond
)

// TuneGC applies the policy above to this process until ctx ends; main calls
// it once.
func TuneGC(ctx context.Context, getenv func(string) string) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(gcPercent)
	limit := int64(gcFirstLimit)
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

// gcLimit is the memory limit for a live heap of live bytes under the
// current limit: unchanged while the live heap is under four fifths of it,
// else one and a half times the live heap, so there is always room for
// garbage between collections.
func gcLimit(live, limit int64) int64 {
	if live*5 <= limit*4 {
		return limit
	}
	return live * 3 / 2
}
