package verdict

import (
	"fmt"

	"github.com/gradegate/gradegate/gate/results"
)

// overall judges the overall pass rate. The overall row's status is that
// of every rule it is judged by: a row whose errored or omitted count is over
// its maximum holds, whatever its rate.
func (d *decider) overall() results.Overall {
	r := d.t.overall.rate(d.family())
	o := results.Overall{PassRate: rounded(r, d.g.MinPassRate), MinPassRate: d.g.MinPassRate, Status: results.VerdictPass, Aggregation: results.AggregationRow,
		CI: roundedCI(d.interval(&d.t.overall)), RepeatFlips: results.NewFlipRate(d.t.overall.disagreed, d.t.overall.repeated, d.level())}
	if d.countsHeld {
		// The row is judged by max_errors and max_omitted too (rows.go).
		o.Status = results.VerdictHold
	}
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
		if o.Status == results.VerdictPass {
			o.Status = StatusWarn
		}
		d.warn(results.Warning{Code: WarnOverallBelow, Message: msg + " (in this shard)"})
		return o
	}
	o.Status = results.VerdictHold
	d.hold(results.Reason{Code: results.ReasonOverallBelowThreshold, Message: msg})
	return o
}
