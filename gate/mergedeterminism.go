package gate

import (
	"slices"

	"github.com/gradegate/gradegate/gate/results"
)

// mergeDeterminism combines the shards' determinism checks: every
// difference any shard saw, and the counts summed (the canaries once).
// nil when no shard ran one.
func mergeDeterminism(parts []*results.Results, level float64) *results.Determinism {
	var out *results.Determinism
	flipped, flipCases := 0, 0
	for _, p := range parts {
		d := p.Determinism
		if d == nil {
			continue
		}
		if d.FlipRate != nil {
			flipped += d.FlipRate.Flipped
			flipCases += d.FlipRate.Cases
		}
		if out == nil {
			c := *d
			c.Differed = slices.Clone(d.Differed)
			out = &c
			continue
		}
		out.Cases += d.Cases
		out.ComparedWithRun += d.ComparedWithRun
		out.DurationMS += d.DurationMS
		for _, x := range d.Differed {
			if x.Canary && slices.ContainsFunc(out.Differed, func(y results.Difference) bool { return y.Canary && y.ID == x.ID }) {
				continue
			}
			out.Differed = append(out.Differed, x)
		}
	}
	if out != nil && len(out.Differed) > 0 {
		out.Status = results.VerdictHold
	}
	if out != nil {
		// Each shard's flip rate is of its own sample; the union's is
		// computed again over every case graded twice.
		out.FlipRate = results.NewFlipRate(flipped, flipCases, level)
	}
	return out
}
