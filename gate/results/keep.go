package results

import (
	"cmp"
	"slices"

	"github.com/gradegate/gradegate/manifest"
)

// KeptPerRank is how many rows of each kind the reports can show are kept
// in memory: more than any report lists (10 in the terminal, 50 in
// markdown), so what they show is what a run of any size would show.
const KeptPerRank = 200

// Keeper keeps the case rows the reports show, bounded: the first
// KeptPerRank of each rank worstCases orders by (errors, omitted, failures;
// in a mandatory slice first). Passing rows are not kept.
type Keeper struct {
	mandatory map[string]bool
	seq       int
	perRank   [6]int
	kept      []keptRow
	Dropped   int
}

type keptRow struct {
	seq int
	row CaseResult
}

// NewKeeper keeps the rows the reports of a run under g show.
func NewKeeper(g manifest.Gate) *Keeper {
	k := &Keeper{mandatory: map[string]bool{}}
	for _, r := range g.Slices {
		if r.Mandatory {
			k.mandatory[r.Name] = true
		}
	}
	return k
}

// Add sees one case row, in dataset order.
func (k *Keeper) Add(c CaseResult) {
	k.seq++
	if c.Status == StatusPass {
		return
	}
	r := 4 // fail
	switch c.Status {
	case StatusError:
		r = 0
	case StatusOmitted:
		r = 2
	}
	if !slices.ContainsFunc(c.Slices, func(s string) bool { return k.mandatory[s] }) {
		r++
	}
	if k.perRank[r] >= KeptPerRank {
		k.Dropped++
		return
	}
	k.perRank[r]++
	k.kept = append(k.kept, keptRow{k.seq, c})
}

// rows are the kept rows in dataset order.
func (k *Keeper) Rows() []CaseResult {
	slices.SortFunc(k.kept, func(a, b keptRow) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]CaseResult, len(k.kept))
	for i, kr := range k.kept {
		out[i] = kr.row
	}
	return out
}
