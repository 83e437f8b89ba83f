package blind

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

func TestSplitID(t *testing.T) {
	tests := []struct {
		id   string
		want idShape
		n    uint64
		ok   bool
	}{
		{"ord-00017", idShape{pre: "ord-", width: 5}, 17, true},
		{"ship-cancel-004", idShape{pre: "ship-cancel-", width: 3}, 4, true},
		{"c3", idShape{pre: "c", width: 1}, 3, true},
		{"v2-case-0009-b", idShape{pre: "v2-case-", suf: "-b", width: 4}, 9, true},
		{"alpha", idShape{}, 0, false},
		{"x-1234567890123456789", idShape{}, 0, false}, // wider than a uint64 keeps
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			got, n, ok := splitID(tt.id)
			if got != tt.want || n != tt.n || ok != tt.ok {
				t.Fatalf("splitID(%q) = %+v %d %v, want %+v %d %v", tt.id, got, n, ok, tt.want, tt.n, tt.ok)
			}
			if ok {
				if back, _ := got.format(n); back != tt.id {
					t.Errorf("format gives %q back", back)
				}
			}
		})
	}
}

// A canary's id under the sample contract: a free number of the range the
// rows read so far have in its base row's shape, or the first free one past
// it once the range is full, or past it by a gap like the rows' when they
// came in id order; never a row's read so far, nor another
// canary's; digits over the whole width when the source cannot tell which
// ids it read (past the range only) or under the batch contract.
func TestRangeID(t *testing.T) {
	tests := []struct {
		name     string
		rows     []int // the numbers of "ord-NNNNN" ids read
		seen     bool  // the source tells which ids it read
		batch    bool
		draws    int
		inside   bool // every draw within [min, max] of rows
		pastFrom int  // else: draws are pastFrom, pastFrom+1, … (0: not checked)
		// gap: draws are past the largest row by at most this
		gap int
	}{
		{name: "gaps are filled", rows: []int{30, 10, 40, 14, 31, 20}, seen: true, draws: 20, inside: true},
		{name: "a full range grows", rows: []int{3, 1, 4, 2}, seen: true, draws: 3, pastFrom: 5},
		{name: "without seen, past the range", rows: []int{20, 10}, draws: 2, pastFrom: 21},
		// Rows in id order (a mean gap of 6): a canary's is the next
		// row's number might be, within twice the gap past the last.
		{name: "in id order, past the last by a gap", rows: []int{10, 14, 20, 30, 31, 40}, seen: true, draws: 1, gap: 12},
		{name: "batch: whole-width digits", rows: []int{10, 20}, seen: true, batch: true, draws: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &manifest.Manifest{Canaries: []manifest.Canary{{Name: "c"}}}
			if tt.batch {
				m.Grader.Contract = "batch"
			}
			read := map[string]bool{}
			for seed := range uint64(10) {
				b := New(m, len(tt.rows), seed+1)
				for _, n := range tt.rows {
					id := fmt.Sprintf("ord-%05d", n)
					read[id] = true
					b.Observe(dataset.Case{ID: id})
				}
				if tt.seen {
					b.Seen = func(id string) bool { return read[id] }
				}
				for k := range tt.draws {
					id := b.fakeID("ord-00010")
					if read[id] {
						t.Fatalf("seed %d: id %q is a row's", seed, id)
					}
					for _, other := range b.ids {
						if other == id {
							t.Fatalf("seed %d: id %q is another canary's", seed, id)
						}
					}
					b.ids = append(b.ids, id)
					_, n, ok := splitID(id)
					switch {
					case !ok:
						t.Fatalf("id %q has no number", id)
					case tt.batch:
						if len(id) != len("ord-000010") {
							t.Fatalf("batch id %q: want at least six digits drawn", id)
						}
					case tt.inside && (n < uint64(slices.Min(tt.rows)) || n > uint64(slices.Max(tt.rows))):
						t.Fatalf("seed %d: id %q outside the rows' range", seed, id)
					case tt.pastFrom > 0 && n != uint64(tt.pastFrom+k):
						t.Fatalf("seed %d: draw %d is %q, want number %d", seed, k, id, tt.pastFrom+k)
					case tt.gap > 0 && (n <= 40 || n > uint64(40+tt.gap)):
						t.Fatalf("seed %d: id %q is not past 40 by at most %d", seed, id, tt.gap)
					}
				}
			}
		})
	}
}

// TestSharedItemID: a variant that keeps its base's item gets the id read
// once from the base's; one whose item changed is read itself.
func TestSharedItemID(t *testing.T) {
	base := json.RawMessage(`{"case_id": "c-7", "request": "cancel it"}`)
	s := &sharedItem{item: base}
	for _, tt := range []struct {
		name   string
		item   string
		want   string
		wantOK bool
	}{
		{"the base's item", string(base), "c-7", true},
		{"the same bytes, another slice", `{"case_id": "c-7", "request": "cancel it"}`, "c-7", true},
		{"a field removed", `{"request": "cancel it"}`, "", false},
		{"another id", `{"case_id": "c-8", "request": "cancel it"}`, "c-8", true},
	} {
		if id, ok := s.idOf(json.RawMessage(tt.item), "case_id"); id != tt.want || ok != tt.wantOK {
			t.Errorf("%s: idOf = %q, %v; want %q, %v", tt.name, id, ok, tt.want, tt.wantOK)
		}
	}
	if !s.asked || s.id != "c-7" {
		t.Errorf("the base's id was not kept: %+v", s)
	}
	var none *sharedItem
	if id, ok := none.idOf(base, "case_id"); id != "c-7" || !ok {
		t.Errorf("a variant without a base reads its own item: %q, %v", id, ok)
	}
}
