package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest/dataset"
)

func labeledResults() *results.Results {
	r := func(v float64) *float64 { return &v }
	one := 1
	return &results.Results{
		Schema: results.ResultsSchema, Verdict: results.VerdictHold,
		Manifest: results.ManifestRef{Name: "cancellation"},
		Slices: []results.SliceResult{
			{Name: "ineligible_shipped", Mandatory: true, Status: results.VerdictPass,
				Confusion: &results.Confusion{TruePass: 1, FalsePass: 1, TrueFail: 2, Unlabeled: 1, StaleExcluded: 1,
					FalsePassRate: r(0.3333), FalseFailRate: r(0), FalsePassCI: []float64{0.0615, 0.7923}}},
			{Name: "instruction_conflict\x1b[31m", Mandatory: true, Status: results.VerdictHold,
				Agreement: &results.Agreement{Rows: 3, Pairs: 3, Agreed: 2, Raw: r(0.6667), Kappa: r(0.4), KappaCI: []float64{-0.5602, 1}, MinAgreement: r(0.6)}},
		},
		Labels: &results.Labels{
			Brittle: dataset.CaseList{Count: 1, Cases: []dataset.LabelCase{{CaseID: "cancel-injection-005", Line: 14, Detail: "ana 1, ben 0"}}},
			Stale:   dataset.CaseList{Count: 1, Cases: []dataset.LabelCase{{CaseID: "cancel-shipped-013", Line: 9, Detail: "cancel-rubric-2"}}}, StaleExcluded: true,
			WarnOnly: []results.WarnOnlyGroup{{Status: "disputed", Counts: results.Counts{Intended: 1, Graded: 1, Passed: 1},
				Cases: []results.WarnOnlyCase{{CaseID: "cancel-shipped-014", Status: results.StatusPass, HumanScore: &one}}}},
		},
		Versions: results.Versions{GraderName: "cancellation_policy_v1", JudgeModel: "judge-2026-01-01",
			Candidate: &results.Candidate{Model: "support-assistant", Revision: "2026-11-30.2"}},
	}
}

// The calibration table, the label groups and the four versions reach both
// reports, and text from the results goes through the printer.
func TestLabelSections(t *testing.T) {
	res := labeledResults()
	var human bytes.Buffer
	if err := Human(&human, res, Options{}); err != nil {
		t.Fatal(err)
	}
	md := MarkdownString(res, MarkdownOptions{})
	for _, want := range []string{
		"Calibration against human labels",
		"33.3% [6.2%, 79.2%]",
		"1 unlabeled, 1 stale",
		"κ 0.40 [-0.56, 1.00], raw 66.7%, 3 cases, min κ 0.60",
		`1 case "disputed" (warn-only, counted toward nothing): 1 passed, 0 failed, 0 errored, 0 omitted: cancel-shipped-014 pass (label 1)`,
		"brittle: 1 case whose reviewers disagreed: cancel-injection-005 (ana 1, ben 0)",
		"stale: 1 case labeled under another rubric version, left out of calibration: cancel-shipped-013 (cancel-rubric-2)",
		"judge judge-2026-01-01",
		"candidate support-assistant 2026-11-30.2",
	} {
		if !strings.Contains(human.String(), want) {
			t.Errorf("human report lacks %q", want)
		}
		if !strings.Contains(md, want) {
			t.Errorf("markdown report lacks %q", want)
		}
	}
	if strings.Contains(human.String(), "\x1b[31m") || strings.Contains(md, "\x1b[31m") {
		t.Error("a slice name's terminal escape reached a report")
	}
}
