package verdict

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

func TestTallyMatchesCases(t *testing.T) {
	tests := []struct {
		name  string
		gate  manifest.Gate
		cases []results.CaseResult
	}{
		{"rows", gateWith(func(g *manifest.Gate) { g.MinPassRate = 0.9; g.MaxErrors = 1 }),
			cat(rows("a", results.StatusPass, 5, in("ship"), label(1)), rows("e", results.StatusError, 2), rows("m", results.StatusOmitted, 1, in("ship")))},
		{"families", gateWith(func(g *manifest.Gate) { g.Aggregation = "family"; g.MinPassRate = 0.7 }),
			cat(rows("x", results.StatusPass, 2, fam("x")), rows("xf", results.StatusFail, 1, fam("x")), rows("solo", results.StatusPass, 3))},
		{"mandatory slice with controls", gateWith(func(g *manifest.Gate) {
			g.RequireControls = true
			g.Slices = []manifest.SliceRule{mandatory("ship", 0.5, 2)}
		}), cat(rows("p", results.StatusPass, 3, in("ship"), label(0)), rows("f", results.StatusFail, 1, in("ship", "tone"), label(1)))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := Decide(tt.gate, Evidence{Cases: tt.cases})
			tally := NewTally(tt.gate)
			for _, c := range tt.cases {
				tally.Add(c)
			}
			got := Decide(tt.gate, Evidence{Tally: tally})
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("verdict from a tally differs (-cases +tally):\n%s", diff)
			}
		})
	}
}

// A reason lists a bounded number of case ids, while its message counts
// every case.
func TestTallyBoundsReasonIDs(t *testing.T) {
	g := baseGate()
	tally := NewTally(g)
	n := 3 * maxReasonIDs
	for _, c := range rows("m", results.StatusOmitted, n) {
		tally.Add(c)
	}
	v := Decide(g, Evidence{Tally: tally})
	r := v.Reasons[0]
	if r.Code != results.ReasonOmittedCases || len(r.CaseIDs) != maxReasonIDs || r.CaseIDs[0] != "m-1" {
		t.Fatalf("reason = %s with %d ids", r.Code, len(r.CaseIDs))
	}
	if !strings.Contains(r.Message, "300 intended cases omitted") || !strings.Contains(r.Message, "m-5 and 295 more") {
		t.Errorf("message = %q", r.Message)
	}
	if v.Counts.Omitted != n {
		t.Errorf("omitted = %d", v.Counts.Omitted)
	}
}
