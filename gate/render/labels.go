package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gradegate/gradegate/gate/results"
)

// labelsShown is how many cases of a label group a report names; the
// results JSON lists more.
const labelsShown = 10

// calibrated reports whether any slice has a calibration or an agreement
// to show.
func calibrated(res *results.Results) bool {
	for _, s := range res.Slices {
		if s.Confusion != nil || s.Agreement != nil {
			return true
		}
	}
	return false
}

// calibrationRow is a slice's row of the calibration table.
func calibrationRow(s results.SliceResult) []string {
	row := []string{s.Name, "—", "—", "—", "—", "—", "—", "—", "—"}
	if c := s.Confusion; c != nil {
		row[1], row[2], row[3], row[4] = strconv.Itoa(c.TruePass), strconv.Itoa(c.FalsePass), strconv.Itoa(c.TrueFail), strconv.Itoa(c.FalseFail)
		row[5] = rateInterval(c.FalsePassRate, c.FalsePassCI)
		row[6] = rateInterval(c.FalseFailRate, c.FalseFailCI)
		var left []string
		if c.Unlabeled > 0 {
			left = append(left, fmt.Sprintf("%d unlabeled", c.Unlabeled))
		}
		if c.StaleExcluded > 0 {
			left = append(left, fmt.Sprintf("%d stale", c.StaleExcluded))
		}
		if len(left) > 0 {
			row[7] = strings.Join(left, ", ")
		}
	}
	if a := s.Agreement; a != nil {
		row[8] = agreementText(a)
	}
	return row
}

var calibrationHead = []string{"slice", "true pass", "false pass", "true fail", "false fail", "false pass rate", "false fail rate", "left out", "reviewer agreement"}

// rateInterval is a rate as a percentage with its interval when there is one.
func rateInterval(r *float64, ci []float64) string {
	if r == nil {
		return "—"
	}
	s := pct(r)
	if len(ci) == 2 {
		s += fmt.Sprintf(" [%s, %s]", pct(&ci[0]), pct(&ci[1]))
	}
	return s
}

// agreementText is Cohen's kappa with its interval, and the raw agreement.
func agreementText(a *results.Agreement) string {
	k := "κ undefined"
	if a.Kappa != nil {
		k = "κ " + strconv.FormatFloat(*a.Kappa, 'f', 2, 64)
		if len(a.KappaCI) == 2 {
			k += fmt.Sprintf(" [%.2f, %.2f]", a.KappaCI[0], a.KappaCI[1])
		}
	}
	s := fmt.Sprintf("%s, raw %s, %s", k, pct(a.Raw), plural(a.Rows, "case", "cases"))
	if a.MinAgreement != nil {
		s += fmt.Sprintf(", min κ %.2f", *a.MinAgreement)
	}
	return s
}

// labelGroupLines are the label groups, one line each: warn-only statuses,
// brittle and stale cases.
func labelGroupLines(l *results.Labels) []string {
	if l == nil {
		return nil
	}
	var out []string
	for _, g := range l.WarnOnly {
		var ids []string
		for _, c := range g.Cases[:min(labelsShown, len(g.Cases))] {
			label := "unlabeled"
			if c.HumanScore != nil {
				label = "label " + strconv.Itoa(*c.HumanScore)
			}
			ids = append(ids, fmt.Sprintf("%s %s (%s)", Text(c.CaseID), c.Status, label))
		}
		out = append(out, fmt.Sprintf("%s %q (warn-only, counted toward nothing): %d passed, %d failed, %d errored, %d omitted: %s",
			countCases(g.Intended), Text(g.Status), g.Passed, g.Failed, g.Errored, g.Omitted, more(ids, g.Intended)))
	}
	if l.Brittle.Count > 0 {
		var ids []string
		for _, c := range l.Brittle.Cases[:min(labelsShown, len(l.Brittle.Cases))] {
			ids = append(ids, fmt.Sprintf("%s (%s)", Text(c.CaseID), Text(c.Detail)))
		}
		out = append(out, fmt.Sprintf("brittle: %s whose reviewers disagreed: %s", countCases(l.Brittle.Count), more(ids, l.Brittle.Count)))
	}
	if l.Stale.Count > 0 {
		var ids []string
		for _, c := range l.Stale.Cases[:min(labelsShown, len(l.Stale.Cases))] {
			ids = append(ids, fmt.Sprintf("%s (%s)", Text(c.CaseID), Text(c.Detail)))
		}
		what := "still calibrating"
		if l.StaleExcluded {
			what = "left out of calibration"
		}
		out = append(out, fmt.Sprintf("stale: %s labeled under another rubric version, %s: %s", countCases(l.Stale.Count), what, more(ids, l.Stale.Count)))
	}
	if a := l.Agreement; a != nil {
		out = append(out, "reviewer agreement over every slice: "+agreementText(a))
	}
	return out
}

func countCases(n int) string {
	if n == 1 {
		return "1 case"
	}
	return fmt.Sprintf("%d cases", n)
}

func more(ids []string, n int) string {
	s := strings.Join(ids, ", ")
	if n > len(ids) {
		s += fmt.Sprintf(" and %d more", n-len(ids))
	}
	return s
}

// humanLabels writes the calibration table and the label groups.
func humanLabels(ew *errWriter, res *results.Results, p palette) error {
	if calibrated(res) {
		ew.printf("\n%s\n", p.title.Sprint("Calibration against human labels"))
		t := newTable(ew, calibrationHead, []align{left, right, right, right, right, right, right, left, left})
		var rows [][]string
		for _, s := range res.Slices {
			if s.Confusion == nil && s.Agreement == nil {
				continue
			}
			row := calibrationRow(s)
			row[0] = oneLine(row[0])
			rows = append(rows, row)
		}
		if err := renderTable(t, rows); err != nil {
			return err
		}
	}
	if lines := labelGroupLines(res.Labels); len(lines) > 0 {
		ew.printf("\n%s\n", p.title.Sprint("Labels"))
		for _, l := range lines {
			ew.printf("  %s\n", oneLine(l))
		}
	}
	return nil
}

// labelSections are the markdown calibration table and label groups.
func labelSections(res *results.Results) []mdSection {
	var secs []mdSection
	if calibrated(res) {
		s := mdSection{head: "\n### Calibration against human labels\n\n" + tableHead("slice", ">true pass", ">false pass", ">true fail", ">false fail",
			">false pass rate", ">false fail rate", "left out", "reviewer agreement"), keepHead: true, what: "calibration rows"}
		for _, sl := range res.Slices {
			if sl.Confusion == nil && sl.Agreement == nil {
				continue
			}
			row := calibrationRow(sl)
			row[0] = md(row[0])
			s.rows = append(s.rows, mdRow{tableRow(row...), rankSlicePass})
		}
		secs = append(secs, s)
	}
	if lines := labelGroupLines(res.Labels); len(lines) > 0 {
		s := mdSection{head: "\n### Labels\n\n", what: "label rows"}
		for _, l := range lines {
			s.rows = append(s.rows, mdRow{"- " + md(l) + "\n", rankWarning})
		}
		secs = append(secs, s)
	}
	return secs
}
