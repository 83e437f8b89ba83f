package worker

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/gradegate/gradegate/gate/grading"
)

// wantCut checks that a case's output starts with prefix, was cut at the
// 8 KiB limit and says so.
func wantCut(prefix string) func(*testing.T, grading.Outcome) {
	return func(t *testing.T, o grading.Outcome) {
		t.Helper()
		if !strings.HasPrefix(o.Output, prefix) || !strings.Contains(o.Output, "bytes of output cut]") || len(o.Output) > 8<<10+100 {
			t.Errorf("Output = %.100q… (%d bytes), want %q first, at most 8 KiB and a cut marker", o.Output, len(o.Output), prefix)
		}
	}
}

// markedOut is what worker.py writes to fd 1/2 for request id: what the
// grader printed, then the end marker.
func markedOut(id int, text string) []byte {
	return fmt.Appendf(nil, "%s\x00gradegate-end:%d\n", text, id)
}

// TestQueue: items come out first in, first out; taking them moves the
// head and clears their slots instead of shifting the rest (which cost a
// window's length a claim) or cutting the slice from the front (which
// reallocated every few hundred); the slice stays the same once it has
// grown to size, within a small multiple of the most it held; and an
// emptied queue lets a slice over keep go.
func TestQueue(t *testing.T) {
	q := queue[*int]{keep: 1 << 14}
	var ref []*int
	r := rand.New(rand.NewPCG(7, 8))
	moved, most := 0, 0
	var array **int
	for step := range 200_000 {
		if len(ref) == 0 || len(ref) < 1000 && r.IntN(2) == 0 {
			var add []*int
			for range 1 + r.IntN(64) {
				v := step
				add = append(add, &v)
			}
			q.push(add...)
			ref = append(ref, add...)
		} else {
			n := 1 + r.IntN(min(len(ref), 64))
			for i, p := range q.live()[:n] {
				if p != ref[i] {
					t.Fatalf("step %d: item %d is not the one pushed", step, i)
				}
			}
			before := unsafe.SliceData(q.live())
			q.drop(n)
			ref = ref[n:]
			if len(ref) > 0 && unsafe.SliceData(q.live()) != (**int)(unsafe.Add(unsafe.Pointer(before), n*int(unsafe.Sizeof(before)))) {
				t.Fatalf("step %d: taking %d moved the items left", step, n)
			}
			for i, p := range q.buf[:q.head] {
				if p != nil {
					t.Fatalf("step %d: slot %d still holds a taken item", step, i)
				}
			}
		}
		if q.len() != len(ref) {
			t.Fatalf("step %d: %d queued, want %d", step, q.len(), len(ref))
		}
		most = max(most, len(ref))
		if cap(q.buf) > 3*most {
			t.Fatalf("step %d: a slice of %d for at most %d items", step, cap(q.buf), most)
		}
		if a := unsafe.SliceData(q.buf); a != array && step >= 100_000 {
			moved++
		}
		array = unsafe.SliceData(q.buf)
	}
	if moved > 2 {
		t.Errorf("the slice moved %d times in 100,000 steps at its full size", moved)
	}

	big := make([]*int, 1<<15)
	q.push(big...)
	q.drop(q.len())
	if cap(q.buf) > q.keep {
		t.Errorf("a slice of %d kept once empty, keep %d", cap(q.buf), q.keep)
	}
	kept := queue[int]{}
	kept.push(make([]int, 1<<15)...)
	kept.drop(kept.len())
	if cap(kept.buf) < 1<<15 {
		t.Errorf("keep 0 let a slice of %d go", 1<<15)
	}
}

// TestMarkedStream: each request gets what was printed before its marker,
// whether a window's output comes in one read or in 7-byte ones; a request
// claimed out of turn takes the unclaimed output before it too; one whose
// marker never came takes everything so far, a cut marker included; and a
// grader writing markers of its own cannot make the stream hold more than
// its bounds, while every byte is kept or counted as cut.
func TestMarkedStream(t *testing.T) {
	const limit, maxSegs = DefaultOutputLimit, 1088
	m := newMarkedStream(limit, maxSegs)
	take := func(id int64) bounded {
		out := bounded{limit: 1 << 20}
		m.take(id, &out)
		return out
	}
	next := 0
	for round := range 5 {
		var all []byte
		for range 1000 {
			all = append(all, markedOut(next, fmt.Sprintf("out %d;", next))...)
			next++
		}
		if round%2 == 0 {
			m.scan(all)
		} else {
			for len(all) > 0 {
				n := min(7, len(all))
				m.scan(all[:n])
				all = all[n:]
			}
		}
		for id := next - 1000; id < next; id++ {
			if got, want := string(take(int64(id)).buf), fmt.Sprintf("out %d;", id); got != want {
				t.Fatalf("request %d: got %q, want %q", id, got, want)
			}
			if unclaimed := m.segs.len(); unclaimed != next-id-1 {
				t.Fatalf("after request %d: %d segments unclaimed, want %d", id, unclaimed, next-id-1)
			}
		}
		if m.segs.len() != 0 || m.held != 0 {
			t.Fatalf("round %d: %d segments, %d bytes kept after every claim", round, m.segs.len(), m.held)
		}
	}

	base := next
	for id := base; id < base+4; id++ {
		m.scan(markedOut(id, fmt.Sprintf("o%d;", id)))
	}
	next = base + 4
	if got, want := string(take(int64(base+2)).buf), fmt.Sprintf("o%d;o%d;o%d;", base, base+1, base+2); got != want {
		t.Errorf("out of turn: got %q, want %q", got, want)
	}
	// A marker that never came, and one cut by the process's end.
	m.scan([]byte("tail\x00gradegate-e"))
	if got, want := string(take(int64(next+10)).buf), fmt.Sprintf("o%d;tail\x00gradegate-e", base+3); got != want {
		t.Errorf("no marker: got %q, want %q", got, want)
	}
	if m.segs.len() != 0 || len(m.cur.buf) != 0 || m.carry != nil || m.held != 0 {
		t.Errorf("after a claim with no marker: %d segments, %d bytes current, carry %q, held %d", m.segs.len(), len(m.cur.buf), m.carry, m.held)
	}

	// A grader's own markers: 20,000 of them, each after more than a
	// segment's worth of text.
	text := strings.Repeat("y", limit+100)
	written := 0
	for i := range 20_000 {
		p := markedOut(900_000_000+i, text)
		m.scan(p)
		written += len(text)
		kept := len(m.cur.buf)
		for _, sg := range m.segs.live() {
			kept += len(sg.out.buf)
		}
		if m.segs.len() > maxSegs || kept > 2<<20 || kept != m.held {
			t.Fatalf("after %d made-up markers: %d segments, %d bytes kept (counted %d; bounds %d segments, 2 MiB)", i+1, m.segs.len(), kept, m.held, maxSegs)
		}
	}
	m.scan([]byte("mine"))
	m.scan(markedOut(next, ""))
	written += len("mine")
	got := take(int64(next))
	if got.cut == 0 || len(got.buf)+got.cut != written {
		t.Errorf("the real request got %d bytes and %d cut, want all %d counted", len(got.buf), got.cut, written)
	}
	if m.held != 0 || m.segs.len() != 0 {
		t.Errorf("after the claim: %d bytes, %d segments held", m.held, m.segs.len())
	}
}
