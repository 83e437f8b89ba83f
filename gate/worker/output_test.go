//go:build linux

package worker

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestTakeOutput: a process's fd 1/2 output reaches the request it
// belongs to (the splitting itself: TestMarkedStream).
func TestTakeOutput(t *testing.T) {
	pr := &proc{marks: newMarkedStream(1<<20, windowMaxCount+64), output: bounded{limit: 1 << 20}}
	var all []byte
	for id := range windowMaxCount {
		all = append(all, markedOut(id, fmt.Sprintf("out %d;", id))...)
	}
	pr.scanOutput(all)
	for id := range windowMaxCount {
		pr.takeOutput(int64(id))
		if got, want := string(pr.output.buf), fmt.Sprintf("out %d;", id); got != want {
			t.Fatalf("request %d: got %q, want %q", id, got, want)
		}
	}
	pr.scanOutput([]byte("late"))
	pr.takeOutput(-1)
	if got := string(pr.output.buf); got != "late" {
		t.Errorf("a process gone: got %q, want %q", got, "late")
	}
}

// BenchmarkTakeOutput is one window of 1,024 answers that arrived in one
// read, claimed in turn.
func BenchmarkTakeOutput(b *testing.B) {
	pr := &proc{marks: newMarkedStream(1<<20, windowMaxCount+64), output: bounded{limit: 1 << 20}}
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
		if cap(w.q.buf) > 3*1088 {
			t.Fatalf("step %d: a slice of %d for at most 1,088 requests", step, cap(w.q.buf))
		}
		if a := unsafe.SliceData(w.q.buf); a != array && step >= 100_000 {
			moved++
		}
		array = unsafe.SliceData(w.q.buf)
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

// TestPendingBytes: the bytes a session still has to write come out in
// order however the writes cut them, and once the windows reach their size
// the buffer is the same one from window to window.
func TestPendingBytes(t *testing.T) {
	q := queue[byte]{keep: maxKeptSend}
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
			q.push(p...)
			ref = append(ref, p...)
		} else if len(ref) > 0 {
			// A write into the pipe: up to 64 KiB at a time.
			n := 1 + r.IntN(min(len(ref), 64<<10))
			if !bytes.Equal(q.live()[:n], ref[:n]) {
				t.Fatalf("step %d: the next %d bytes differ", step, n)
			}
			q.drop(n)
			ref = ref[n:]
		}
		if !bytes.Equal(q.live(), ref) {
			t.Fatalf("step %d: %d bytes unsent, want %d", step, q.len(), len(ref))
		}
		if a := unsafe.SliceData(q.buf); a != array && step >= 50_000 {
			moved++
		}
		array = unsafe.SliceData(q.buf)
	}
	if moved > 2 {
		t.Errorf("the buffer was allocated anew %d times in 50,000 steps at its full size", moved)
	}
	if cap(q.buf) > 3<<20 {
		t.Errorf("a buffer of %d bytes for at most 1 MiB unsent", cap(q.buf))
	}
	q.push(make([]byte, maxKeptSend+1)...)
	q.drop(q.len())
	if cap(q.buf) > maxKeptSend {
		t.Errorf("a buffer of %d bytes kept after a request of %d", cap(q.buf), maxKeptSend+1)
	}
}
