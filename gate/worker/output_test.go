//go:build linux

package worker

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
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

// TestWindow: a window answers its requests first in, first out, counts
// them and their bytes, gives back the unanswered ones in order, and keeps
// its slice within a small multiple of the most requests it held however
// long it runs (a slice cut from the front grew anew every few hundred
// answers).
func TestWindow(t *testing.T) {
	var w window
	var ref []*request
	next := int64(0)
	r := rand.New(rand.NewPCG(3, 4))
	moved := 0
	var array **request
	for step := range 200_000 {
		// Up to a window's worth in flight, filled and answered in bursts.
		if len(ref) == 0 || len(ref) < 1024 && r.IntN(2) == 0 {
			for range 1 + r.IntN(64) {
				q := &request{id: next, line: make([]byte, 1+int(next%7))}
				next++
				w.push(q)
				ref = append(ref, q)
			}
		} else {
			for range 1 + r.IntN(64) {
				if len(ref) == 0 {
					break
				}
				if got := w.pop(); got != ref[0] {
					t.Fatalf("step %d: answered request %d, want %d", step, got.id, ref[0].id)
				}
				ref = ref[1:]
			}
		}
		bytes := 0
		for _, q := range ref {
			bytes += len(q.line)
		}
		if w.n() != len(ref) || w.bytes != bytes {
			t.Fatalf("step %d: %d requests of %d bytes, want %d of %d", step, w.n(), w.bytes, len(ref), bytes)
		}
		if len(ref) > 0 && w.first() != ref[0] {
			t.Fatalf("step %d: first is %d, want %d", step, w.first().id, ref[0].id)
		}
		if cap(w.buf) > 3*1088 {
			t.Fatalf("step %d: a slice of %d for at most 1,088 requests", step, cap(w.buf))
		}
		if a := unsafe.SliceData(w.buf); a != array && step >= 100_000 {
			moved++
		}
		array = unsafe.SliceData(w.buf)
	}
	if moved > 2 {
		t.Errorf("the window's slice moved %d times in 100,000 steps at its full size", moved)
	}
	extra := []*request{{id: -1}}
	back := w.unanswered(extra)
	if len(back) != len(ref)+1 || back[len(back)-1] != extra[0] {
		t.Fatalf("given back %d, want %d then the extra one", len(back), len(ref)+1)
	}
	for i, q := range ref {
		if back[i] != q {
			t.Fatalf("given back [%d] = %d, want %d", i, back[i].id, q.id)
		}
	}
}

// TestSendBuf: the bytes a session still has to write come out in order
// however the writes cut them, and once the windows reach their size the
// buffer is the same one from window to window.
func TestSendBuf(t *testing.T) {
	var q sendBuf
	var ref []byte
	r := rand.New(rand.NewPCG(5, 6))
	moved := 0
	var array *byte
	for step := range 100_000 {
		if len(ref) < 1<<20 && r.IntN(3) > 0 {
			// A request line.
			p := make([]byte, 1+r.IntN(600))
			for i := range p {
				p[i] = byte(r.Uint32())
			}
			q.add(p)
			ref = append(ref, p...)
		} else if len(ref) > 0 {
			// A write into the pipe: up to 64 KiB at a time.
			n := 1 + r.IntN(min(len(ref), 64<<10))
			if !bytes.Equal(q.unsent()[:n], ref[:n]) {
				t.Fatalf("step %d: the next %d bytes differ", step, n)
			}
			q.wrote(n)
			ref = ref[n:]
		}
		if !bytes.Equal(q.unsent(), ref) {
			t.Fatalf("step %d: %d bytes unsent, want %d", step, len(q.unsent()), len(ref))
		}
		if a := unsafe.SliceData(q.b); a != array && step >= 50_000 {
			moved++
		}
		array = unsafe.SliceData(q.b)
	}
	if moved > 2 {
		t.Errorf("the buffer was allocated anew %d times in 50,000 steps at its full size", moved)
	}
	if cap(q.b) > 3<<20 {
		t.Errorf("a buffer of %d bytes for at most 1 MiB unsent", cap(q.b))
	}
	big := make([]byte, maxKeptSend+1)
	q.add(big)
	q.wrote(len(q.unsent()))
	if q.b != nil && cap(q.b) > maxKeptSend {
		t.Errorf("a buffer of %d bytes kept after a request of %d", cap(q.b), len(big))
	}
}
