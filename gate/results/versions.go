package results

import (
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
	// rubric (its digest), grader (its digest), preprocess (its digest),
	// judge_model or candidate.
	Name string `json:"name"`
	Base string `json:"base"`
	Head string `json:"head"`
}

// IsGrader reports whether the change is the grader's or the judge's; a
// preprocessor's counts as the grader's, since it rewrites what grade reads.
func (c VersionChange) IsGrader() bool {
	return c.Name == "grader" || c.Name == "judge_model" || c.Name == "preprocess"
}

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
	add("preprocess", base.Digests.Preprocess, head.Digests.Preprocess)
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
