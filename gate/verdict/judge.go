package verdict

import (
	"fmt"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// AddJudge records a model grader's usage and its lint findings in the
// results, and holds for what they call for: a hold finding (grader_lint)
// and a budget that would have been exceeded (judge_budget_exceeded).
func AddJudge(r *results.Results, u *results.JudgeUsage, lint []manifest.Finding) {
	r.Judge = u
	var front []results.Reason
	if u != nil && u.NotSent > 0 {
		front = append(front, results.Reason{
			Code:    results.ReasonJudgeBudgetExceeded,
			CaseIDs: u.NotSentIDs,
			Message: fmt.Sprintf("grader.max_calls is %d but this run needed %d model calls beyond the judge cache: none was sent, and the %d tasks the cache could not answer are unevaluable", u.MaxCalls, u.Needed, u.NotSent),
		})
	}
	for _, f := range lint {
		r.Findings = append(r.Findings, f)
		if f.Severity == manifest.SeverityHold {
			front = append(front, results.Reason{Code: results.ReasonGraderLint, File: f.File, Message: f.Message})
		}
	}
	if len(front) > 0 {
		r.Reasons = append(front, r.Reasons...)
		sortReasons(r.Reasons)
		r.Verdict = results.VerdictHold
	}
}
