package dataset

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/gradegate/gradegate/manifest"
)

func TestNearDuplicates(t *testing.T) {
	off := false
	tests := []struct {
		name      string
		lines     []string
		fields    []string
		threshold float64
		enabled   *bool
		want      []wantFinding
	}{
		{
			name: "default fields: texts of five words or more, never the id, slice or family",
			lines: []string{
				`{"item": {"case_id": "d-1", "slice": "same slice text for all", "family": "f", "request": "please cancel the order for the blue teapot today", "note": "x"}}`,
				`{"item": {"case_id": "d-2", "slice": "same slice text for all", "family": "f", "request": "please cancel the order for the blue teapot today!", "note": "x"}}`,
				`{"item": {"case_id": "d-3", "slice": "same slice text for all", "family": "f", "request": "please cancel the order for the green kettle now", "note": "x"}}`,
			},
			want: []wantFinding{{CodeNearDuplicate, manifest.SeverityWarn, "cases.jsonl", 2, "d-2",
				`2 cases are near duplicates (similarity 1.00 of 5-word shingles over request): "d-1" (line 1), "d-2" (line 2)`}},
		},
		{
			name: "a short categorical value is not text",
			lines: []string{
				`{"item": {"case_id": "c-1", "currency": "USD", "status": "approved", "request": "refund the blue teapot to my card please"}}`,
				`{"item": {"case_id": "c-2", "currency": "USD", "status": "approved", "request": "ship the green kettle to the office on monday"}}`,
				`{"item": {"case_id": "c-3", "currency": "USD", "status": "approved"}}`,
				`{"item": {"case_id": "c-4", "currency": "USD", "status": "approved"}}`,
			},
		},
		{
			name: "ids alone do not make near duplicates",
			lines: []string{
				`{"item": {"case_id": "one two three four five six", "request": "alpha"}}`,
				`{"item": {"case_id": "one two three four five six seven", "request": "beta"}}`,
			},
		},
		{
			name: "the label field is never compared",
			lines: []string{
				`{"item": {"case_id": "l-1", "human_score": "one two three four five six"}}`,
				`{"item": {"case_id": "l-2", "human_score": "one two three four five six"}}`,
			},
			want: []wantFinding{
				{CodeLabelDomain, manifest.SeverityHold, "cases.jsonl", 1, "l-1", "item.human_score must be 0 or 1"},
				{CodeLabelDomain, manifest.SeverityHold, "cases.jsonl", 2, "l-2", "item.human_score must be 0 or 1"},
			},
		},
		{
			name: "a text under five words is one shingle",
			lines: []string{
				`{"item": {"case_id": "s-1", "request": "status order 50330"}}`,
				`{"item": {"case_id": "s-2", "request": "Status, order 50330?"}}`,
				`{"item": {"case_id": "s-3", "request": "status order 50331"}}`,
			},
			fields: []string{"request"},
			want: []wantFinding{{CodeNearDuplicate, manifest.SeverityWarn, "cases.jsonl", 2, "s-2",
				`2 cases are near duplicates (similarity 1.00 of 5-word shingles over request): "s-1" (line 1), "s-2" (line 2)`}},
		},
		{
			name: "exact duplicates of short strings, after case and white space",
			lines: []string{
				`{"item": {"case_id": "e-1", "answer": "Yes"}}`,
				`{"item": {"case_id": "e-2", "answer": "no"}}`,
				`{"item": {"case_id": "e-3", "answer": " YES "}}`,
				`{"item": {"case_id": "e-4", "answer": "yes"}}`,
			},
			fields: []string{"answer"},
			want: []wantFinding{{CodeNearDuplicate, manifest.SeverityWarn, "cases.jsonl", 3, "e-3",
				`3 cases have the same text over answer, ignoring case and white space: "e-1" (line 1), "e-3" (line 3), "e-4" (line 4)`}},
		},
		{
			name: "below the threshold",
			lines: []string{
				// 10 words: 6 shingles each, 5 shared: 5/7 = 0.71.
				`{"item": {"case_id": "t-1", "request": "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10"}}`,
				`{"item": {"case_id": "t-2", "request": "w1 w2 w3 w4 w5 w6 w7 w8 w9 other"}}`,
			},
			fields: []string{"request"},
		},
		{
			name: "at a lower threshold",
			lines: []string{
				`{"item": {"case_id": "t-1", "request": "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10"}}`,
				`{"item": {"case_id": "t-2", "request": "w1 w2 w3 w4 w5 w6 w7 w8 w9 other"}}`,
			},
			fields:    []string{"request"},
			threshold: 0.7,
			want: []wantFinding{{CodeNearDuplicate, manifest.SeverityWarn, "cases.jsonl", 2, "t-2",
				`similarity 0.71 of 5-word shingles over request`}},
		},
		{
			name: "words never join across fields",
			lines: []string{
				`{"item": {"case_id": "x-1", "a": "one two three", "b": "four five six"}}`,
				`{"item": {"case_id": "x-2", "a": "one two three four", "b": "five six"}}`,
			},
			fields: []string{"a", "b"},
		},
		{
			name: "a field no item has",
			lines: []string{
				`{"item": {"case_id": "u-1", "request": "alpha beta"}}`,
				`{"item": {"case_id": "u-2", "request": "gamma delta", "prompt": 3}}`,
			},
			fields: []string{"request", "prompt", "question", "request.text"},
			want: []wantFinding{
				{CodeUnknownField, manifest.SeverityWarn, "gradegate.yaml", 12, "", `dataset.near_duplicates.fields names "question", which no item has`},
				{CodeUnknownField, manifest.SeverityWarn, "gradegate.yaml", 12, "", `dataset.near_duplicates.fields names "request.text", which no item has`},
			},
		},
		{
			name: "a duplicated id is not also a near duplicate",
			lines: []string{
				`{"item": {"case_id": "r-1", "request": "the very same request text here"}}`,
				`{"item": {"case_id": "r-1", "request": "the very same request text here"}}`,
			},
			want: []wantFinding{{CodeDuplicateCaseID, manifest.SeverityHold, "cases.jsonl", 1, "r-1", "is on 2 lines: 1, 2"}},
		},
		{
			name: "one finding per cluster",
			lines: []string{
				`{"item": {"case_id": "k-1", "request": "please cancel the order for the blue teapot today"}}`,
				`{"item": {"case_id": "k-2", "request": "we ship parcels to the office every monday morning"}}`,
				`{"item": {"case_id": "k-3", "request": "Please cancel the order for the blue teapot today."}}`,
				`{"item": {"case_id": "k-4", "request": "please cancel the order for the blue teapot today"}}`,
				`{"item": {"case_id": "k-5", "request": "we ship parcels to the office every monday morning!"}}`,
				`{"item": {"case_id": "k-6", "request": "a refund goes back to the card it came from"}}`,
			},
			want: []wantFinding{
				{CodeNearDuplicate, manifest.SeverityWarn, "cases.jsonl", 3, "k-3",
					`3 cases are near duplicates (similarity 1.00 of 5-word shingles over request): "k-1" (line 1), "k-3" (line 3), "k-4" (line 4)`},
				{CodeNearDuplicate, manifest.SeverityWarn, "cases.jsonl", 5, "k-5",
					`2 cases are near duplicates (similarity 1.00 of 5-word shingles over request): "k-2" (line 2), "k-5" (line 5)`},
			},
		},
		{
			name: "clusters in the order their first repeats come",
			lines: []string{
				`{"item": {"case_id": "j-1", "request": "please cancel the order for the blue teapot today"}}`,
				`{"item": {"case_id": "j-2", "request": "we ship parcels to the office every monday morning"}}`,
				`{"item": {"case_id": "j-3", "request": "we ship parcels to the office every monday morning"}}`,
				`{"item": {"case_id": "j-4", "request": "please cancel the order for the blue teapot today"}}`,
			},
			want: []wantFinding{
				{CodeNearDuplicate, manifest.SeverityWarn, "cases.jsonl", 3, "j-3", `"j-2" (line 2), "j-3" (line 3)`},
				{CodeNearDuplicate, manifest.SeverityWarn, "cases.jsonl", 4, "j-4", `"j-1" (line 1), "j-4" (line 4)`},
			},
		},
		{
			name: "a cluster of near and exact duplicates gives its range of similarity",
			lines: func() []string {
				var words []string
				for i := range 60 {
					words = append(words, fmt.Sprintf("w%d", i))
				}
				text := strings.Join(words, " ")
				return []string{
					fmt.Sprintf(`{"item": {"case_id": "v-1", "request": %q}}`, text),
					fmt.Sprintf(`{"item": {"case_id": "v-2", "request": %q}}`, strings.ToUpper(text)),
					// The last word changed: 55 of 57 shingles shared.
					fmt.Sprintf(`{"item": {"case_id": "v-3", "request": %q}}`, strings.Join(words[:59], " ")+" other"),
				}
			}(),
			want: []wantFinding{{CodeNearDuplicate, manifest.SeverityWarn, "cases.jsonl", 2, "v-2",
				`3 cases are near duplicates (similarity 0.96 to 1.00 of 5-word shingles over request): "v-1" (line 1), "v-2" (line 2), "v-3" (line 3)`}},
		},
		{
			name: "a cluster names its first five cases and counts the rest",
			lines: func() []string {
				var out []string
				for i := range 7 {
					out = append(out, fmt.Sprintf(`{"item": {"case_id": "m-%d", "request": "one and the same request text"}}`, i+1))
				}
				return out
			}(),
			want: []wantFinding{{CodeNearDuplicate, manifest.SeverityWarn, "cases.jsonl", 2, "m-2",
				`7 cases have the same text over request, ignoring case and white space: "m-1" (line 1), "m-2" (line 2), "m-3" (line 3), "m-4" (line 4), "m-5" (line 5) and 2 more`}},
		},
		{
			name: "conversations: the text inside messages, named by its path",
			lines: []string{
				`{"item": {"case_id": "o-1", "messages": [{"role": "system", "content": "You are a support agent for a teapot shop."}, {"role": "user", "content": "Where is my order 50330, it was due on monday?"}]}}`,
				`{"item": {"case_id": "o-2", "messages": [{"role": "system", "content": "You are a support agent for a teapot shop."}, {"role": "user", "content": "Can I pay for the green kettle with a gift card?"}]}}`,
				`{"item": {"case_id": "o-3", "messages": [{"role": "system", "content": "You are a support agent for a teapot shop."}, {"role": "user", "content": "where is my order 50330 it was due on Monday"}]}}`,
				`{"item": {"case_id": "o-4", "messages": [{"role": "system", "content": "You are a support agent for a teapot shop."}, {"role": "user", "content": "Please close my account and delete my address."}]}}`,
				`{"item": {"case_id": "o-5", "messages": [{"role": "system", "content": "You are a support agent for a teapot shop."}, {"role": "user", "content": "Do you ship the blue teapot to Norway this winter?"}]}}`,
				`{"item": {"case_id": "o-6", "messages": [{"role": "system", "content": "You are a support agent for a teapot shop."}, {"role": "user", "content": "My lid arrived cracked, can you send another one?"}]}}`,
			},
			want: []wantFinding{{CodeNearDuplicate, manifest.SeverityWarn, "cases.jsonl", 3, "o-3",
				`2 cases are near duplicates (similarity 1.00 of 5-word shingles over messages[1].content): "o-1" (line 1), "o-3" (line 3)`}},
		},
		{
			name: "a long system prompt that every row shares is context, not content",
			lines: func() []string {
				prompt := "You answer questions about orders, refunds and parcels for the teapot shop, politely and briefly. " +
					"Never promise a delivery date that the tracking page does not show. Refunds go back to the card that paid, " +
					"within five working days, and a gift card is refunded as a new gift card. Parcels to Norway, Iceland and " +
					"Switzerland pay customs on arrival. If a customer is angry, apologise once and then solve the problem."
				asks := []string{"Where is my order 50330, it was due on monday?", "Can I pay for the green kettle with a gift card?",
					"Please close my account and delete my address.", "Do you ship the blue teapot to Norway this winter?",
					"My lid arrived cracked, can you send another one?", "Is the copper kettle safe on an induction hob?"}
				var out []string
				for i, ask := range asks {
					out = append(out, fmt.Sprintf(`{"item": {"case_id": "g-%d", "messages": [{"role": "system", "content": %q}, {"role": "user", "content": %q}]}}`, i+1, prompt, ask))
				}
				return out
			}(),
		},
		{
			name: "references in nested objects are compared; a short shared answer is not",
			lines: []string{
				`{"item": {"case_id": "n-1", "reference_answer": "42", "reference": {"answer": "The parcel left the warehouse on the third of May."}}}`,
				`{"item": {"case_id": "n-2", "reference_answer": "42", "reference": {"answer": "Refunds reach the card within five working days."}}}`,
				`{"item": {"case_id": "n-3", "reference_answer": "42", "reference": {"answer": "the parcel left the warehouse on the third of may"}}}`,
			},
			want: []wantFinding{{CodeNearDuplicate, manifest.SeverityWarn, "cases.jsonl", 3, "n-3",
				`2 cases are near duplicates (similarity 1.00 of 5-word shingles over reference.answer): "n-1" (line 1), "n-3" (line 3)`}},
		},
		{
			name: "fields may name a path into lists and objects",
			lines: []string{
				`{"item": {"case_id": "p-1", "messages": [{"role": "system", "content": "one shared system prompt for all"}, {"role": "user", "content": "short a"}]}}`,
				`{"item": {"case_id": "p-2", "messages": [{"role": "system", "content": "one shared system prompt for all"}, {"role": "user", "content": "Short  A"}]}}`,
				`{"item": {"case_id": "p-3", "messages": [{"role": "system", "content": "one shared system prompt for all"}, {"role": "user", "content": "short b"}]}}`,
			},
			fields: []string{"messages[1].content"},
			want: []wantFinding{{CodeNearDuplicate, manifest.SeverityWarn, "cases.jsonl", 2, "p-2",
				`2 cases have the same text over messages[1].content, ignoring case and white space: "p-1" (line 1), "p-2" (line 2)`}},
		},
		{
			name: "a field path with [] covers every element",
			lines: []string{
				`{"item": {"case_id": "q-1", "messages": [{"content": "hello there"}, {"content": "first question"}]}}`,
				`{"item": {"case_id": "q-2", "messages": [{"content": "hello there"}, {"content": "second question"}]}}`,
				`{"item": {"case_id": "q-3", "messages": [{"content": "hello there"}, {"content": "first question"}]}}`,
			},
			fields: []string{"messages[].content"},
			want: []wantFinding{{CodeNearDuplicate, manifest.SeverityWarn, "cases.jsonl", 3, "q-3",
				`2 cases have the same text over messages[0].content and messages[1].content, ignoring case and white space: "q-1" (line 1), "q-3" (line 3)`}},
		},
		{
			name: "the fields override compares what it names, short or not",
			lines: []string{
				`{"item": {"case_id": "f-1", "request": "please cancel the order for the blue teapot today", "sku": "TP-1"}}`,
				`{"item": {"case_id": "f-2", "request": "please cancel the order for the blue teapot today", "sku": "TP-2"}}`,
				`{"item": {"case_id": "f-3", "request": "ship it", "sku": "TP-1"}}`,
			},
			fields: []string{"sku"},
			want: []wantFinding{{CodeNearDuplicate, manifest.SeverityWarn, "cases.jsonl", 3, "f-3",
				`2 cases have the same text over sku, ignoring case and white space: "f-1" (line 1), "f-3" (line 3)`}},
		},
		{
			name: "enabled: false switches the screen off",
			lines: []string{
				`{"item": {"case_id": "z-1", "request": "the very same request text here"}}`,
				`{"item": {"case_id": "z-2", "request": "the very same request text here"}}`,
			},
			fields:  []string{"question"},
			enabled: &off,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testManifest(".")
			m.Lines = map[string]int{"dataset.near_duplicates.fields": 12}
			m.Dataset.NearDuplicates.Fields = tt.fields
			m.Dataset.NearDuplicates.Enabled = tt.enabled
			if tt.threshold != 0 {
				m.Dataset.NearDuplicates.Threshold = tt.threshold
			}
			files := fstest.MapFS{"cases.jsonl": {Data: []byte(strings.Join(tt.lines, "\n"))}}
			set, err := Load(files, m)
			if err != nil {
				t.Fatal(err)
			}
			checkFindings(t, set.Findings, tt.want)
		})
	}
}

