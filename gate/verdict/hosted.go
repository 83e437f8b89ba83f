package verdict

import (
	"strings"

	"github.com/gradegate/gradegate/canary/hosted"
	"github.com/gradegate/gradegate/gate/results"
)

// AddHosted records a hosted parity report; any disagreement, or a hosted
// run that could not finish, holds the verdict as canary_failed, naming the
// canaries.
func AddHosted(r *results.Results, rep *hosted.Report, runErr error) {
	r.Hosted = rep
	if rep != nil && rep.OK() && runErr == nil {
		return
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
	r.Reasons = append(r.Reasons, results.Reason{Code: results.ReasonCanaryFailed, Message: "hosted parity: " + strings.Join(msgs, "; ")})
	sortReasons(r.Reasons)
	r.Verdict = results.VerdictHold
}
