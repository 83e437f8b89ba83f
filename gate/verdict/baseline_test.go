package verdict

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/manifest"
)

func TestApplyBaseline(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	slices := []results.SliceResult{{Name: "must", Mandatory: true}, {Name: "nice"}}
	tests := []struct {
		name        string
		change      *float64
		maxDrop     float64
		shard       shard.Shard
		flips       []results.BaselineFlip
		wantVerdict string
		wantStatus  string
		wantReasons []results.Reason
		wantWarn    bool
	}{
		{name: "no change passes", change: f(0), wantVerdict: results.VerdictPass, wantStatus: results.VerdictPass},
		{name: "a rise passes", change: f(0.1), wantVerdict: results.VerdictPass, wantStatus: results.VerdictPass},
		{name: "no cohort passes", change: nil, wantVerdict: results.VerdictPass, wantStatus: results.VerdictPass},
		{name: "a drop within max_drop passes", change: f(-0.05), maxDrop: 0.05, wantVerdict: results.VerdictPass, wantStatus: results.VerdictPass},
		{
			name: "a drop beyond max_drop holds", change: f(-0.0625), maxDrop: 0.05,
			wantVerdict: results.VerdictHold, wantStatus: results.VerdictHold,
			wantReasons: []results.Reason{{Code: results.ReasonRegressedVsBaseline, File: "base.json",
				Message: "the pass rate on the 16 cases graded in both runs fell by 6.3% against base.json (gate.baseline.max_drop 5%)"}},
		},
		{
			name: "a drop in one shard of several warns", change: f(-0.5), shard: shard.Shard{Index: 1, Count: 2},
			wantVerdict: results.VerdictPass, wantStatus: StatusWarn, wantWarn: true,
		},
		{
			name: "a mandatory pass to fail holds even with the rate up", change: f(0.1),
			flips: []results.BaselineFlip{
				{CaseID: "b", Base: results.StatusPass, Head: results.StatusFail, Slices: []string{"must"}},
				{CaseID: "a", Base: results.StatusFail, Head: results.StatusPass, Slices: []string{"must"}},
			},
			wantVerdict: results.VerdictHold, wantStatus: results.VerdictHold,
			wantReasons: []results.Reason{{Code: results.ReasonRegressedVsBaseline, Slice: "must", CaseIDs: []string{"b"}, File: "base.json",
				Message: `1 case of mandatory slice "must" passed in base.json and failed in this run`}},
		},
		{
			name: "a pass to fail outside mandatory slices, or to error, does not hold", change: f(0),
			flips: []results.BaselineFlip{
				{CaseID: "a", Base: results.StatusPass, Head: results.StatusFail, Slices: []string{"nice"}},
				{CaseID: "b", Base: results.StatusPass, Head: results.StatusError, Slices: []string{"must"}},
			},
			wantVerdict: results.VerdictPass, wantStatus: results.VerdictPass,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &results.Results{Verdict: results.VerdictPass, Reasons: []results.Reason{}, Slices: slices, Shard: tt.shard}
			b := &results.Baseline{File: "base.json", Cohort: 16, PassRateChange: tt.change, Flips: tt.flips}
			ApplyBaseline(r, b, manifest.Baseline{MaxDrop: tt.maxDrop})
			if r.Verdict != tt.wantVerdict || b.Status != tt.wantStatus {
				t.Errorf("verdict %s, baseline status %s; want %s, %s", r.Verdict, b.Status, tt.wantVerdict, tt.wantStatus)
			}
			want := tt.wantReasons
			if want == nil {
				want = []results.Reason{}
			}
			if diff := cmp.Diff(want, r.Reasons); diff != "" {
				t.Errorf("reasons (-want +got):\n%s", diff)
			}
			if got := len(r.Warnings) > 0; got != tt.wantWarn {
				t.Errorf("warned %v, want %v", got, tt.wantWarn)
			}
			if r.Baseline != b || b.MaxDrop != tt.maxDrop {
				t.Errorf("baseline not recorded with its max_drop")
			}
			for _, fl := range b.Flips {
				if fl.Mandatory != (fl.Slices[0] == "must") {
					t.Errorf("flip %s: mandatory %v", fl.CaseID, fl.Mandatory)
				}
			}
		})
	}
}

// TestApplyBaselineRanksReasons checks that a regression comes after the
// run's integrity reasons, among what the grading showed.
func TestApplyBaselineRanksReasons(t *testing.T) {
	r := &results.Results{Verdict: results.VerdictHold, Reasons: []results.Reason{{Code: results.ReasonGraderLint}, {Code: results.ReasonCanaryFailed}}}
	f := -0.5
	ApplyBaseline(r, &results.Baseline{File: "b.json", Cohort: 2, PassRateChange: &f}, manifest.Baseline{})
	var got []string
	for _, x := range r.Reasons {
		got = append(got, x.Code)
	}
	want := []string{results.ReasonGraderLint, results.ReasonCanaryFailed, results.ReasonRegressedVsBaseline}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reason order (-want +got):\n%s", diff)
	}
}

// AllRows reads a streamed run's rows back from its spool, from the first
// row on every call, and a run that kept its rows from Cases.
func TestAllRows(t *testing.T) {
	want := []results.CaseResult{row("a", results.StatusPass, in("s")), row("b", results.StatusFail), row("c", results.StatusOmitted)}
	s, err := results.NewSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range want {
		if err := s.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	spooled := &results.Results{Rows: s.Rows()}
	defer spooled.Close()
	for _, tt := range []struct {
		name string
		res  *results.Results
	}{{"spooled", spooled}, {"spooled again", spooled}, {"in memory", &results.Results{Cases: want}}} {
		t.Run(tt.name, func(t *testing.T) {
			it, err := tt.res.AllRows()
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for {
				c, ok, err := it.Next()
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				ids = append(ids, c.CaseID+":"+c.Status)
			}
			if diff := cmp.Diff([]string{"a:pass", "b:fail", "c:omitted"}, ids); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		})
	}
	spooled.Close()
	if _, err := spooled.AllRows(); err == nil {
		t.Error("AllRows after Close: no error")
	}
}
