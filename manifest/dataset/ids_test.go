package dataset

import (
	"fmt"
	"testing"
)

// TestIDTable: ids are found exactly, and a hash shared by two ids (forced
// here; a random seed keeps datasets from choosing one) keeps both apart.
func TestIDTable(t *testing.T) {
	tab := newIDTable()
	for i := range 1000 {
		id := fmt.Sprintf("case-%04d", i)
		h, _, ok := tab.get(id)
		if ok {
			t.Fatalf("%s found before it was added", id)
		}
		tab.add(h, id, idInfo{line: int32(i + 1)})
	}
	for i := range 1000 {
		id := fmt.Sprintf("case-%04d", i)
		_, info, ok := tab.get(id)
		if !ok || info.line != int32(i+1) {
			t.Fatalf("%s: got %+v, %v; want line %d", id, info, ok, i+1)
		}
	}
	if _, _, ok := tab.get("case-1000"); ok {
		t.Fatal("an id never added was found")
	}

	// Four bits of hash: every id collides with many, in its slot and in
	// the upper bits compared before the bytes.
	tab = newIDTable()
	tab.keep = 0xf | 0xf<<60
	for i := range 5000 {
		id := fmt.Sprintf("id-%d", i)
		h, _, ok := tab.get(id)
		if ok {
			t.Fatalf("%s found before it was added", id)
		}
		tab.add(h, id, idInfo{line: int32(i + 1)})
	}
	for i := range 5000 {
		id := fmt.Sprintf("id-%d", i)
		if _, info, ok := tab.get(id); !ok || info.line != int32(i+1) {
			t.Fatalf("%s under collisions: got %+v, %v; want line %d", id, info, ok, i+1)
		}
	}
	if _, _, ok := tab.get("id-5000"); ok {
		t.Fatal("an id never added was found under collisions")
	}

	// An id longer than the arena holds is kept apart, and found.
	long := string(make([]byte, arenaChunk+1))
	h, _, _ := tab.get(long)
	tab.add(h, long, idInfo{line: 9})
	if _, info, ok := tab.get(long); !ok || info.line != 9 {
		t.Fatalf("the long id: got %+v, %v", info, ok)
	}
}

// TestIDHashes: once the ids' bytes are let go, every id is still found.
func TestIDHashes(t *testing.T) {
	for _, keep := range []uint64{^uint64(0), 0xf | 0xf<<60} {
		tab := newIDTable()
		tab.keep = keep
		for i := range 3000 {
			id := fmt.Sprintf("case-%d", i)
			h, _, _ := tab.get(id)
			tab.add(h, id, idInfo{})
		}
		long := string(make([]byte, arenaChunk+1))
		h, _, _ := tab.get(long)
		tab.add(h, long, idInfo{})
		hs := tab.hashes()
		for i := range 3000 {
			if id := fmt.Sprintf("case-%d", i); !hs.mayHold(id) {
				t.Fatalf("keep %x: %s not found", keep, id)
			}
		}
		if !hs.mayHold(long) {
			t.Fatalf("keep %x: the long id not found", keep)
		}
		if keep == ^uint64(0) && hs.mayHold("case-3000") {
			t.Fatal("an id never added was found")
		}
	}
}

// TestIDInfoSample: where a sample is comes back as it was kept, up to the
// largest offset an idInfo holds.
func TestIDInfoSample(t *testing.T) {
	for _, ref := range []sampleRef{
		{line: 3, off: 0, n: 10},
		{line: 7, off: 1<<32 + 5, n: 1 << 20, unreadable: true},
		{line: 1, off: maxSampleOff, n: 2},
	} {
		var info idInfo
		if !info.setSample(int(ref.line), ref) {
			t.Fatalf("%+v not kept", ref)
		}
		if got := info.ref(); got.line != ref.line || got.off != ref.off || got.n != ref.n || got.unreadable != ref.unreadable {
			t.Errorf("kept %+v, got back %+v", ref, got)
		}
	}
	var info idInfo
	if info.setSample(1, sampleRef{line: 1, off: maxSampleOff + 1}) || info.sampleLine != 0 {
		t.Error("an offset past what an idInfo holds was kept")
	}
}
