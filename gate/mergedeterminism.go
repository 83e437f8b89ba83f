package gate

import (
	"slices"

	"github.com/gradegate/gradegate/gate/results"
)

// mergeDeterminism combines the shards' determinism checks: every
// difference any shard saw, and the counts summed (the canaries once).
// nil when no shard ran one.
func mergeDeterminism(parts []*results.Results) *results.Determinism {
	var out *results.Determinism
	for _, p := range parts {
		d := p.Determinism
		if d == nil {
			continue
		}
		if out == nil {
			c := *d
			c.Differed = slices.Clone(d.Differed)
			out = &c
			continue
		}
		out.Cases += d.Cases
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
	return out
}
