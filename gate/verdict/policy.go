package verdict

import (
	"fmt"
	"strings"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// ApplyPolicy records in r the weakenings found against the base (the
// base manifest's, the base dataset's, the base results' removed cases)
// and holds on them as policy_weakened, or warns when reason acknowledges
// them: a reason is written (gate.weakening_reason) and is not baseReason,
// the base's own, which was written for an earlier change. Weakenings are
// added to any r.Policy already holds.
func ApplyPolicy(r *results.Results, base string, ws []manifest.Weakening, reason, baseReason string, notes ...string) {
	p := r.Policy
	if p == nil {
		p = &results.Policy{Weakenings: []manifest.Weakening{}}
		r.Policy = p
	}
	if base != "" {
		p.Base = base
	}
	p.Weakenings = append(p.Weakenings, ws...)
	p.Notes = append(p.Notes, notes...)
	p.Reason = reason
	p.Acknowledged = strings.TrimSpace(reason) != "" && strings.TrimSpace(reason) != strings.TrimSpace(baseReason)
	if len(ws) == 0 {
		return
	}
	for _, w := range ws {
		if p.Acknowledged {
			r.Warnings = append(r.Warnings, results.Warning{Code: results.ReasonPolicyWeakened, Slice: w.Slice,
				Message: w.Message + fmt.Sprintf("; acknowledged by gate.weakening_reason: %s", reason)})
			continue
		}
		r.Reasons = append(r.Reasons, results.Reason{Code: results.ReasonPolicyWeakened, Slice: w.Slice,
			Message: w.Message + "; write gate.weakening_reason to acknowledge it"})
	}
	if len(r.Reasons) > 0 {
		r.Verdict = results.VerdictHold
		sortReasons(r.Reasons)
	}
}
