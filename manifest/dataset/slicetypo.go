package dataset

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/gradegate/gradegate/manifest"
)

// CodeSliceTypo warns of a slice that a row or two carry whose name is a
// typo of a larger slice's or of one gate.slices names ("elegible" beside
// "eligible"): such a row silently leaves the slice it was meant for.
const CodeSliceTypo = "slice_typo"

// maxSliceNames bounds how many distinct slice names the typo check keeps:
// a dataset with a slice per row would otherwise hold one entry per row.
const maxSliceNames = 10_000

// rareSliceRows is the most rows a slice may have and still be taken for a
// typo of another.
const rareSliceRows = 2

// sliceSeen is what the typo check keeps of one slice name.
type sliceSeen struct {
	rows int
	line int    // its first row
	id   string // that row's case_id
}

// sliceTally counts the rows of each slice name, and where each is first seen.
type sliceTally struct {
	seen map[string]*sliceSeen
	full bool
}

func (s *sliceTally) add(name string, line int, id string) {
	if s.seen == nil {
		s.seen = map[string]*sliceSeen{}
	}
	if e := s.seen[name]; e != nil {
		e.rows++
		return
	}
	if len(s.seen) >= maxSliceNames {
		s.full = true
		return
	}
	s.seen[name] = &sliceSeen{rows: 1, line: line, id: id}
}

// findings names every rare slice (at most rareSliceRows rows, not named in
// gate.slices) whose name is within a typo of a slice with more rows, or of
// one gate.slices names.
func (s *sliceTally) findings(file string, rules []manifest.SliceRule) []manifest.Finding {
	ruled := map[string]bool{}
	for _, r := range rules {
		ruled[r.Name] = true
	}
	names := make([]string, 0, len(s.seen))
	for n := range s.seen {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []manifest.Finding
	for _, n := range names {
		e := s.seen[n]
		if e.rows > rareSliceRows || ruled[n] {
			continue
		}
		var known []string
		for _, o := range names {
			if o != n && s.seen[o].rows > e.rows {
				known = append(known, o)
			}
		}
		for r := range ruled {
			if r != n && !slices.Contains(known, r) {
				known = append(known, r)
			}
		}
		slices.Sort(known)
		to := typoOf(n, known)
		if to == "" {
			continue
		}
		about := "gate.slices names it"
		if o := s.seen[to]; o != nil {
			about = fmt.Sprintf("%d rows", o.rows)
		}
		out = append(out, manifest.Finding{Code: CodeSliceTypo, Severity: manifest.SeverityWarn, File: file, Line: e.line, CaseID: e.id,
			Message: fmt.Sprintf("slice %q has %s; did you mean %q (%s)? As written, the row counts in %q and not in %q",
				n, plural(e.rows, "row", "rows"), to, about, n, to)})
	}
	slices.SortStableFunc(out, func(a, b manifest.Finding) int { return cmp.Compare(a.Line, b.Line) })
	return out
}

// typoHint is " (did you mean "NAME"?)" for the one of known that name is
// a typo of (typoOf), or "" when there is none.
func typoHint(name string, known []string) string {
	if t := typoOf(name, known); t != "" {
		return fmt.Sprintf(" (did you mean %q?)", t)
	}
	return ""
}

// typoOf is the one of known that name is a typo of: the nearest by edit
// distance, within one edit for a short name and two for a longer one, or ""
// when none is, or when two are equally near.
func typoOf(name string, known []string) string {
	if len(name) < 4 {
		return "" // v1 and v2, en and es: short names differ on purpose
	}
	limit := 1
	if len(name) >= 6 {
		limit = 2
	}
	best, bestDist, ties := "", limit+1, 0
	for _, k := range known {
		d := manifest.EditDistance(name, k)
		switch {
		case d < bestDist:
			best, bestDist, ties = k, d, 0
		case d == bestDist:
			ties++
		}
	}
	if best == "" || ties > 0 {
		return ""
	}
	return best
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
