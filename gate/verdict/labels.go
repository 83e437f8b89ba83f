package verdict

import (
	"fmt"
	"math"
	"slices"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/stats"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// results.Warning codes of the label groups.
const (
	// WarnWarnOnlyLabels: cases whose label status is warn-only were
	// graded and are shown, and count toward no threshold and no hold.
	WarnWarnOnlyLabels = "warn_only_labels"
	// WarnBrittleLabels: cases whose reviewers disagreed.
	WarnBrittleLabels = "brittle_labels"
)

// kappaZ is the normal quantile of a 95% two-sided interval, for the
// tests of agreementOf; a run uses gate.confidence.level's.
const kappaZ = 1.959964

// confusionOf fills the rates of a group's cells, each with its Wilson
// interval at level, as every other rate has.
func confusionOf(g *group, level float64) *results.Confusion {
	ci := func(k, n int) []float64 {
		iv := stats.Wilson(k, n, level).Round()
		return []float64{iv.Lo, iv.Hi}
	}
	c := &results.Confusion{TruePass: g.truePass, FalsePass: g.falsePass, TrueFail: g.trueFail, FalseFail: g.falseFail,
		StaleExcluded: g.staleExcluded}
	c.Unlabeled = g.Graded - c.TruePass - c.FalsePass - c.TrueFail - c.FalseFail
	if n := c.FalsePass + c.TrueFail; n > 0 {
		r := round4(float64(c.FalsePass) / float64(n))
		c.FalsePassRate = &r
		c.FalsePassCI = ci(c.FalsePass, n)
	}
	if n := c.FalseFail + c.TruePass; n > 0 {
		r := round4(float64(c.FalseFail) / float64(n))
		c.FalseFailRate = &r
		c.FalseFailCI = ci(c.FalseFail, n)
	}
	return c
}

// agreementOf computes an results.Agreement from a pairs table.
func agreementOf(a *dataset.Agreement, z float64) *results.Agreement {
	if a == nil || a.Pairs() == 0 {
		return nil
	}
	t := a.Table
	n := float64(a.Pairs())
	out := &results.Agreement{Rows: a.Rows, Pairs: a.Pairs(), Agreed: t[0][0] + t[1][1], Table: t}
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

// warnOnlyGroup tallies the rows of one warn-only status.
type warnOnlyGroup struct {
	results.Counts
	cases []results.WarnOnlyCase
}

func (w *warnOnlyGroup) add(c results.CaseResult) {
	w.Intended++
	switch c.Status {
	case results.StatusPass:
		w.Graded++
		w.Passed++
	case results.StatusFail:
		w.Graded++
		w.Failed++
	case results.StatusError:
		w.Errored++
	default:
		w.Omitted++
	}
	if len(w.cases) < maxReasonIDs {
		w.cases = append(w.cases, results.WarnOnlyCase{CaseID: c.CaseID, Slices: nonNil(c.Slices), Status: c.Status, HumanScore: c.HumanScore})
	}
}

// labelsBlock builds the labels block, and sets each slice's confusion
// and agreement; it returns nil when the dataset has nothing of labels to
// say (no reviewer labels, no stale or warn-only case, no label at all).
func (d *decider) labelsBlock(out []results.SliceResult) *results.Labels {
	sum := d.ev.Labels
	z := stats.Z(d.level())
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
			out[i].Confusion = confusionOf(g, d.level())
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
	l := &results.Labels{WarnOnly: []results.WarnOnlyGroup{}}
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
		l.WarnOnly = append(l.WarnOnly, results.WarnOnlyGroup{Status: s, Counts: w.Counts, Cases: nonNil(w.cases)})
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
func (d *decider) labelRules(out []results.SliceResult, l *results.Labels) {
	if l == nil {
		return
	}
	for _, g := range l.WarnOnly {
		d.warn(results.Warning{Code: WarnWarnOnlyLabels, Message: fmt.Sprintf(
			"%s with label status %q graded and shown, counted toward no threshold and no hold: %d passed, %d failed, %d errored, %d omitted (%s)",
			countOf(g.Intended, "case", "cases"), g.Status, g.Passed, g.Failed, g.Errored, g.Omitted, warnOnlyIDs(g))})
	}
	if n := l.Brittle.Count; n > 0 {
		var ids []string
		for _, c := range l.Brittle.Cases[:min(idsPerKey, len(l.Brittle.Cases))] {
			ids = append(ids, fmt.Sprintf("%s (%s)", c.CaseID, c.Detail))
		}
		d.warn(results.Warning{Code: WarnBrittleLabels, Message: fmt.Sprintf(
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
			d.hold(results.Reason{Code: results.ReasonAgreementBelowThreshold, Slice: sr.Name, Message: "mandatory " + msg + ": its labels are too unsure to gate"})
			sr.Status = results.VerdictHold
			continue
		}
		d.warn(results.Warning{Code: results.ReasonAgreementBelowThreshold, Slice: sr.Name, Message: msg})
	}
}

func warnOnlyIDs(g results.WarnOnlyGroup) string {
	var ids []string
	for _, c := range g.Cases[:min(idsPerKey, len(g.Cases))] {
		ids = append(ids, c.CaseID+" "+c.Status)
	}
	return idList(ids, g.Intended)
}

// nonNil makes a nil slice empty, so the results JSON says [] and not null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
