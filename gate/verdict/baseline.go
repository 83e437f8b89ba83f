package verdict

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// ApplyBaseline records b in the results and holds as regressed_vs_baseline
// when the pass rate on the cases graded in both runs fell by more than
// rule.MaxDrop, and for every mandatory slice in which a case went from pass
// to fail. Mandatory slices are those of r.Slices.
//
// In a shard of several the cohort is only the shard's part, so a drop is
// a warning there; a mandatory case that flipped is one in the union too,
// and holds.
func ApplyBaseline(r *results.Results, b *results.Baseline, rule manifest.Baseline) {
	b.MaxDrop = rule.MaxDrop
	if b.Flips == nil {
		b.Flips = []results.BaselineFlip{}
	}
	mandatory := map[string]bool{}
	for _, s := range r.Slices {
		if s.Mandatory {
			mandatory[s.Name] = true
		}
	}
	regressed := map[string][]string{} // mandatory slice → case ids
	var order []string
	for i := range b.Flips {
		f := &b.Flips[i]
		for _, s := range f.Slices {
			if !mandatory[s] {
				continue
			}
			f.Mandatory = true
			if f.Regressed() {
				if _, ok := regressed[s]; !ok {
					order = append(order, s)
				}
				regressed[s] = append(regressed[s], f.CaseID)
			}
		}
	}
	b.Status = results.StatusPass
	// rateEpsilon keeps a drop of exactly max_drop (after rounding) a pass.
	if drop := b.Drop(); drop > rule.MaxDrop+rateEpsilon {
		msg := fmt.Sprintf("the pass rate on the %d cases graded in both runs fell by %s against %s (gate.baseline.max_drop %s)",
			b.Cohort, percent(drop), b.File, percent(rule.MaxDrop))
		if r.Shard.Partial() {
			r.Warnings = append(r.Warnings, results.Warning{Code: results.ReasonRegressedVsBaseline, Message: msg + "; this shard's cases only"})
			b.Status = StatusWarn
		} else {
			r.Reasons = append(r.Reasons, results.Reason{Code: results.ReasonRegressedVsBaseline, File: b.File, Message: msg})
			b.Status = results.VerdictHold
		}
	}
	slices.Sort(order)
	for _, s := range order {
		ids := regressed[s]
		r.Reasons = append(r.Reasons, results.Reason{Code: results.ReasonRegressedVsBaseline, Slice: s, CaseIDs: ids, File: b.File,
			Message: fmt.Sprintf("%s of mandatory slice %q passed in %s and failed in this run", countOf(len(ids), "case", "cases"), s, b.File)})
		b.Status = results.VerdictHold
	}
	r.Baseline = b
	if len(r.Reasons) > 0 {
		r.Verdict = results.VerdictHold
		slices.SortStableFunc(r.Reasons, func(a, b results.Reason) int { return cmp.Compare(reasonRank(a.Code), reasonRank(b.Code)) })
	}
}

func percent(f float64) string {
	s := fmt.Sprintf("%.1f%%", math.Round(f*1000)/10)
	return strings.Replace(s, ".0%", "%", 1)
}

func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
