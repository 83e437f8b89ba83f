package verdict

import (
	"strings"

	"github.com/gradegate/gradegate/canary/hosted"
	"github.com/gradegate/gradegate/gate/results"
)

// hosted holds when the hosted parity of the canaries, if it ran, saw a
// disagreement or could not finish: canary_failed, naming the canaries.
func (d *decider) hosted() {
	if d.ev.Hosted == nil && d.ev.HostedErr == nil {
		return
	}
	if r := hostedReason(d.ev.Hosted, d.ev.HostedErr); r != nil {
		d.hold(*r)
	}
}

// hostedReason is the canary_failed hold of a hosted parity run; nil when
// every canary agreed.
func hostedReason(rep *hosted.Report, runErr error) *results.Reason {
	if rep != nil && rep.OK() && runErr == nil {
		return nil
	}
	var msgs []string
	if rep != nil {
		msgs = append(msgs, rep.Problems...)
	}
	if runErr != nil {
		msgs = append(msgs, "the hosted grader could not be asked: "+runErr.Error())
	}
	if len(msgs) == 0 {
		msgs = append(msgs, "no canary was run on the hosted grader")
	}
	return &results.Reason{Code: results.ReasonCanaryFailed, Message: "hosted parity: " + strings.Join(msgs, "; ")}
}