// TestNearDuplicatesCapped: at most 20 clusters are listed, then one
// finding counts the rest.
func TestNearDuplicatesCapped(t *testing.T) {
	var lines []string
	for i := range 25 {
		text := fmt.Sprintf("request number %d asks for something of its own", i)
		for k := range 2 {
			lines = append(lines, fmt.Sprintf(`{"item": {"case_id": "n-%d-%d", "request": %q}}`, i, k, text))
		}
	}
	set, err := Load(fstest.MapFS{"cases.jsonl": {Data: []byte(strings.Join(lines, "\n"))}}, testManifest("."))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(set.Findings); got != maxClusterFindings+1 {
		t.Fatalf("got %d findings, want %d", got, maxClusterFindings+1)
	}
	if first := set.Findings[0]; first.Line != 2 || first.CaseID != "n-0-1" {
		t.Errorf("first finding = %+v, want the cluster of line 1 and 2", first)
	}
	if last := set.Findings[maxClusterFindings]; last.Message != "5 more clusters of near duplicates (10 cases) are not listed" {
		t.Errorf("last finding = %q", last.Message)
	}
}

// TestScreenFileChanged: the rows read again must be the rows read first.
func TestScreenFileChanged(t *testing.T) {
	rows := []string{
		`{"item": {"case_id": "a", "request": "please cancel the order for the blue teapot today"}}`,
		`{"item": {"case_id": "b", "request": "please cancel the order for the blue teapot today"}}`,
	}
	files := fstest.MapFS{"cases.jsonl": {Data: []byte(`{"item": {"case_id": "a", "request": "something else"}}` + "\n" + rows[1] + "\n")}}
	s := NewScreen(ScreenConfig{Manifest: testManifest("."), FS: files, File: "cases.jsonl"})
	for i, r := range rows {
		var line struct{ Item json.RawMessage }
		if err := json.Unmarshal([]byte(r), &line); err != nil {
			t.Fatal(err)
		}
		s.Add(i+1, string(rune('a'+i)), line.Item)
	}
	if _, err := s.Findings(); err == nil || !strings.Contains(err.Error(), "cases.jsonl line 1 is not what it was on the first read") {
		t.Errorf("err = %v, want a changed-file error", err)
	}
}

