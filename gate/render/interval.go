package render

import (
	"fmt"
	"math"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/stats"
)

// rateCI is a pass rate with its interval in whole percents, rounded
// outward so the shown interval never claims more than the computed one:
// "86.0% (77–92)". Without an interval it is the rate alone.
func rateCI(r *float64, minimum float64, ci *stats.Interval) string {
	s := pctVs(r, minimum)
	if r == nil || ci == nil {
		return s
	}
	return fmt.Sprintf("%s (%s)", s, ciPercents(*ci))
}

// ciPercents is "77–92": the bounds in whole percents, outward.
func ciPercents(ci stats.Interval) string {
	lo := math.Floor(ci.Lo*100 + 1e-9)
	hi := math.Ceil(ci.Hi*100 - 1e-9)
	return fmt.Sprintf("%.0f–%.0f", lo, hi)
}

// sliceStatus is a slice row's status, saying when the interval could not
// decide: "hold (inconclusive)".
func sliceStatus(s results.SliceResult, status func(string) string) string {
	if s.Inconclusive {
		return status(s.Status) + " (inconclusive)"
	}
	return status(s.Status)
}

// baselineTestLine is the McNemar line of the baseline block.
func baselineTestLine(b *results.Baseline) string {
	if b.Cohort == 0 {
		return ""
	}
	return fmt.Sprintf("; %d pass→fail, %d fail→pass, McNemar p = %s (alpha %s), change %s interval %+.1f to %+.1f pts",
		b.PassToFail, b.FailToPass, results.PValueText(b.PValue), results.PValueText(b.Alpha),
		pctDigits(b.Level, 0), b.CI.Lo*100, b.CI.Hi*100)
}

// flipRateText is "; status flip rate 2.5% (1–9) over 200 cases", or ""
// without a figure.
func flipRateText(f *results.FlipRate) string {
	if f == nil {
		return ""
	}
	return fmt.Sprintf("; status flip rate %s (%s) over %s", pctDigits(f.Rate, 1), ciPercents(f.CI), plural(f.Cases, "case", "cases"))
}

// repeatLines says, per slice and overall, how often a model grader's
// repeated asks (gate.repeats) disagreed about a case.
func repeatLines(res *results.Results) []string {
	var out []string
	if f := res.Overall.RepeatFlips; f != nil {
		out = append(out, fmt.Sprintf("repeats: %d of %d cases asked more than once disagreed across asks%s", f.Flipped, f.Cases, flipRateText(f)))
	}
	for _, s := range res.Slices {
		if f := s.RepeatFlips; f != nil && f.Flipped > 0 {
			out = append(out, fmt.Sprintf("  slice %s: %d of %d disagreed%s", Text(s.Name), f.Flipped, f.Cases, flipRateText(f)))
		}
	}
	return out
}
