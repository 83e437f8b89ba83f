package verdict

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gradegate/gradegate/gate/digest"
	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

func TestAgreementOf(t *testing.T) {
	tests := []struct {
		name      string
		table     [2][2]int
		raw       float64
		kappa     *float64 // nil: undefined
		ciContain float64
	}{
		// Cohen (1960)'s form: po 0.7, pe 0.5 → kappa 0.4.
		{name: "balanced", table: [2][2]int{{35, 15}, {15, 35}}, raw: 0.7, kappa: ptrF(0.4), ciContain: 0.4},
		{name: "perfect", table: [2][2]int{{5, 0}, {0, 5}}, raw: 1, kappa: ptrF(1), ciContain: 1},
		// Agreement no better than chance.
		{name: "chance", table: [2][2]int{{25, 25}, {25, 25}}, raw: 0.5, kappa: ptrF(0), ciContain: 0},
		{name: "every score the same", table: [2][2]int{{0, 0}, {0, 4}}, raw: 1, kappa: nil},
		// The cancellation example's instruction_conflict slice.
		{name: "one disagreement in three", table: [2][2]int{{1, 0}, {1, 1}}, raw: 0.6667, kappa: ptrF(0.4), ciContain: 0.4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := agreementOf(&dataset.Agreement{Rows: 3, Table: tt.table}, kappaZ)
			if *a.Raw != tt.raw {
				t.Errorf("raw = %v, want %v", *a.Raw, tt.raw)
			}
			if !cmp.Equal(a.Kappa, tt.kappa) {
				t.Fatalf("kappa = %v, want %v", a.Kappa, tt.kappa)
			}
			if tt.kappa == nil {
				if a.KappaCI != nil {
					t.Errorf("interval %v of an undefined kappa", a.KappaCI)
				}
				return
			}
			if lo, hi := a.KappaCI[0], a.KappaCI[1]; lo > tt.ciContain || hi < tt.ciContain || lo < -1 || hi > 1 {
				t.Errorf("interval %v does not hold %v within [-1, 1]", a.KappaCI, tt.ciContain)
			}
		})
	}
	if agreementOf(&dataset.Agreement{}, kappaZ) != nil {
		t.Error("an empty table has an agreement")
	}
}

func labeledRow(id, status string, human int, slice string) results.CaseResult {
	return results.CaseResult{CaseID: id, Slices: []string{slice}, Status: status, Class: grading.ClassOK, HumanScore: &human}
}