// TestExactGroups checks the grouping of equal exact hashes, including
// hashes that agree in every bit the sort looks at but differ in the low
// bits that the row index replaces.
func TestExactGroups(t *testing.T) {
	tests := []struct {
		name       string
		exact      []uint64
		wantFirsts []int32
		wantDup    []int
		wantNamed  []int
	}{
		{
			name:  "no repeats",
			exact: []uint64{0x10, 0x20, 0x30},
		},
		{
			name:       "a group of three",
			exact:      []uint64{0x70, 0x20, 0x70, 0x70},
			wantFirsts: []int32{0},
			wantDup:    []int{2, 3},
			wantNamed:  []int{0, 2, 3},
		},
		{
			// With 4 rows the low 3 bits hold the index: 0x101 and 0x102
			// agree above them, yet differ.
			name:       "same high bits, different hashes",
			exact:      []uint64{0x101, 0x102, 0x101, 0x102},
			wantFirsts: []int32{0, 1},
			wantDup:    []int{2, 3},
			wantNamed:  []int{0, 1, 2, 3},
		},
		{
			name:       "the first five are named",
			exact:      []uint64{9 << 8, 9 << 8, 9 << 8, 9 << 8, 9 << 8, 9 << 8, 9 << 8},
			wantFirsts: []int32{0},
			wantDup:    []int{1, 2, 3, 4, 5, 6},
			wantNamed:  []int{0, 1, 2, 3, 4},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := len(tt.exact)
			uf, dup, named := newUnionFind(n), newBitset(n), newBitset(n)
			firsts := exactGroups(n, func(i int) uint64 { return tt.exact[i] }, make([]uint64, n), make([]int, 1<<16), uf, dup, named)
			slices.Sort(firsts)
			if !slices.Equal(firsts, tt.wantFirsts) {
				t.Errorf("firsts = %v, want %v", firsts, tt.wantFirsts)
			}
			var gotDup, gotNamed []int
			for i := range n {
				if dup.has(i) {
					gotDup = append(gotDup, i)
				}
				if named.has(i) {
					gotNamed = append(gotNamed, i)
				}
				for j := range n {
					if same := uf.find(int32(i)) == uf.find(int32(j)); same != (tt.exact[i] == tt.exact[j]) {
						t.Errorf("rows %d and %d joined = %v, want %v", i, j, same, !same)
					}
				}
			}
			if !slices.Equal(gotDup, tt.wantDup) || !slices.Equal(gotNamed, tt.wantNamed) {
				t.Errorf("dup = %v, named = %v; want %v, %v", gotDup, gotNamed, tt.wantDup, tt.wantNamed)
			}
		})
	}
}

