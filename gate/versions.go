package gate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// ReasonGraderChangedVsBaseline holds a run whose grader (its digest, or a
// model grader's judge model) differs from the base results', unless this
// run's calibration passed on the same labels: a judge migration can
// otherwise masquerade as a candidate regression or improvement.
const ReasonGraderChangedVsBaseline = "grader_changed_vs_baseline"

// VersionChange is one of the four versions of a run (dataset, rubric,
// grader and judge, candidate) that differs between two runs.
type VersionChange struct {
	// Name is dataset_revision, dataset (its digest), rubric_version,
	// rubric (its digest), grader (its digest), judge_model or candidate.
	Name string `json:"name"`
	Base string `json:"base"`
	Head string `json:"head"`
}

// IsGrader reports whether the change is the grader's or the judge's.
func (c VersionChange) IsGrader() bool { return c.Name == "grader" || c.Name == "judge_model" }

func (c VersionChange) String() string {
	return fmt.Sprintf("%s %s → %s", c.Name, orNone(c.Base), orNone(c.Head))
}

// orNone is a version as a message shows it: a digest by its first 12
// hex digits.
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	if hex, ok := strings.CutPrefix(s, "sha256:"); ok && len(hex) > 12 {
		return "sha256:" + hex[:12]
	}
	return s
}

// VersionChanges lists the versions that differ between a base and a head
// run, in the order dataset, rubric, grader, candidate. A version one run
// does not record (results written before it was) is not compared.
func VersionChanges(base, head *Results) []VersionChange {
	var out []VersionChange
	add := func(name, b, h string) {
		if b != h && b != "" && h != "" {
			out = append(out, VersionChange{Name: name, Base: b, Head: h})
		}
	}
	bv, hv := base.Versions, head.Versions
	add("dataset_revision", bv.DatasetRevision, hv.DatasetRevision)
	add("dataset", base.Digests.Dataset, head.Digests.Dataset)
	add("rubric_version", bv.RubricVersion, hv.RubricVersion)
	add("rubric", base.Digests.Rubric, head.Digests.Rubric)
	add("grader", base.Digests.Grader, head.Digests.Grader)
	add("judge_model", bv.JudgeModel, hv.JudgeModel)
	add("candidate", bv.Candidate.String(), hv.Candidate.String())
	return out
}

// Equal reports whether two runs record the same versions.
func (v Versions) Equal(o Versions) bool {
	vc, oc := v.Candidate, o.Candidate
	v.Candidate, o.Candidate = nil, nil
	return v == o && (vc == nil) == (oc == nil) && (vc == nil || (vc.String() == oc.String() && slices.Equal(vc.Models, oc.Models)))
}

// String is "model revision"; "" for none.
func (c *Candidate) String() string {
	if c == nil {
		return ""
	}
	return strings.TrimSpace(c.Model + " " + c.Revision)
}

// GraderChange is what the baseline comparison says when the grader or
// the judge changed: whether this run's calibration passed on the same
// labels, which lets the comparison stand.
type GraderChange struct {
	Changes []VersionChange `json:"changes"`
	// Labels counts the labeled cases graded in both runs; LabelsChanged
	// those whose label differs.
	Labels        int `json:"labels"`
	LabelsChanged int `json:"labels_changed"`
	// CalibrationPassed: this run's calibration passed (labeled cases
	// were graded, and no false_pass or agreement_below_threshold held)
	// on the base run's labels.
	CalibrationPassed bool   `json:"calibration_passed"`
	Message           string `json:"message"`
}

// ApplyGraderChange holds as grader_changed_vs_baseline when the grader or
// the judge changed between b's run and this one, unless this run's
// calibration passed on the same labels; either way it says which. labels
// and labelsChanged count the labeled cases graded in both runs and those
// whose label differs. Call it after ApplyBaseline.
func (r *Results) ApplyGraderChange(b *Baseline, labels, labelsChanged int) {
	var changed []VersionChange
	for _, c := range b.VersionsChanged {
		if c.IsGrader() {
			changed = append(changed, c)
		}
	}
	if len(changed) == 0 {
		return
	}
	gc := &GraderChange{Changes: changed, Labels: labels, LabelsChanged: labelsChanged}
	var what []string
	for _, c := range changed {
		what = append(what, c.String())
	}
	head := fmt.Sprintf("the grader changed against %s (%s)", b.File, strings.Join(what, "; "))
	why := r.calibrationProblem()
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
		r.Warnings = append(r.Warnings, Warning{Code: ReasonGraderChangedVsBaseline, Message: gc.Message})
		return
	}
	gc.Message = fmt.Sprintf("%s: a change of the scores may be the grader's and not the candidate's, and %s", head, why)
	r.Reasons = append(r.Reasons, Reason{Code: ReasonGraderChangedVsBaseline, File: b.File, Message: gc.Message})
	b.Status = VerdictHold
	r.Verdict = VerdictHold
	slices.SortStableFunc(r.Reasons, func(a, b Reason) int { return cmp.Compare(reasonRank(a.Code), reasonRank(b.Code)) })
}

// calibrationProblem says why this run's calibration did not pass; "" when
// it did.
func (r *Results) calibrationProblem() string {
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
		if rs.Code == ReasonFalsePass || rs.Code == ReasonAgreementBelowThreshold {
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
