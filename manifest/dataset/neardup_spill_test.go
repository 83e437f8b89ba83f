//go:build unix

package dataset

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/gradegate/gradegate/manifest"
)

// TestScreenSpillMatchesReread: the candidates' sets read back from the
// spill give the findings that reading the dataset again gives, clusters,
// similarities, labels and all, and the dataset is read once less. A
// spill that cannot be made (its folder is missing) falls back to reading
// again, which opens the dataset once more.
func TestScreenSpillMatchesReread(t *testing.T) {
	var b bytes.Buffer
	wantClusters, wantRows := templatedSuite(&b, 3000, 7)
	files := fstest.MapFS{"cases.jsonl": {Data: b.Bytes()}}
	screen := func(spillDir string) ([]manifest.Finding, int32) {
		t.Helper()
		cfs := &countingFS{FS: files}
		s := NewScreen(ScreenConfig{Manifest: testManifest("."), FS: cfs, File: "cases.jsonl"})
		s.spillDir = spillDir
		for n, line := range bytes.Split(bytes.TrimSuffix(b.Bytes(), []byte("\n")), []byte("\n")) {
			item := objectField(line, "item")
			id := objectField(item, "case_id")
			s.Add(n+1, string(id[1:len(id)-1]), item)
		}
		out, err := s.Findings()
		if err != nil {
			t.Fatal(err)
		}
		return out, cfs.opens.Load()
	}
	spilled, spillOpens := screen(t.TempDir())
	reread, rereadOpens := screen(filepath.Join(t.TempDir(), "missing"))
	if !reflect.DeepEqual(spilled, reread) {
		t.Errorf("findings with the spill differ from those read again:\n%v\n%v", spilled, reread)
	}
	if spillOpens >= rereadOpens {
		t.Errorf("the dataset was opened %d times with the spill and %d without, want fewer", spillOpens, rereadOpens)
	}
	if len(spilled) == 0 {
		t.Fatalf("no findings; planted %d clusters of %d rows", wantClusters, wantRows)
	}
}

// TestSetSpillReadBack: records written over several parts, each in row
// order, come back by their rank among all rows, only the candidates'
// sets kept, sorted and without repeats; a part cut short is an error.
func TestSetSpillReadBack(t *testing.T) {
	dir := t.TempDir()
	write := func() *setSpill {
		sp, err := newSetSpill(dir, 2)
		if err != nil {
			t.Fatal(err)
		}
		// Rows 0..5 as signRows numbers them; 2 had no compared text.
		// A shingle h is kept as uint32(h^h>>32): these are their own.
		for _, r := range []struct {
			part   int
			w      int32
			leaves [][]uint64
		}{
			{0, 0, [][]uint64{{9, 3}, {3}}},
			{1, 1, [][]uint64{{7}}},
			{1, 3, nil},
			{0, 4, [][]uint64{{5, 1}}},
			{1, 5, [][]uint64{{2}, {8, 2}}},
		} {
			p := sp.parts[r.part]
			p.begin()
			for _, l := range r.leaves {
				p.shingles(l)
			}
			p.end(r.w)
		}
		if err := sp.finish(); err != nil {
			t.Fatal(err)
		}
		return sp
	}
	cand := newBitset(5) // the kept rows 0, 1, 3, 4, 5 are 0..4
	for _, i := range []int{0, 3, 4} {
		cand.set(i)
	}
	sp := write()
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("the spill left %d files in its folder", len(left))
	}
	sets, err := sp.sets(5, cand)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range [][]uint32{{3, 9}, nil, nil, {1, 5}, {2, 8}} {
		got, ok := sets.of(int32(i))
		if ok != (want != nil) || !slices.Equal(got, want) {
			t.Errorf("row %d: %v, %v; want %v", i, got, ok, want)
		}
	}
	if _, err := write().sets(6, cand); err == nil {
		t.Error("6 rows read back from 5 records: no error")
	}
	sp = write()
	if err := sp.parts[1].f.Truncate(10); err != nil {
		t.Fatal(err)
	}
	if _, err := sp.sets(5, cand); err == nil {
		t.Error("a part cut short: no error")
	}
}