// TestSortKeys checks the bucket sort against the standard one, over the
// rows kept, with many keys that agree in their top 16 bits.
func TestSortKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for _, tt := range []struct {
		name string
		key  func(i int) uint64
	}{
		{"band hash and row", func(i int) uint64 { return uint64(r.IntN(4))<<62 | uint64(r.IntN(8))<<32 | uint64(i) }},
		{"same top bits", func(i int) uint64 { return 7<<48 | uint64(r.IntN(50))<<13 | uint64(i) }},
		{"spread", func(int) uint64 { return r.Uint64() >> uint(r.IntN(3)) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const n = 5000
			keys := make([]uint64, n)
			for i := range keys {
				keys[i] = tt.key(i)
			}
			keep := func(i int) bool { return i%7 != 3 }
			var want []uint64
			for i, k := range keys {
				if keep(i) {
					want = append(want, k)
				}
			}
			slices.Sort(want)
			buf, count := make([]uint64, n), make([]int, 1<<16)
			for round := range 2 { // the buffers are reused
				got := sortKeys(buf, count, n, func(i int) (uint64, bool) { return keys[i], keep(i) })
				if !slices.Equal(got, want) {
					t.Errorf("round %d: order differs from slices.Sort", round)
				}
			}
		})
	}
}

// TestSignatureEstimatesJaccard: over many pairs of sets with a known
// Jaccard similarity, the share of signature bins on which the two agree
// is that similarity, and pairs at 0.9 share a band.
func TestSignatureEstimatesJaccard(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 13))
	sign := func(set []uint64) ([sigBins]uint32, [numBands]uint32) {
		var sig [sigBins]uint32
		for k := range sig {
			sig[k] = emptyBin
		}
		for _, h := range set {
			if bin, v := binOf(h); v < sig[bin] {
				sig[bin] = v
			}
		}
		densify(&sig)
		return sig, bandsOf(&sig)
	}
	for _, tt := range []struct {
		shared, own int // |A∩B| and |A\B| = |B\A|
	}{{90, 5}, {60, 20}, {8, 1}, {1, 0}} {
		want := float64(tt.shared) / float64(tt.shared+2*tt.own)
		const pairs = 400
		agree, banded := 0, 0
		for range pairs {
			var a, b []uint64
			for range tt.shared {
				h := mix64(r.Uint64())
				a, b = append(a, h), append(b, h)
			}
			for range tt.own {
				a, b = append(a, mix64(r.Uint64())), append(b, mix64(r.Uint64()))
			}
			sa, ba := sign(a)
			sb, bb := sign(b)
			for k := range sa {
				if sa[k] == sb[k] {
					agree++
				}
			}
			for k := range ba {
				if ba[k] == bb[k] {
					banded++
					break
				}
			}
		}
		got := float64(agree) / float64(pairs*sigBins)
		if got < want-0.03 || got > want+0.03 {
			t.Errorf("J = %.3f: bins agree %.3f of the time", want, got)
		}
		if want >= 0.9 && banded < pairs*99/100 {
			t.Errorf("J = %.3f: %d of %d pairs share a band", want, banded, pairs)
		}
	}
}

