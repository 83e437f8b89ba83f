package results

import "github.com/gradegate/gradegate/manifest/dataset"

// ReasonAgreementBelowThreshold holds a mandatory slice whose reviewers
// agree less (Cohen's kappa) than gate.calibration.min_agreement: its
// labels are too unsure to gate anything.
const ReasonAgreementBelowThreshold = "agreement_below_threshold"

// Confusion is a slice's calibration as the grader's verdicts meet the
// human labels: the four cells, and the false pass and false fail rates.
// Only labels that calibrate count: not those of a warn-only status, nor
// stale ones under gate.calibration.current_labels_only (StaleExcluded).
type Confusion struct {
	TruePass  int `json:"true_pass"`  // passed, human 1
	FalsePass int `json:"false_pass"` // passed, human 0
	TrueFail  int `json:"true_fail"`  // failed, human 0
	FalseFail int `json:"false_fail"` // failed, human 1
	// Unlabeled counts the graded cases without a label that calibrates.
	Unlabeled int `json:"unlabeled"`
	// StaleExcluded counts the graded cases whose label was left out as
	// stale.
	StaleExcluded int `json:"stale_excluded"`
	// FalsePassRate is FalsePass over the human fails graded
	// (FalsePass + TrueFail); FalseFailRate is FalseFail over the human
	// passes graded. nil when there is none.
	FalsePassRate *float64 `json:"false_pass_rate"`
	FalseFailRate *float64 `json:"false_fail_rate"`
	// FalsePassCI and FalseFailCI are the rates' Wilson intervals at
	// gate.confidence.level, [lo, hi].
	FalsePassCI []float64 `json:"false_pass_ci,omitempty"`
	FalseFailCI []float64 `json:"false_fail_ci,omitempty"`
}

// Agreement is how far the reviewers of a set of cases agree: raw
// agreement (the share of reviewer pairs that gave the same score) and
// Cohen's kappa, which discounts the agreement chance alone would give,
// with its interval.
type Agreement struct {
	// Rows counts the cases with two reviewer labels or more; Pairs the
	// reviewer pairs, and Agreed those that gave one score.
	Rows   int `json:"rows"`
	Pairs  int `json:"pairs"`
	Agreed int `json:"agreed"`
	// Table is the pairs by score, [first reviewer][second reviewer], 0
	// for a fail and 1 for a pass.
	Table [2][2]int `json:"table"`
	// Raw is Agreed over Pairs.
	Raw *float64 `json:"raw"`
	// Kappa is Cohen's kappa, (Raw − chance) / (1 − chance), with chance
	// the agreement expected from each side's share of passes; nil when
	// every score is the same (chance is 1 and kappa is undefined).
	Kappa *float64 `json:"kappa"`
	// KappaCI is kappa ± z·√(Raw(1−Raw) / (Pairs(1−chance)²)), clipped to
	// [−1, 1]: Cohen's large-sample interval.
	KappaCI []float64 `json:"kappa_ci,omitempty"`
	// MinAgreement is gate.calibration.min_agreement when set.
	MinAgreement *float64 `json:"min_agreement,omitempty"`
}

// Labels is the results document's "labels" block: the cases whose labels
// are in doubt or do not gate, each group counted with its first cases,
// and the reviewers' agreement over every case.
type Labels struct {
	// Agreement is over every case with reviewer labels that gate.
	Agreement *Agreement `json:"agreement,omitempty"`
	// Brittle lists the cases whose reviewers disagreed.
	Brittle dataset.CaseList `json:"brittle"`
	// Stale lists the labeled cases of another rubric version than
	// rubric.version; StaleExcluded says they are left out of calibration.
	Stale         dataset.CaseList `json:"stale"`
	StaleExcluded bool             `json:"stale_excluded"`
	// WarnOnly holds a group per warn-only label status, in status order.
	WarnOnly []WarnOnlyGroup `json:"warn_only"`
}

// WarnOnlyGroup is the cases of one warn-only label status: graded and
// shown, never counted toward a threshold or a hold (and so not in
// counts, overall or slices).
type WarnOnlyGroup struct {
	Status string `json:"status"`
	Counts
	// Cases names the first cases with their status.
	Cases []WarnOnlyCase `json:"cases"`
}

// WarnOnlyCase is one case of a warn-only group.
type WarnOnlyCase struct {
	CaseID string   `json:"case_id"`
	Slices []string `json:"slices"`
	Status string   `json:"status"` // pass | fail | error | omitted
	// HumanScore is the case's label, shown and never counted.
	HumanScore *int `json:"human_score"`
}

// WarnOnlyRows counts the case rows that no count, rate or hold includes:
// those of a warn-only label status.
func (l *Labels) WarnOnlyRows() int {
	if l == nil {
		return 0
	}
	n := 0
	for _, g := range l.WarnOnly {
		n += g.Intended
	}
	return n
}