func TestTallyLabels(t *testing.T) {
	g := manifest.Gate{MinPassRate: 0.5, Aggregation: "row",
		Slices:      []manifest.SliceRule{{Name: "s", Mandatory: true, MinPassRate: 0.5}},
		Calibration: manifest.Calibration{MaxFalsePass: 5, CurrentLabelsOnly: true, WarnOnlyStatuses: []string{"pending_review"}}}
	stale := labeledRow("stale", results.StatusFail, 1, "s")
	stale.StaleLabel = true
	disputed := labeledRow("disputed", results.StatusFail, 1, "s")
	disputed.LabelStatus = "disputed"
	pending := labeledRow("pending", results.StatusPass, 0, "s")
	pending.LabelStatus = "pending_review"
	unlabeled := results.CaseResult{CaseID: "free", Slices: []string{"s"}, Status: results.StatusPass, Class: grading.ClassOK}
	cases := []results.CaseResult{
		labeledRow("tp", results.StatusPass, 1, "s"), labeledRow("fp", results.StatusPass, 0, "s"),
		labeledRow("tf", results.StatusFail, 0, "s"), labeledRow("tf2", results.StatusFail, 0, "s"),
		labeledRow("ff", results.StatusFail, 1, "s"), stale, disputed, pending, unlabeled,
	}
	v := Decide(g, Evidence{Cases: cases, Shard: shard.Shard{Index: 1, Count: 1}})
	if want := (results.Counts{Intended: 7, Graded: 7, Passed: 3, Failed: 4}); v.Counts != want {
		t.Errorf("counts = %+v, want %+v (the warn-only rows count toward nothing)", v.Counts, want)
	}
	want := &results.Confusion{TruePass: 1, FalsePass: 1, TrueFail: 2, FalseFail: 1, Unlabeled: 2, StaleExcluded: 1,
		FalsePassRate: ptrF(0.3333), FalseFailRate: ptrF(0.5),
		// Wilson intervals at the default 0.95 of 1 in 3 and 1 in 2,
		// rounded outward.
		FalsePassCI: []float64{0.0614, 0.7924}, FalseFailCI: []float64{0.0945, 0.9055}}
	if diff := cmp.Diff(want, v.Slices[0].Confusion); diff != "" {
		t.Errorf("confusion (-want +got):\n%s", diff)
	}
	var statuses []string
	for _, w := range v.Labels.WarnOnly {
		statuses = append(statuses, w.Status+":"+w.Cases[0].CaseID+":"+w.Cases[0].Status)
	}
	if !cmp.Equal(statuses, []string{"disputed:disputed:fail", "pending_review:pending:pass"}) {
		t.Errorf("warn-only groups = %v", statuses)
	}
	if v.Labels.WarnOnlyRows() != 2 {
		t.Errorf("warn-only rows = %d, want 2", v.Labels.WarnOnlyRows())
	}
	// The disputed fail in a mandatory slice holds nothing: the slice's
	// rate is 3 of 7, under 0.5, which is what holds.
	for _, r := range v.Reasons {
		if strings.Contains(r.Message, "disputed") {
			t.Errorf("a warn-only case holds: %+v", r)
		}
	}
}

func TestMinAgreement(t *testing.T) {
	sum := &dataset.LabelSummary{Agreement: map[string]*dataset.Agreement{
		"must": {Rows: 3, Table: [2][2]int{{1, 0}, {1, 1}}}, // kappa 0.4
		"nice": {Rows: 3, Table: [2][2]int{{1, 0}, {1, 1}}},
		"fine": {Rows: 2, Table: [2][2]int{{1, 0}, {0, 1}}}, // kappa 1
	}}
	g := manifest.Gate{MinPassRate: 0, Aggregation: "row",
		Slices:      []manifest.SliceRule{{Name: "must", Mandatory: true}, {Name: "fine", Mandatory: true}, {Name: "nice"}},
		Calibration: manifest.Calibration{MinAgreement: ptrF(0.6)}}
	cases := []results.CaseResult{labeledRow("a", results.StatusPass, 1, "must"), labeledRow("b", results.StatusPass, 1, "fine"), labeledRow("c", results.StatusPass, 1, "nice")}
	v := Decide(g, Evidence{Cases: cases, Labels: sum, Shard: shard.Shard{Index: 1, Count: 1}})
	var held, warned []string
	for _, r := range v.Reasons {
		if r.Code == results.ReasonAgreementBelowThreshold {
			held = append(held, r.Slice)
		}
	}
	for _, w := range v.Warnings {
		if w.Code == results.ReasonAgreementBelowThreshold {
			warned = append(warned, w.Slice)
		}
	}
	if !cmp.Equal(held, []string{"must"}) || !cmp.Equal(warned, []string{"nice"}) {
		t.Errorf("held %v and warned %v, want [must] and [nice]", held, warned)
	}
}