// TestSplitWords: words are runs of letters and digits in any case, the
// same wherever they stand in the text; the exact hash ignores case and
// runs of white space but not punctuation.
func TestSplitWords(t *testing.T) {
	tests := []struct {
		a, b       string
		sameWords  bool
		sameExact  bool
		wantWordsA int
	}{
		{"Hello world", "hello   WORLD", true, true, 2},
		{"  hello world ", "hello world", true, true, 2},
		{"hello, world", "hello world", true, false, 2},
		{"a longwordofmanyletters9 b", "A LONGWORDOFMANYLETTERS9 B", true, true, 3},
		// The same word at the very end and followed by more text.
		{"x abcdefghijk", "x ABCDEFGHIJK", true, true, 2},
		{"Crème brûlée", "crème BRÛLÉE", true, true, 2},
		{"hello world", "hello word", false, false, 2},
		{"ab cd", "abcd", false, false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.a+"|"+tt.b, func(t *testing.T) {
			var e extractor
			wa, xa := e.splitWords([]byte(tt.a))
			wa = slices.Clone(wa)
			wb, xb := e.splitWords([]byte(tt.b))
			if len(wa) != tt.wantWordsA {
				t.Errorf("%q: %d words, want %d", tt.a, len(wa), tt.wantWordsA)
			}
			if got := slices.Equal(wa, wb); got != tt.sameWords {
				t.Errorf("same words = %v, want %v", got, tt.sameWords)
			}
			if got := xa == xb; got != tt.sameExact {
				t.Errorf("same exact hash = %v, want %v", got, tt.sameExact)
			}
		})
	}
	// A word hashes the same whether eight bytes follow it or not.
	var e extractor
	short, _ := e.splitWords([]byte("teapot"))
	short = slices.Clone(short)
	long, _ := e.splitWords([]byte("teapot and a long tail of words"))
	if short[0] != long[0] {
		t.Error(`"teapot" hashes differently at the end of a text`)
	}
}

