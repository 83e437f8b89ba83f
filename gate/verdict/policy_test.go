package verdict

import (
	"testing"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

func TestApplyPolicy(t *testing.T) {
	ws := []manifest.Weakening{{Key: "gate.slices.refunds.mandatory", Slice: "refunds", Message: `slice "refunds" is no longer mandatory`}}
	tests := []struct {
		name               string
		ws                 []manifest.Weakening
		reason, baseReason string
		verdict            string
		acknowledged       bool
		reasons, warnings  int
	}{
		{name: "nothing weakened", verdict: results.VerdictPass},
		{name: "a weakening holds", ws: ws, verdict: results.VerdictHold, reasons: 1},
		{name: "a reason of this change acknowledges it", ws: ws, reason: "refunds move to their own suite",
			verdict: results.VerdictPass, acknowledged: true, warnings: 1},
		{name: "the base's reason acknowledges nothing", ws: ws, reason: "old", baseReason: "old",
			verdict: results.VerdictHold, reasons: 1},
		{name: "a blank reason acknowledges nothing", ws: ws, reason: "  ", verdict: results.VerdictHold, reasons: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &results.Results{Verdict: results.VerdictPass, Reasons: []results.Reason{}}
			ApplyPolicy(r, "base/gradegate.yaml", tt.ws, tt.reason, tt.baseReason)
			if r.Verdict != tt.verdict || len(r.Reasons) != tt.reasons || len(r.Warnings) != tt.warnings {
				t.Fatalf("verdict %s, reasons %+v, warnings %+v", r.Verdict, r.Reasons, r.Warnings)
			}
			if r.Policy == nil || r.Policy.Acknowledged != tt.acknowledged || r.Policy.Base != "base/gradegate.yaml" || len(r.Policy.Weakenings) != len(tt.ws) {
				t.Errorf("policy %+v", r.Policy)
			}
			for _, rs := range r.Reasons {
				if rs.Code != results.ReasonPolicyWeakened || rs.Slice != "refunds" {
					t.Errorf("reason %+v", rs)
				}
			}
		})
	}
}
