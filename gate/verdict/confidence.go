package verdict

import (
	"fmt"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/stats"
	"github.com/gradegate/gradegate/manifest"
)

// results.Warning codes of the statistics rules.
const (
	// WarnUnderpoweredSlice: a slice named in the manifest is too small for
	// its interval to clear its min_pass_rate even if every case passed.
	WarnUnderpoweredSlice = "underpowered_slice"
	// WarnSliceInconclusive: under the lower_bound rule a slice that cannot
	// hold has an interval that contains its minimum.
	WarnSliceInconclusive = results.ReasonSliceInconclusive
)

// confidence is the gate's gate.confidence with defaults for a Gate built
// by hand (tests, older callers).
func confidence(g manifest.Gate) manifest.Confidence {
	c := g.Confidence
	if !(c.Level > 0 && c.Level < 1) {
		c.Level = stats.DefaultLevel
	}
	if c.Rule == "" {
		c.Rule = manifest.DefaultConfidenceRule
	}
	return c
}

func (d *decider) level() float64   { return confidence(d.g).Level }
func (d *decider) lowerBound() bool { return confidence(d.g).Rule == manifest.RuleLowerBound }

// units is what a group's rate is over: graded rows, or families under
// family aggregation (each family counts once, so it is one trial).
func (d *decider) units(g *group) int {
	if d.family() {
		return g.familyCount()
	}
	return g.Graded
}

// unitWord names the units of a rate.
func (d *decider) unitWord(n int) string {
	if d.family() {
		return plural(n, "family", "families")
	}
	return plural(n, "case", "cases")
}

// interval is the Wilson interval of a group's pass rate, unrounded; nil
// when nothing was graded.
func (d *decider) interval(g *group) *stats.Interval {
	r := g.rate(d.family())
	if r == nil {
		return nil
	}
	var iv stats.Interval
	if d.family() {
		iv = stats.WilsonRate(*r, g.familyCount(), d.level())
	} else {
		iv = stats.Wilson(g.Passed, g.Graded, d.level())
	}
	return &iv
}

// intervals sets a slice row's intervals: of its pass rate (unrounded until
// the rules have read it, see roundIntervals) and of its repeats' flips.
// The calibration rates' intervals are in its confusion (labels.go).
func (d *decider) intervals(sr *results.SliceResult, g *group) {
	sr.CI = d.interval(g)
	sr.RepeatFlips = results.NewFlipRate(g.disagreed, g.repeated, d.level())
}

// roundedCI is an interval as the results show it: four decimals, outward.
func roundedCI(iv *stats.Interval) *stats.Interval {
	if iv == nil {
		return nil
	}
	r := iv.Round()
	return &r
}

// rateVerdict is what a slice's pass rate says against its minimum.
type rateVerdict int

const (
	rateClears rateVerdict = iota
	rateBelow
	rateInconclusive
)

// judgeRate applies gate.confidence.rule to a slice's rate. Under point the
// observed rate decides. Under lower_bound the interval does: it clears
// the minimum when its lower bound is at or above it, is below when its
// upper bound is under it, and is inconclusive otherwise; a minimum of 0 or
// 1 is a rule about the observed cases that no interval can decide (a true
// rate of exactly 1 is never shown by a sample), so it stays at point.
func (d *decider) judgeRate(sr *results.SliceResult, rule manifest.SliceRule) rateVerdict {
	if sr.PassRate == nil {
		return rateClears // nothing graded: slice_too_small speaks for it
	}
	if d.lowerBound() && stats.Decidable(rule.MinPassRate) && sr.CI != nil {
		switch stats.Decide(*sr.CI, rule.MinPassRate) {
		case stats.Clears:
			return rateClears
		case stats.Below:
			return rateBelow
		}
		return rateInconclusive
	}
	if below(sr, rule) {
		return rateBelow
	}
	return rateClears
}

// ciText is "95% interval 75.1%–93%".
func (d *decider) ciText(iv *stats.Interval) string {
	if iv == nil {
		return ""
	}
	r := iv.Round()
	return fmt.Sprintf("%s interval %s–%s", percent(d.level()), percent(r.Lo), percent(r.Hi))
}

// rateMessage says why a slice's rate fails its rule: below, or
// inconclusive with the further cases that would decide it. what is
// "mandatory slice" or "slice".
func (d *decider) rateMessage(sr *results.SliceResult, rule manifest.SliceRule, g *group, verdict rateVerdict, what string) string {
	name := rule.Name
	seen := fmt.Sprintf("pass rate %s (%d of %d graded passed", rate(shown(*sr.PassRate, rule.MinPassRate)), sr.Passed, sr.Graded)
	if d.lowerBound() && sr.CI != nil {
		seen += "; " + d.ciText(sr.CI)
	}
	seen += ")"
	if verdict == rateBelow {
		return fmt.Sprintf("%s %q: %s is below its min_pass_rate %s", what, name, seen, rate(rule.MinPassRate))
	}
	msg := fmt.Sprintf("%s %q: %s cannot be told apart from its min_pass_rate %s (gate.confidence.rule lower_bound)",
		what, name, seen, rate(rule.MinPassRate))
	raw := g.rate(d.family())
	if n, ok := stats.FurtherCasesAt(*raw, d.units(g), rule.MinPassRate, d.level()); ok {
		sr.FurtherCases = &n
		msg += fmt.Sprintf("; %d more %s at this rate would decide it", n, d.unitWord(n))
	} else {
		msg += "; the rate equals the minimum, so no number of further cases at this rate would decide it"
	}
	return msg
}

// underpowered warns when a slice the manifest names has too few graded
// cases (or families) for its interval to clear its min_pass_rate even if
// all of them passed. A shard of several is not judged: its size is only
// part of the slice's.
func (d *decider) underpowered(sr *results.SliceResult, rule manifest.SliceRule, g *group, explicit bool) {
	if !explicit || d.partial || !stats.Decidable(rule.MinPassRate) {
		return
	}
	n := d.units(g)
	least, _ := stats.LeastCases(rule.MinPassRate, d.level())
	if n == 0 || n >= least {
		return
	}
	sr.LeastCases = least
	d.warn(results.Warning{Code: WarnUnderpoweredSlice, Slice: rule.Name, Message: UnderpoweredText(rule.Name, n, d.unitWord(n), rule.MinPassRate, d.level())})
}

// UnderpoweredText is the underpowered_slice message, shared with validate,
// which judges the dataset's sizes before any grading.
func UnderpoweredText(name string, n int, units string, min, level float64) string {
	least, _ := stats.LeastCases(min, level)
	lo := stats.Wilson(n, n, level).Round().Lo
	return fmt.Sprintf("slice %q has %d %s: even if every one passes, its %s interval's lower bound is %s, below its min_pass_rate %s; it takes at least %d to clear it",
		name, n, units, percent(level), percent(lo), rate(min), least)
}