// The end phase reads every row again: a row is found again however its
// line is written (spaces, the sample first, CRLF
// endings, a byte order mark, blank lines), and the row the reader took
// is the one compared.
func TestScreenRereadsRowsAsRead(t *testing.T) {
	const text = "please cancel the order for the blue teapot today"
	for _, tt := range []struct {
		name  string
		lines []string
		want  int // cases in the one cluster
	}{
		{"plain", []string{
			`{"item": {"case_id": "a", "request": "` + text + `"}}`,
			`{"item": {"case_id": "b", "request": "` + text + `"}}`,
		}, 2},
		{"spaces and the sample first", []string{
			"\ufeff" + `{ "sample" : {"output_text": "x"} , "item" : { "case_id" : "a" , "request" : "` + text + `" } }`,
			``,
			`   {"item":{"case_id":"b","request":"` + text + `"},"sample":{"output_text":"y"}}` + "\r",
		}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := fstest.MapFS{"cases.jsonl": {Data: []byte(strings.Join(tt.lines, "\n") + "\n")}}
			set, err := Load(files, testManifest("."))
			if err != nil {
				t.Fatal(err)
			}
			got := findingsWith(set.Findings, CodeNearDuplicate)
			if len(got) != 1 || !strings.HasPrefix(got[0].Message, fmt.Sprintf("%d cases have the same text", tt.want)) {
				t.Errorf("near-duplicate findings %+v, want one cluster of %d", got, tt.want)
			}
		})
	}
}