func TestApplyGraderChange(t *testing.T) {
	calibrated := []results.SliceResult{{Name: "s", Mandatory: true, Confusion: &results.Confusion{TruePass: 2, TrueFail: 1}}}
	tests := []struct {
		name           string
		changes        []results.VersionChange
		slices         []results.SliceResult
		reasons        []results.Reason
		labels, differ int
		wantHold       bool
		wantWarn       bool
		wantText       string
	}{
		{name: "only the candidate changed", changes: []results.VersionChange{{Name: "candidate", Base: "m 1", Head: "m 2"}}, slices: calibrated, labels: 3},
		{name: "grader changed, calibration passed on the same labels", changes: []results.VersionChange{{Name: "grader", Base: "sha256:a", Head: "sha256:b"}},
			slices: calibrated, labels: 3, wantWarn: true, wantText: "calibration passed on the same 3 labels"},
		{name: "judge changed, labels differ", changes: []results.VersionChange{{Name: "judge_model", Base: "m-1", Head: "m-2"}},
			slices: calibrated, labels: 3, differ: 1, wantHold: true, wantText: "1 of the 3 labeled cases graded in both runs carry another label"},
		{name: "grader changed, a false pass held", changes: []results.VersionChange{{Name: "grader", Base: "sha256:a", Head: "sha256:b"}},
			slices: calibrated, reasons: []results.Reason{{Code: results.ReasonFalsePass, Slice: "s"}}, labels: 3, wantHold: true, wantText: `false_pass in "s"`},
		{name: "grader changed, no labels", changes: []results.VersionChange{{Name: "grader", Base: "sha256:a", Head: "sha256:b"}},
			slices: []results.SliceResult{{Name: "s"}}, wantHold: true, wantText: "graded no labeled case"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &results.Results{Verdict: results.VerdictPass, Slices: tt.slices, Reasons: tt.reasons}
			if len(tt.reasons) > 0 {
				r.Verdict = results.VerdictHold
			}
			b := &results.Baseline{File: "base.json", VersionsChanged: tt.changes, Status: results.StatusPass}
			ApplyGraderChange(r, b, tt.labels, tt.differ)
			held := false
			for _, rs := range r.Reasons {
				if rs.Code == results.ReasonGraderChangedVsBaseline {
					held = true
					if !strings.Contains(rs.Message, tt.wantText) {
						t.Errorf("reason %q does not say %q", rs.Message, tt.wantText)
					}
				}
			}
			warned := false
			for _, w := range r.Warnings {
				if w.Code == results.ReasonGraderChangedVsBaseline {
					warned = true
					if !strings.Contains(w.Message, tt.wantText) {
						t.Errorf("warning %q does not say %q", w.Message, tt.wantText)
					}
				}
			}
			if held != tt.wantHold || warned != tt.wantWarn {
				t.Errorf("held %v warned %v, want %v %v", held, warned, tt.wantHold, tt.wantWarn)
			}
			if tt.wantHold && (r.Verdict != results.VerdictHold || b.Status != results.VerdictHold) {
				t.Errorf("verdict %s, baseline status %s, want hold", r.Verdict, b.Status)
			}
			if (tt.wantHold || tt.wantWarn) != (b.GraderChange != nil) {
				t.Errorf("grader_change = %+v", b.GraderChange)
			}
		})
	}
}

func TestVersionChanges(t *testing.T) {
	base := &results.Results{Digests: digest.Digests{Dataset: "sha256:d1", Grader: "sha256:g1"},
		Versions: results.Versions{DatasetRevision: "r1", RubricVersion: "cancel-rubric-2", JudgeModel: "judge-1", Candidate: &results.Candidate{Model: "bot", Revision: "1"}}}
	head := &results.Results{Digests: digest.Digests{Dataset: "sha256:d1", Grader: "sha256:g2"},
		Versions: results.Versions{DatasetRevision: "r1", RubricVersion: "cancel-rubric-3", JudgeModel: "judge-2", Candidate: &results.Candidate{Model: "bot", Revision: "2"}}}
	got := results.VersionChanges(base, head)
	want := []results.VersionChange{
		{Name: "rubric_version", Base: "cancel-rubric-2", Head: "cancel-rubric-3"},
		{Name: "grader", Base: "sha256:g1", Head: "sha256:g2"},
		{Name: "judge_model", Base: "judge-1", Head: "judge-2"},
		{Name: "candidate", Base: "bot 1", Head: "bot 2"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	// A version the base run did not record is not a change.
	base.Versions.Candidate = nil
	if got := results.VersionChanges(base, head); len(got) != 3 {
		t.Errorf("changes = %v, want no candidate change", got)
	}
}
func ptrF(v float64) *float64 { return &v }
