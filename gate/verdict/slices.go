package verdict

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// slices builds the per-slice table and applies the slice rules: every slice
// the manifest names or a case carries, mandatory ones first, then by name.
func (d *decider) slices() []results.SliceResult {
	rules := map[string]manifest.SliceRule{}
	for _, r := range d.g.Slices {
		rules[r.Name] = r
	}
	for name := range d.t.slices {
		if _, ok := rules[name]; !ok {
			rules[name] = manifest.SliceRule{Name: name, MinPassRate: d.g.MinPassRate}
		}
	}
	names := make([]string, 0, len(rules))
	for name := range rules {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		ma, mb := holds(rules[a]), holds(rules[b])
		if ma != mb {
			if ma {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})

	out := make([]results.SliceResult, 0, len(names))
	for _, name := range names {
		g := d.t.slices[name]
		if g == nil {
			g = &group{}
		}
		rule := rules[name]
		sr := results.SliceResult{
			Name:        rule.Name,
			Mandatory:   rule.Mandatory,
			WarnOnly:    rule.WarnOnly,
			Counts:      g.Counts,
			PassRate:    g.rate(d.family()),
			MinPassRate: rule.MinPassRate,
			MinCases:    rule.MinCases,
			FalsePass:   g.falsePass,
			FalseFail:   g.falseFail,
		}
		d.intervals(&sr, g)
		_, explicit := d.g.Slice(name)
		if holds(rule) {
			d.mandatorySlice(&sr, rule, g)
		} else {
			d.informativeSlice(&sr, rule, g, explicit)
			d.informativeCalibration(&sr, g, rule.WarnOnly)
		}
		d.underpowered(&sr, rule, g, explicit)
		sr.PassRate = rounded(sr.PassRate, rule.MinPassRate)
		sr.CI = roundedCI(sr.CI)
		out = append(out, sr)
	}
	if g := d.t.noSlice; g != nil && len(out) > 0 {
		// The rows in no slice get a row of their own, last, so that the
		// table accounts for every row; it is reported and never holds.
		rule := manifest.SliceRule{Name: NoSlice, MinPassRate: d.g.MinPassRate}
		sr := results.SliceResult{Name: NoSlice, Counts: g.Counts, PassRate: g.rate(d.family()), MinPassRate: rule.MinPassRate,
			FalsePass: g.falsePass, FalseFail: g.falseFail}
		d.intervals(&sr, g)
		d.informativeSlice(&sr, rule, g, false)
		sr.PassRate = rounded(sr.PassRate, rule.MinPassRate)
		sr.CI = roundedCI(sr.CI)
		out = append(out, sr)
	}
	return out
}

// holds reports whether a slice rule can hold the gate.
func holds(r manifest.SliceRule) bool { return r.Mandatory && !r.WarnOnly }

// below reports whether a slice's pass rate is under its minimum.
func below(sr *results.SliceResult, rule manifest.SliceRule) bool {
	return sr.PassRate != nil && *sr.PassRate < rule.MinPassRate-rateEpsilon
}

// informativeSlice judges a slice that cannot hold (warn_only, or without a
// mandatory rule): being too small or below its minimum only warns.
func (d *decider) informativeSlice(sr *results.SliceResult, rule manifest.SliceRule, g *group, explicit bool) {
	name := rule.Name
	sr.Status = results.StatusPass
	// A slice that graded nothing has no rate to pass with.
	if sr.Graded < rule.MinCases || sr.Graded == 0 {
		sr.Status = StatusWarn
		msg := fmt.Sprintf("slice %q graded %d %s, min_cases is %d", name, sr.Graded, plural(sr.Graded, "case", "cases"), rule.MinCases)
		switch {
		case sr.Graded == 0 && rule.MinCases == 0 && explicit:
			msg = fmt.Sprintf("slice %q is in the manifest but graded no case", name)
		case sr.Graded == 0 && rule.MinCases == 0:
			msg = fmt.Sprintf("slice %q graded no case (%d errored, %d omitted)", name, sr.Errored, sr.Omitted)
		}
		d.warn(results.Warning{Code: WarnSliceTooSmall, Slice: name, Message: msg})
	}
	switch v := d.judgeRate(sr, rule); v {
	case rateBelow:
		sr.Status = StatusWarn
		d.warn(results.Warning{Code: WarnSliceBelowThreshold, Slice: name, Message: d.rateMessage(sr, rule, g, v, "slice")})
	case rateInconclusive:
		sr.Status = StatusWarn
		sr.Inconclusive = true
		d.warn(results.Warning{Code: WarnSliceInconclusive, Slice: name, Message: d.rateMessage(sr, rule, g, v, "slice")})
	}
}
