package verdict

import (
	"fmt"
	"strings"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// mandatorySlice judges a mandatory slice. Omissions, errors and false
// passes hold in any run; the rate, the size and the controls are what a
// shard cannot judge alone, so a shard of several only warns about them.
func (d *decider) mandatorySlice(sr *results.SliceResult, rule manifest.SliceRule, g *group) {
	name := rule.Name
	held := d.sliceCounts(sr, name, g)
	deferred := d.sliceMeasures(sr, rule, g)
	if d.partial {
		for _, r := range deferred {
			code := r.Code
			if code == results.ReasonDatasetInvalid {
				code = WarnMissingControls
			}
			d.warn(results.Warning{Code: code, Slice: name, Message: r.Message + " (in this shard)"})
		}
	} else {
		held = append(held, deferred...)
		deferred = nil
	}
	for _, r := range held {
		d.hold(r)
	}
	switch {
	case len(held) > 0:
		sr.Status = results.VerdictHold
	case len(deferred) > 0:
		sr.Status = StatusWarn
	default:
		sr.Status = results.VerdictPass
	}
}

// sliceCounts are the mandatory-slice rules any shard judges: omitted,
// errored and falsely passed cases.
func (d *decider) sliceCounts(sr *results.SliceResult, name string, g *group) []results.Reason {
	var held []results.Reason
	if sr.Omitted > 0 {
		held = append(held, results.Reason{Code: results.ReasonOmittedCases, Slice: name, CaseIDs: g.omitted.ids, Message: fmt.Sprintf(
			"mandatory slice %q: %d %s omitted: %s", name, sr.Omitted, plural(sr.Omitted, "case", "cases"), strings.Join(g.omitted.parts(), "; "))})
	}
	if sr.Errored > 0 {
		held = append(held, results.Reason{Code: results.ReasonUnevaluableCases, Slice: name, CaseIDs: g.error.ids, Message: fmt.Sprintf(
			"mandatory slice %q: %d %s could not be graded: %s", name, sr.Errored, plural(sr.Errored, "case", "cases"), strings.Join(g.error.parts(), "; "))})
	}
	return append(held, d.sliceCalibration(sr, g, true)...)
}

// sliceMeasures are the mandatory-slice rules only the whole run judges:
// the pass rate, the number graded and the labeled controls.
func (d *decider) sliceMeasures(sr *results.SliceResult, rule manifest.SliceRule, g *group) []results.Reason {
	name := rule.Name
	var out []results.Reason
	switch v := d.judgeRate(sr, rule); v {
	case rateBelow:
		out = append(out, results.Reason{Code: results.ReasonSliceBelowThreshold, Slice: name, Message: d.rateMessage(sr, rule, g, v, "mandatory slice")})
	case rateInconclusive:
		sr.Inconclusive = true
		out = append(out, results.Reason{Code: results.ReasonSliceInconclusive, Slice: name, Message: d.rateMessage(sr, rule, g, v, "mandatory slice")})
	}
	if minCases := max(rule.MinCases, 1); sr.Graded < minCases {
		msg := fmt.Sprintf("mandatory slice %q graded %d %s, fewer than min_cases %d",
			name, sr.Graded, plural(sr.Graded, "case", "cases"), rule.MinCases)
		if sr.Intended == 0 {
			msg = fmt.Sprintf("mandatory slice %q has no case in the dataset: it may have vanished in a join or a rename", name)
		} else if rule.MinCases == 0 {
			msg = fmt.Sprintf("mandatory slice %q graded no case (%d intended)", name, sr.Intended)
		}
		out = append(out, results.Reason{Code: results.ReasonSliceTooSmall, Slice: name, Message: msg})
	}
	if d.g.RequireControls && !(g.has0 && g.has1) {
		var missing []string
		if !g.has1 {
			missing = append(missing, "human_score 1")
		}
		if !g.has0 {
			missing = append(missing, "human_score 0")
		}
		out = append(out, results.Reason{Code: results.ReasonDatasetInvalid, Slice: name, Message: fmt.Sprintf(
			"mandatory slice %q has no case labelled %s; gate.require_controls needs both",
			name, strings.Join(missing, " and no case labelled "))})
	}
	return out
}
