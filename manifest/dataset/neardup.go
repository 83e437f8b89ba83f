package dataset

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/gradegate/gradegate/manifest"
)

const (
	// shingleWords is the width of a shingle: 5 consecutive words.
	shingleWords = 5
	// defaultNearDuplicateThreshold applies when the manifest leaves
	// dataset.near_duplicates.threshold at 0.
	defaultNearDuplicateThreshold = 0.85
	// maxNearDuplicateFindings bounds the findings one dataset produces;
	// beyond it a single finding counts the pairs left out.
	maxNearDuplicateFindings = 100
)

// shingled is one case's shingle set: sorted, without repeats.
type shingled struct {
	row      int
	shingles []uint64
}

// nearDuplicates screens every pair of cases for near-duplicate text
// (Jaccard similarity of 5-word shingles at or above the threshold) and
// reports fields named in near_duplicates.fields that no item has.
//
// Shingles are taken per field and tagged with the field's name, so words
// never join across two fields. A text with fewer than five words is one
// shingle. Only candidate pairs (see candidatePairs) are compared; the
// worst case stays O(n²), but a few thousand cases take milliseconds.
func (l *loader) nearDuplicates(rows []row) []manifest.Finding {
	nd := l.m.Dataset.NearDuplicates
	threshold := nd.Threshold
	if threshold <= 0 {
		threshold = defaultNearDuplicateThreshold
	}

	var out []manifest.Finding
	for _, name := range nd.Fields {
		if !slices.ContainsFunc(rows, func(r row) bool { _, ok := r.fields[name]; return ok }) {
			out = append(out, manifest.Finding{
				Code: CodeUnknownField, Severity: manifest.SeverityWarn,
				File: l.m.File, Line: l.m.Line("dataset.near_duplicates.fields"),
				Message: fmt.Sprintf("dataset.near_duplicates.fields names %q, which no item has", name),
			})
		}
	}

	sets := make([]shingled, 0, len(rows))
	for i, r := range rows {
		if s := l.shingles(r); len(s) > 0 {
			sets = append(sets, shingled{row: i, shingles: s})
		}
	}

	type pair struct {
		a, b int // row indexes, a < b
		sim  float64
	}
	var pairs []pair
	for _, c := range candidatePairs(sets, threshold) {
		a, b := sets[c[0]], sets[c[1]]
		ra, rb := rows[a.row], rows[b.row]
		if ra.hasID && rb.hasID && ra.ID == rb.ID {
			continue // already a duplicate_case_id
		}
		if sim := jaccard(a.shingles, b.shingles); sim >= threshold {
			pairs = append(pairs, pair{min(a.row, b.row), max(a.row, b.row), sim})
		}
	}
	slices.SortFunc(pairs, func(x, y pair) int {
		return cmp.Or(cmp.Compare(x.b, y.b), cmp.Compare(x.a, y.a))
	})

	over := "every string field"
	if len(nd.Fields) > 0 {
		over = strings.Join(nd.Fields, ", ")
	}
	for i, p := range pairs {
		if i == maxNearDuplicateFindings {
			out = append(out, manifest.Finding{
				Code: CodeNearDuplicate, Severity: manifest.SeverityWarn, File: l.file,
				Message: fmt.Sprintf("%d more near-duplicate pairs are not listed", len(pairs)-i),
			})
			break
		}
		a, b := rows[p.a], rows[p.b]
		out = append(out, manifest.Finding{
			Code: CodeNearDuplicate, Severity: manifest.SeverityWarn,
			File: b.File, Line: b.Line, CaseID: b.ID,
			Message: fmt.Sprintf("case %q (line %d) is a near duplicate of case %q (line %d): similarity %.2f of %d-word shingles over %s",
				b.ID, b.Line, a.ID, a.Line, p.sim, shingleWords, over),
		})
	}
	return out
}

// candidatePairs returns every pair of sets (indexes into sets) that can
// reach the threshold, by prefix filtering: with shingles ranked rarest
// first, two sets with Jaccard similarity ≥ t share at least one shingle
// among the first |A| - ⌈t·|A|⌉ + 1 of each (Chaudhuri et al., "A Primitive
// Operator for Similarity Joins", ICDE 2006). Only those prefixes are
// indexed, so a shingle every item shares (a fixed status, say) does not
// make every pair a candidate. Pairs whose sizes alone rule the threshold
// out (|A∩B|/|A∪B| ≤ |A|/|B|) are dropped here too.
func candidatePairs(sets []shingled, threshold float64) [][2]int {
	df := map[uint64]int{}
	for _, s := range sets {
		for _, h := range s.shingles {
			df[h]++
		}
	}
	index := map[uint64][]int{}
	seen := make([]int, len(sets)) // seen[j] == i+1: pair (j, i) already listed
	var out [][2]int
	for i, s := range sets {
		ranked := slices.Clone(s.shingles)
		slices.SortFunc(ranked, func(x, y uint64) int { return cmp.Or(cmp.Compare(df[x], df[y]), cmp.Compare(x, y)) })
		// The epsilon keeps t·|A| = 17.000000000000004 from costing a
		// prefix shingle; a longer prefix only adds candidates.
		need := int(math.Ceil(threshold*float64(len(ranked)) - 1e-9))
		prefix := ranked[:min(len(ranked), max(1, len(ranked)-need+1))]
		for _, h := range prefix {
			for _, j := range index[h] {
				if seen[j] == i+1 {
					continue
				}
				seen[j] = i + 1
				small, large := float64(len(sets[j].shingles)), float64(len(s.shingles))
				if small > large {
					small, large = large, small
				}
				if small >= threshold*large {
					out = append(out, [2]int{j, i})
				}
			}
			index[h] = append(index[h], i)
		}
	}
	return out
}

// shingles returns a case's hashed shingle set over the compared fields:
// the manifest's list, or else every string field but the id, slice,
// family and label.
func (l *loader) shingles(r row) []uint64 {
	var names []string
	if cfg := l.m.Dataset.NearDuplicates.Fields; len(cfg) > 0 {
		names = cfg
	} else {
		for _, k := range sortedKeys(r.fields) {
			switch k {
			case l.fields.ID, l.fields.Slice, l.fields.Family, l.fields.Label:
				continue
			}
			names = append(names, k)
		}
	}
	var set []uint64
	for _, name := range names {
		raw, ok := r.fields[name]
		if !ok {
			continue
		}
		var text string
		if json.Unmarshal(raw, &text) != nil {
			continue // not a string: not compared
		}
		words := strings.FieldsFunc(strings.ToLower(text), func(c rune) bool {
			return !unicode.IsLetter(c) && !unicode.IsDigit(c)
		})
		if len(words) == 0 {
			continue
		}
		n := max(1, len(words)-shingleWords+1)
		for i := range n {
			set = append(set, shingleHash(name, words[i:min(i+shingleWords, len(words))]))
		}
	}
	slices.Sort(set)
	return slices.Compact(set)
}

// shingleHash hashes a field-tagged shingle.
func shingleHash(field string, words []string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(field))
	for _, w := range words {
		h.Write([]byte{0})
		h.Write([]byte(w))
	}
	return h.Sum64()
}

// jaccard is |A∩B| / |A∪B| for two sorted sets without repeats.
func jaccard(a, b []uint64) float64 {
	inter := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}
