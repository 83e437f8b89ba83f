package checkrun_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/checkrun/checkruntest"
	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// TestCheckRunNeutralisesHostileText: the annotations' titles and messages
// and the check run's summary carry no workflow command, terminal escape or
// invisible character from a grader or a dataset, and no value whole past
// the printer's bound.
func TestCheckRunNeutralisesHostileText(t *testing.T) {
	for _, text := range []string{
		"::add-mask::secret", "::error file=x::owned", "ok\n::stop-commands::tok", "##[error]legacy",
		"\u202eevil", "zero\u200bwidth\ufeff", "\x1b[31mred", strings.Repeat("L", 5000),
	} {
		res := resultsDoc(results.VerdictHold, 1)
		res.Cases[0].CaseID = "id-" + text
		res.Cases[0].Status = results.StatusError
		res.Cases[0].Class = grading.ClassGraderException
		res.Cases[0].Error = &grading.CaseError{Class: grading.ClassGraderException, Type: "ValueError", Message: "msg-" + text + "\n" + text, Line: 4}
		res.Reasons = append(res.Reasons, results.Reason{Code: results.ReasonCanaryFailed, Message: "reason-" + text})
		res.Findings = append(res.Findings, manifest.Finding{Code: "dataset_invalid", Severity: manifest.SeverityHold, File: "evals/order-summary/cases.jsonl", Line: 1, CaseID: "id-" + text, Message: "finding-" + text})

		srv := checkruntest.New(t)
		var s sleeps
		c := newCheck(t, srv, &s)
		if err := c.Report(context.Background(), res); err != nil {
			t.Fatal(err)
		}
		out := srv.Requests()[1].Body.Output
		texts := map[string]string{"title": out.GetTitle(), "summary": out.GetSummary()}
		for i, a := range out.Annotations {
			texts["annotation title "+string(rune('0'+i))] = a.GetTitle()
			texts["annotation message "+string(rune('0'+i))] = a.GetMessage()
		}
		if len(out.Annotations) == 0 {
			t.Fatalf("%.20q: no annotations to check", text)
		}
		for where, s := range texts {
			for _, line := range strings.Split(s, "\n") {
				if strings.HasPrefix(strings.TrimLeft(line, " \t"), "::") || strings.Contains(line, "##[") {
					t.Errorf("%.20q: %s: a workflow command: %.120q", text, where, line)
				}
				if strings.ContainsAny(line, "\x1b\u202e\u200b\ufeff") {
					t.Errorf("%.20q: %s: a control or invisible character: %.120q", text, where, line)
				}
			}
			if strings.Contains(s, strings.Repeat("L", 1001)) {
				t.Errorf("%.20q: %s: the 5000-character value went out whole", text, where)
			}
		}
	}
}