// TestScannerNotJSON: the near-duplicate screen's scanner ends on bytes
// that are not JSON (a value of no bytes, an array closed by a brace) with
// "not compared", and returns: a fuzzed row once kept it in an array's loop
// for ever.
func TestScannerNotJSON(t *testing.T) {
	for _, tt := range []struct {
		in   string
		skip int // skipValue from 0
		item bool
	}{
		{in: `}`, skip: -1},
		{in: `]`, skip: -1},
		{in: `,`, skip: -1},
		{in: `1`, skip: 1},
		{in: `[1}`, skip: 3, item: false}, // skipValue counts brackets only
		{in: `{"x": [}`, skip: -1},
		{in: `{"x": [[]]^]}}`, skip: 12},
		{in: `{"x": [[[[]]]^]]]}}`, skip: 16},
		{in: `{"x": [1, 2], "y": "a b c"}`, skip: 27, item: true},
	} {
		t.Run(tt.in, func(t *testing.T) {
			if got := skipValue([]byte(tt.in), 0); got != tt.skip {
				t.Errorf("skipValue = %d, want %d", got, tt.skip)
			}
			done := make(chan bool, 1)
			go func() {
				e := &extractor{onLeaf: func(*leaf, []pathStep) {}}
				done <- e.item([]byte(tt.in))
			}()
			select {
			case got := <-done:
				if want := tt.item && tt.in[0] == '{'; got != want {
					t.Errorf("item = %v, want %v", got, want)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the scanner did not return")
			}
		})
	}
}

// TestBandBucketsOnEveryCore: the bands sorted on several cores give the
// buckets one core gives, band by band and in the same order, rows in dup
// left out.
func TestBandBucketsOnEveryCore(t *testing.T) {
	const n = 70_000
	r := rand.New(rand.NewPCG(17, 19))
	bands := newBlocks[[numBands]uint32](n)
	dup := newBitset(n)
	for i := range n {
		for b := range numBands {
			bands.at(i)[b] = uint32(r.IntN(n / 2)) // most hashes shared by a few rows
		}
		if r.IntN(10) == 0 {
			dup.set(i)
		}
	}
	buckets := func(workers int) []bandBucket {
		return bandBuckets(n, bands, dup, make([]uint64, n), make([]int, 1<<16), workers)
	}
	want := buckets(1)
	if len(want[0].ends) == 0 {
		t.Fatal("no band has a bucket of more than one row")
	}
	for _, w := range []int{2, 3, numBands} {
		if got := buckets(w); !reflect.DeepEqual(got, want) {
			t.Errorf("%d cores: the buckets differ from one core's", w)
		}
	}
	if sortWorkers(100) != 1 || sortWorkers(1_000_000) != min(readWorkers(), numBands) {
		t.Errorf("sortWorkers: %d for 100 rows, %d for a million", sortWorkers(100), sortWorkers(1_000_000))
	}
}
