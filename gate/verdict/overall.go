package verdict

import (
	"fmt"

	"github.com/gradegate/gradegate/gate/results"
)

// overall judges the overall pass rate.
func (d *decider) overall() results.Overall {
	r := d.t.overall.rate(d.family())
	o := results.Overall{PassRate: rounded(r, d.g.MinPassRate), MinPassRate: d.g.MinPassRate, Status: results.VerdictPass, Aggregation: results.AggregationRow}
	if d.family() {
		o.Aggregation, o.Families = results.AggregationFamily, d.t.overall.familyCount()
	}
	var msg string
	switch {
	case r == nil:
		msg = "no case was graded, so there is no pass rate to hold to gate.min_pass_rate " + rate(d.g.MinPassRate)
	case *r < d.g.MinPassRate-rateEpsilon:
		msg = fmt.Sprintf("overall pass rate %s is below gate.min_pass_rate %s", rate(shown(*r, d.g.MinPassRate)), rate(d.g.MinPassRate))
		if d.family() {
			msg += " (each family counts once)"
		}
	default:
		return o
	}
	if d.partial {
		o.Status = StatusWarn
		d.warn(results.Warning{Code: WarnOverallBelow, Message: msg + " (in this shard)"})
		return o
	}
	o.Status = results.VerdictHold
	d.hold(results.Reason{Code: results.ReasonOverallBelowThreshold, Message: msg})
	return o
}
