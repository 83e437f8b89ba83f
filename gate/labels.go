package gate

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// ReasonAgreementBelowThreshold holds a mandatory slice whose reviewers
// agree less (Cohen's kappa) than gate.calibration.min_agreement: its
// labels are too unsure to gate anything.
const ReasonAgreementBelowThreshold = "agreement_below_threshold"

// Warning codes of the label groups.
const (
	// WarnWarnOnlyLabels: cases whose label status is warn-only were
	// graded and are shown, and count toward no threshold and no hold.
	WarnWarnOnlyLabels = "warn_only_labels"
	// WarnBrittleLabels: cases whose reviewers disagreed.
	WarnBrittleLabels = "brittle_labels"
)

// kappaZ is the normal quantile of the kappa interval: 95% two-sided.
// gate.confidence.level sets it when Evidence.Z is given.
const kappaZ = 1.959964

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
	// FalsePassCI and FalseFailCI are the rates' confidence intervals,
	// [lo, hi]; absent when the run computes none (Evidence.RateCI).
	FalsePassCI []float64 `json:"false_pass_ci,omitempty"`
	FalseFailCI []float64 `json:"false_fail_ci,omitempty"`
}

// confusionOf fills the rates of a group's cells.
func confusionOf(g *group, ci func(k, n int) []float64) *Confusion {
	c := &Confusion{TruePass: g.truePass, FalsePass: g.falsePass, TrueFail: g.trueFail, FalseFail: g.falseFail,
		StaleExcluded: g.staleExcluded}
	c.Unlabeled = g.Graded - c.TruePass - c.FalsePass - c.TrueFail - c.FalseFail
	if n := c.FalsePass + c.TrueFail; n > 0 {
		r := round4(float64(c.FalsePass) / float64(n))
		c.FalsePassRate = &r
		if ci != nil {
			c.FalsePassCI = ci(c.FalsePass, n)
		}
	}
	if n := c.FalseFail + c.TruePass; n > 0 {
		r := round4(float64(c.FalseFail) / float64(n))
		c.FalseFailRate = &r
		if ci != nil {
			c.FalseFailCI = ci(c.FalseFail, n)
		}
	}
	return c
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

// agreementOf computes an Agreement from a pairs table.
func agreementOf(a *dataset.Agreement, z float64) *Agreement {
	if a == nil || a.Pairs() == 0 {
		return nil
	}
	t := a.Table
	n := float64(a.Pairs())
	out := &Agreement{Rows: a.Rows, Pairs: a.Pairs(), Agreed: t[0][0] + t[1][1], Table: t}
	po := float64(out.Agreed) / n
	raw := round4(po)
	out.Raw = &raw
	first1 := float64(t[1][0]+t[1][1]) / n
	second1 := float64(t[0][1]+t[1][1]) / n
	pe := first1*second1 + (1-first1)*(1-second1)
	if pe >= 1-1e-12 {
		return out
	}
	k := (po - pe) / (1 - pe)
	se := math.Sqrt(po*(1-po)/n) / (1 - pe)
	kr := round4(k)
	out.Kappa = &kr
	out.KappaCI = []float64{math.Floor(max(k-z*se, -1)*1e4) / 1e4, math.Ceil(min(k+z*se, 1)*1e4) / 1e4}
	return out
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

// warnOnlyGroup tallies the rows of one warn-only status.
type warnOnlyGroup struct {
	Counts
	cases []WarnOnlyCase
}

func (w *warnOnlyGroup) add(c CaseResult) {
	w.Intended++
	switch c.Status {
	case StatusPass:
		w.Graded++
		w.Passed++
	case StatusFail:
		w.Graded++
		w.Failed++
	case StatusError:
		w.Errored++
	default:
		w.Omitted++
	}
	if len(w.cases) < maxReasonIDs {
		w.cases = append(w.cases, WarnOnlyCase{CaseID: c.CaseID, Slices: nonNil(c.Slices), Status: c.Status, HumanScore: c.HumanScore})
	}
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

// labelsBlock builds the labels block, and sets each slice's confusion
// and agreement; it returns nil when the dataset has nothing of labels to
// say (no reviewer labels, no stale or warn-only case, no label at all).
func (d *decider) labelsBlock(out []SliceResult) *Labels {
	sum := d.ev.Labels
	z := cmpOrF(d.ev.Z, kappaZ)
	labeled := false
	for i := range out {
		g := d.t.slices[out[i].Name]
		if out[i].Name == NoSlice {
			g = d.t.noSlice
		}
		if g == nil {
			continue
		}
		if g.labeled() {
			labeled = true
			out[i].Confusion = confusionOf(g, d.ev.RateCI)
		}
		if sum != nil {
			key := out[i].Name
			if key == NoSlice {
				key = ""
			}
			if a := agreementOf(sum.Agreement[key], z); a != nil {
				a.MinAgreement = d.g.Calibration.MinAgreement
				out[i].Agreement = a
			}
		}
	}
	l := &Labels{WarnOnly: []WarnOnlyGroup{}}
	if sum != nil {
		l.Agreement = agreementOf(&sum.Overall, z)
		if l.Agreement != nil {
			l.Agreement.MinAgreement = d.g.Calibration.MinAgreement
		}
		l.Brittle, l.Stale, l.StaleExcluded = sum.Brittle, sum.Stale, sum.Excluded
	}
	statuses := make([]string, 0, len(d.t.warnOnly))
	for s := range d.t.warnOnly {
		statuses = append(statuses, s)
	}
	slices.Sort(statuses)
	for _, s := range statuses {
		w := d.t.warnOnly[s]
		l.WarnOnly = append(l.WarnOnly, WarnOnlyGroup{Status: s, Counts: w.Counts, Cases: nonNil(w.cases)})
	}
	if l.Brittle.Cases == nil {
		l.Brittle.Cases = []dataset.LabelCase{}
	}
	if l.Stale.Cases == nil {
		l.Stale.Cases = []dataset.LabelCase{}
	}
	if !labeled && l.Agreement == nil && l.Brittle.Count == 0 && l.Stale.Count == 0 && len(l.WarnOnly) == 0 {
		return nil
	}
	return l
}

// labelRules applies gate.calibration.min_agreement to the slices, and
// warns about the warn-only and brittle groups.
func (d *decider) labelRules(out []SliceResult, l *Labels) {
	if l == nil {
		return
	}
	for _, g := range l.WarnOnly {
		d.warn(Warning{Code: WarnWarnOnlyLabels, Message: fmt.Sprintf(
			"%s with label status %q graded and shown, counted toward no threshold and no hold: %d passed, %d failed, %d errored, %d omitted (%s)",
			countOf(g.Intended, "case", "cases"), g.Status, g.Passed, g.Failed, g.Errored, g.Omitted, warnOnlyIDs(g))})
	}
	if n := l.Brittle.Count; n > 0 {
		var ids []string
		for _, c := range l.Brittle.Cases[:min(idsPerKey, len(l.Brittle.Cases))] {
			ids = append(ids, fmt.Sprintf("%s (%s)", c.CaseID, c.Detail))
		}
		d.warn(Warning{Code: WarnBrittleLabels, Message: fmt.Sprintf(
			"%s whose reviewers disagreed (brittle: the rubric may need to be clearer there); calibration uses the adjudicated label: %s",
			countOf(n, "case", "cases"), idList(ids, n))})
	}
	least := d.g.Calibration.MinAgreement
	if least == nil {
		return
	}
	for i := range out {
		sr := &out[i]
		a := sr.Agreement
		if a == nil || a.Kappa == nil || *a.Kappa >= *least-rateEpsilon {
			continue
		}
		msg := fmt.Sprintf("slice %q: reviewer agreement (Cohen's kappa) %s [%s, %s] over %d %s is below gate.calibration.min_agreement %s (raw agreement %s)",
			sr.Name, rate(*a.Kappa), rate(a.KappaCI[0]), rate(a.KappaCI[1]), a.Rows, plural(a.Rows, "case", "cases"), rate(*least), rate(*a.Raw))
		if holds(manifest.SliceRule{Mandatory: sr.Mandatory, WarnOnly: sr.WarnOnly}) {
			d.hold(Reason{Code: ReasonAgreementBelowThreshold, Slice: sr.Name, Message: "mandatory " + msg + ": its labels are too unsure to gate"})
			sr.Status = VerdictHold
			continue
		}
		d.warn(Warning{Code: ReasonAgreementBelowThreshold, Slice: sr.Name, Message: msg})
	}
}

func warnOnlyIDs(g WarnOnlyGroup) string {
	var ids []string
	for _, c := range g.Cases[:min(idsPerKey, len(g.Cases))] {
		ids = append(ids, c.CaseID+" "+c.Status)
	}
	return idList(ids, g.Intended)
}

func cmpOrF(v, def float64) float64 {
	if v > 0 {
		return v
	}
	return def
}

// labelSummaryOf rebuilds the dataset's label summary from a results
// document, for merge: the shards read the same dataset, so any shard's
// block is the whole dataset's.
func labelSummaryOf(r *Results) *dataset.LabelSummary {
	if r.Labels == nil {
		return nil
	}
	sum := &dataset.LabelSummary{Agreement: map[string]*dataset.Agreement{},
		Brittle: r.Labels.Brittle, Stale: r.Labels.Stale, Excluded: r.Labels.StaleExcluded}
	if a := r.Labels.Agreement; a != nil {
		sum.Overall = dataset.Agreement{Rows: a.Rows, Table: a.Table}
	}
	for _, s := range r.Slices {
		if s.Agreement == nil {
			continue
		}
		key := s.Name
		if key == NoSlice {
			key = ""
		}
		sum.Agreement[key] = &dataset.Agreement{Rows: s.Agreement.Rows, Table: s.Agreement.Table}
	}
	return sum
}

// labelsText is a one-line account of a slice's calibration for the
// human and markdown reports: the confusion cells and rates.
func (c *Confusion) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "true pass %d, false pass %d, true fail %d, false fail %d", c.TruePass, c.FalsePass, c.TrueFail, c.FalseFail)
	if c.FalsePassRate != nil {
		fmt.Fprintf(&b, "; false pass rate %s%s", rate(*c.FalsePassRate), ciText(c.FalsePassCI))
	}
	if c.FalseFailRate != nil {
		fmt.Fprintf(&b, "; false fail rate %s%s", rate(*c.FalseFailRate), ciText(c.FalseFailCI))
	}
	if c.Unlabeled > 0 {
		fmt.Fprintf(&b, "; %d unlabeled", c.Unlabeled)
	}
	if c.StaleExcluded > 0 {
		fmt.Fprintf(&b, "; %d stale left out", c.StaleExcluded)
	}
	return b.String()
}

// String is kappa with its interval and the raw agreement.
func (a *Agreement) String() string {
	k := "undefined (every score the same)"
	if a.Kappa != nil {
		k = rate(*a.Kappa) + ciText(a.KappaCI)
	}
	return fmt.Sprintf("kappa %s, raw %s over %d %s", k, rate(*a.Raw), a.Rows, plural(a.Rows, "case", "cases"))
}

func ciText(ci []float64) string {
	if len(ci) != 2 {
		return ""
	}
	return fmt.Sprintf(" [%s, %s]", rate(ci[0]), rate(ci[1]))
}
