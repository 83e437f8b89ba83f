package dataset

import (
	"fmt"
	"hash/maphash"
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

	// "other" takes the hash of "case-0007", as a collision would.
	_, first, _ := tab.get("case-0007")
	tab.byHash[maphash.String(tab.seed, "other")] = first
	h, _, ok := tab.get("other")
	if ok {
		t.Fatal("an id was found under a hash another id holds")
	}
	tab.add(h, "other", idInfo{line: 5000})
	if _, info, ok := tab.get("other"); !ok || info.line != 5000 {
		t.Fatalf("the colliding id: got %+v, %v", info, ok)
	}
	if _, info, ok := tab.get("case-0007"); !ok || info.line != 8 {
		t.Fatalf("the first id after a collision: got %+v, %v", info, ok)
	}
}
