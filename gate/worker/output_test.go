//go:build linux

package worker

import (
	"fmt"
	"testing"
)

// markedOut is what worker.py writes to fd 1/2 for request id: what the
// grader printed, then the end marker.
func markedOut(id int, text string) []byte {
	return fmt.Appendf(nil, "%s\x00gradegate-end:%d\n", text, id)
}

// TestTakeOutput: each request gets what was printed before its marker;
// a request claimed out of turn takes the unclaimed output before it too;
// one whose marker never came takes everything so far; and the segments a
// window leaves do not pile up while they are claimed.
func TestTakeOutput(t *testing.T) {
	pr := &proc{cur: bounded{limit: 1 << 20}, output: bounded{limit: 1 << 20}, limit: 1 << 20}
	take := func(id int64) string {
		pr.takeOutput(id)
		return string(pr.output.buf)
	}
	next := 0
	for round := range 5 {
		// A window's answers, in one read or in many.
		var all []byte
		for range 1500 {
			all = append(all, markedOut(next, fmt.Sprintf("out %d;", next))...)
			next++
		}
		if round%2 == 0 {
			pr.scanOutput(all)
		} else {
			for len(all) > 0 {
				n := min(7, len(all))
				pr.scanOutput(all[:n])
				all = all[n:]
			}
		}
		first := next - 1500
		for id := first; id < next; id++ {
			if got, want := take(int64(id)), fmt.Sprintf("out %d;", id); got != want {
				t.Fatalf("request %d: got %q, want %q", id, got, want)
			}
			if unclaimed := len(pr.segs) - pr.segHead; unclaimed != next-id-1 {
				t.Fatalf("after request %d: %d segments unclaimed, want %d", id, unclaimed, next-id-1)
			}
		}
		if len(pr.segs) != 0 || pr.segHead != 0 {
			t.Fatalf("round %d: %d segments kept after every claim (head %d)", round, len(pr.segs), pr.segHead)
		}
	}

	// Claims interleaved with new segments: the slice stays within twice
	// what is unclaimed.
	for k := range 4000 {
		pr.scanOutput(markedOut(next, fmt.Sprintf("o%d;", next)))
		next++
		if k%2 == 1 {
			id := next - 1 - (len(pr.segs) - pr.segHead - 1)
			if got, want := take(int64(id)), fmt.Sprintf("o%d;", id); got != want {
				t.Fatalf("interleaved request %d: got %q, want %q", id, got, want)
			}
		}
		if unclaimed := len(pr.segs) - pr.segHead; len(pr.segs) > 2*unclaimed+1 {
			t.Fatalf("%d segments held for %d unclaimed", len(pr.segs), unclaimed)
		}
	}
	base := next - (len(pr.segs) - pr.segHead)
	// Out of turn: the one asked for takes the two before it.
	if got, want := take(int64(base+2)), fmt.Sprintf("o%d;o%d;o%d;", base, base+1, base+2); got != want {
		t.Errorf("out of turn: got %q, want %q", got, want)
	}
	// A marker that never came: everything unclaimed, and what followed.
	pr.scanOutput([]byte("tail"))
	rest := ""
	for id := base + 3; id < next; id++ {
		rest += fmt.Sprintf("o%d;", id)
	}
	if got := take(int64(next + 10)); got != rest+"tail" {
		t.Errorf("no marker: got %q, want %q", got, rest+"tail")
	}
	if len(pr.segs) != 0 || pr.segHead != 0 || len(pr.cur.buf) != 0 {
		t.Errorf("after a claim with no marker: %d segments, head %d, %d bytes current", len(pr.segs), pr.segHead, len(pr.cur.buf))
	}
}

// BenchmarkTakeOutput is one window of 1,024 answers that arrived in one
// read, claimed in turn.
func BenchmarkTakeOutput(b *testing.B) {
	pr := &proc{cur: bounded{limit: 1 << 20}, output: bounded{limit: 1 << 20}, limit: 1 << 20}
	var window []byte
	for id := range 1024 {
		window = append(window, markedOut(id, "")...)
	}
	b.ReportAllocs()
	for b.Loop() {
		pr.scanOutput(window)
		for id := range 1024 {
			pr.takeOutput(int64(id))
		}
	}
}
