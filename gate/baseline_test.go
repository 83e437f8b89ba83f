package gate

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gradegate/gradegate/gate/stats"
	"github.com/gradegate/gradegate/manifest"
)

func TestApplyBaseline(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	slices := []SliceResult{{Name: "must", Mandatory: true}, {Name: "nice"}}
	tests := []struct {
		name        string
		change      *float64
		maxDrop     float64
		alpha       float64
		pairs       Pairs
		shard       Shard
		flips       []BaselineFlip
		wantVerdict string
		wantStatus  string
		wantReasons []Reason
		wantWarn    bool
	}{
		{name: "no change passes", change: f(0), wantVerdict: VerdictPass, wantStatus: VerdictPass},
		{name: "a rise passes", change: f(0.1), wantVerdict: VerdictPass, wantStatus: VerdictPass},
		{name: "no cohort passes", change: nil, wantVerdict: VerdictPass, wantStatus: VerdictPass},
		{name: "a drop within max_drop passes", change: f(-0.05), maxDrop: 0.05, wantVerdict: VerdictPass, wantStatus: VerdictPass},
		{
			name: "alpha 1: a drop beyond max_drop holds on its own", change: f(-0.0625), maxDrop: 0.05, alpha: 1,
			pairs:       Pairs{BothPass: 10, PassFail: 1, BothFail: 5},
			wantVerdict: VerdictHold, wantStatus: VerdictHold,
			wantReasons: []Reason{{Code: ReasonRegressedVsBaseline, File: "base.json",
				Message: "the pass rate on the 16 cases graded in both runs fell by 6.3% against base.json (gate.baseline.max_drop 5%); " +
					"1 passed before and failed now, 0 the other way (McNemar p = 1; change 95% interval -22.5 to +10.4 points)"}},
		},
		{
			name: "a drop the test cannot tell from noise warns", change: f(-0.0625), maxDrop: 0.05, alpha: 0.05,
			pairs:       Pairs{BothPass: 10, PassFail: 1, BothFail: 5},
			wantVerdict: VerdictPass, wantStatus: StatusWarn, wantWarn: true,
		},
		{
			name: "a drop the test rejects holds", change: f(-0.375), maxDrop: 0.05, alpha: 0.05,
			pairs:       Pairs{BothPass: 4, PassFail: 6, BothFail: 6},
			wantVerdict: VerdictHold, wantStatus: VerdictHold,
			wantReasons: []Reason{{Code: ReasonRegressedVsBaseline, File: "base.json",
				Message: "the pass rate on the 16 cases graded in both runs fell by 37.5% against base.json (gate.baseline.max_drop 5%); " +
					"6 passed before and failed now, 0 the other way (McNemar p = 0.0312; change 95% interval -57.8 to -8.8 points)"}},
		},
		{
			name: "a drop in one shard of several warns", change: f(-0.5), alpha: 1, shard: Shard{Index: 1, Count: 2},
			wantVerdict: VerdictPass, wantStatus: StatusWarn, wantWarn: true,
		},
		{
			name: "a mandatory pass to fail holds even with the rate up, and with a test that cannot reject", change: f(0.1), alpha: 0.05,
			flips: []BaselineFlip{
				{CaseID: "b", Base: StatusPass, Head: StatusFail, Slices: []string{"must"}},
				{CaseID: "a", Base: StatusFail, Head: StatusPass, Slices: []string{"must"}},
			},
			wantVerdict: VerdictHold, wantStatus: VerdictHold,
			wantReasons: []Reason{{Code: ReasonRegressedVsBaseline, Slice: "must", CaseIDs: []string{"b"}, File: "base.json",
				Message: `1 case of mandatory slice "must" passed in base.json and failed in this run`}},
		},
		{
			name: "a pass to fail outside mandatory slices, or to error, does not hold", change: f(0),
			flips: []BaselineFlip{
				{CaseID: "a", Base: StatusPass, Head: StatusFail, Slices: []string{"nice"}},
				{CaseID: "b", Base: StatusPass, Head: StatusError, Slices: []string{"must"}},
			},
			wantVerdict: VerdictPass, wantStatus: VerdictPass,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Results{Verdict: VerdictPass, Reasons: []Reason{}, Slices: slices, Shard: tt.shard}
			b := &Baseline{File: "base.json", Cohort: 16, PassRateChange: tt.change, Flips: tt.flips}
			b.Pairs = tt.pairs
			r.ApplyBaseline(b, manifest.Baseline{MaxDrop: tt.maxDrop, Alpha: tt.alpha}, 0.95)
			if r.Verdict != tt.wantVerdict || b.Status != tt.wantStatus {
				t.Errorf("verdict %s, baseline status %s; want %s, %s", r.Verdict, b.Status, tt.wantVerdict, tt.wantStatus)
			}
			want := tt.wantReasons
			if want == nil {
				want = []Reason{}
			}
			if diff := cmp.Diff(want, r.Reasons); diff != "" {
				t.Errorf("reasons (-want +got):\n%s", diff)
			}
			if got := len(r.Warnings) > 0; got != tt.wantWarn {
				t.Errorf("warned %v, want %v", got, tt.wantWarn)
			}
			if b.PassToFail != tt.pairs.PassFail || b.FailToPass != tt.pairs.FailPass || b.PValue != roundP(stats.McNemar(tt.pairs.PassFail, tt.pairs.FailPass)) {
				t.Errorf("test = %+v, want the flips of %+v and their p-value", b.PairedTest, tt.pairs)
			}
			if r.Baseline != b || b.MaxDrop != tt.maxDrop || b.Alpha != tt.alpha {
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
	r := &Results{Verdict: VerdictHold, Reasons: []Reason{{Code: ReasonGraderLint}, {Code: ReasonCanaryFailed}}}
	f := -0.5
	r.ApplyBaseline(&Baseline{File: "b.json", Cohort: 2, PassRateChange: &f}, manifest.Baseline{Alpha: 1}, 0.95)
	var got []string
	for _, x := range r.Reasons {
		got = append(got, x.Code)
	}
	want := []string{ReasonGraderLint, ReasonCanaryFailed, ReasonRegressedVsBaseline}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reason order (-want +got):\n%s", diff)
	}
}

// AllRows reads a streamed run's rows back from its spool, from the first
// row on every call, and a run that kept its rows from Cases.
func TestAllRows(t *testing.T) {
	want := []CaseResult{row("a", StatusPass, in("s")), row("b", StatusFail), row("c", StatusOmitted)}
	s, err := newCaseSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range want {
		if err := s.add(c); err != nil {
			t.Fatal(err)
		}
	}
	spooled := &Results{Rows: &CaseRows{spool: s}}
	defer spooled.Close()
	for _, tt := range []struct {
		name string
		res  *Results
	}{{"spooled", spooled}, {"spooled again", spooled}, {"in memory", &Results{Cases: want}}} {
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
