package verdict

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/gradegate/gradegate/gate/results"
)

// ApplyGraderChange holds as grader_changed_vs_baseline when the grader or
// the judge changed between b's run and this one, unless this run's
// calibration passed on the same labels; either way it says which. labels
// and labelsChanged count the labeled cases graded in both runs and those
// whose label differs. Call it after ApplyBaseline.
func ApplyGraderChange(r *results.Results, b *results.Baseline, labels, labelsChanged int) {
	var changed []results.VersionChange
	for _, c := range b.VersionsChanged {
		if c.IsGrader() {
			changed = append(changed, c)
		}
	}
	if len(changed) == 0 {
		return
	}
	gc := &results.GraderChange{Changes: changed, Labels: labels, LabelsChanged: labelsChanged}
	var what []string
	for _, c := range changed {
		what = append(what, c.String())
	}
	head := fmt.Sprintf("the grader changed against %s (%s)", b.File, strings.Join(what, "; "))
	why := calibrationProblem(r)
	switch {
	case why != "":
	case labels == 0:
		why = "no labeled case was graded in both runs, so the frozen calibration set was not re-run"
	case labelsChanged > 0:
		why = fmt.Sprintf("%d of the %d labeled cases graded in both runs carry another label, so this is not the frozen calibration set re-run", labelsChanged, labels)
	}
	b.GraderChange = gc
	if why == "" {
		gc.CalibrationPassed = true
		gc.Message = fmt.Sprintf("%s; this run's calibration passed on the same %d labels, so the comparison stands", head, labels)
		r.Warnings = append(r.Warnings, results.Warning{Code: results.ReasonGraderChangedVsBaseline, Message: gc.Message})
		return
	}
	gc.Message = fmt.Sprintf("%s: a change of the scores may be the grader's and not the candidate's, and %s", head, why)
	r.Reasons = append(r.Reasons, results.Reason{Code: results.ReasonGraderChangedVsBaseline, File: b.File, Message: gc.Message})
	b.Status = results.VerdictHold
	r.Verdict = results.VerdictHold
	slices.SortStableFunc(r.Reasons, func(a, b results.Reason) int { return cmp.Compare(reasonRank(a.Code), reasonRank(b.Code)) })
}

// calibrationProblem says why this run's calibration did not pass; "" when
// it did.
func calibrationProblem(r *results.Results) string {
	labeled := false
	for _, s := range r.Slices {
		if c := s.Confusion; c != nil && c.TruePass+c.FalsePass+c.TrueFail+c.FalseFail > 0 {
			labeled = true
		}
	}
	if !labeled {
		return "this run graded no labeled case, so its calibration was not checked"
	}
	var held []string
	for _, rs := range r.Reasons {
		if rs.Code == results.ReasonFalsePass || rs.Code == results.ReasonAgreementBelowThreshold {
			what := rs.Code
			if rs.Slice != "" {
				what += " in " + fmt.Sprintf("%q", rs.Slice)
			}
			held = append(held, what)
		}
	}
	if len(held) > 0 {
		return "this run's calibration did not pass (" + strings.Join(held, ", ") + ")"
	}
	return ""
}
