package checkrun_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"unicode"

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
	texts := []string{
		"::add-mask::secret", "::error file=x::owned", "ok\n::stop-commands::tok", "##[error]legacy",
		"\u202eevil", "zero\u200bwidth\ufeff", "\x1b[31mred", strings.Repeat("L", 5000),
		"ping @octocat and @acme/security-team", "see #123, GH-42 and acme/repo#9",
		"https://evil.example/login www.evil.example", ":smile: :100:",
	}
	for _, ws := range "\u00a0\u1680\u2000\u2005\u200a\u202f\u205f\u3000\u0085\u2028\u2029\v\f" {
		texts = append(texts, string(ws)+"::warning::ws", "ok\n"+string(ws)+"::add-mask::ws")
	}
	for _, text := range texts {
		res := resultsDoc(results.VerdictHold, 1)
		res.Manifest.Name = "name-" + text
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
		// The details link is gradegate's own.
		summary := strings.ReplaceAll(out.GetSummary(), "https://github.com/o/r/actions/runs/99", "")
		texts := map[string]string{"title": out.GetTitle(), "summary": summary, "name": srv.Requests()[0].Body.Name}
		for i, a := range out.Annotations {
			texts["annotation title "+string(rune('0'+i))] = a.GetTitle()
			texts["annotation message "+string(rune('0'+i))] = a.GetMessage()
		}
		if len(out.Annotations) == 0 {
			t.Fatalf("%.20q: no annotations to check", text)
		}
		for where, s := range texts {
			for _, line := range strings.Split(s, "\n") {
				if strings.HasPrefix(strings.TrimLeftFunc(line, unicode.IsSpace), "::") || strings.Contains(line, "##[") {
					t.Errorf("%.20q: %s: a workflow command: %.120q", text, where, line)
				}
				if strings.ContainsAny(line, "\x1b\u202e\u200b\ufeff") {
					t.Errorf("%.20q: %s: a control or invisible character: %.120q", text, where, line)
				}
			}
			if m := liveMarkup.FindString(regexp.MustCompile(`\\(.)`).ReplaceAllString(s, "$1")); m != "" {
				t.Errorf("%.20q: %s: GitHub would link or render %q: %.120q", text, where, m, s)
			}
			if strings.Contains(s, strings.Repeat("L", 1001)) {
				t.Errorf("%.20q: %s: the 5000-character value went out whole", text, where)
			}
		}
	}
}

// liveMarkup finds what GitHub would link or render in text as it reads it:
// a mention or team mention, an issue reference, a URL, a www. link, an
// emoji code.
var liveMarkup = regexp.MustCompile(`(?i)@[a-z0-9]|#[0-9]|\bgh-[0-9]|[a-z]://|\bwww\.|:[a-z0-9_+-]*[a-z_+-][a-z0-9_+-]*:|:100:|:1234:`)
