package verdict

import (
	"fmt"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// judge holds for what a model grader's usage and lint call for: a hold
// finding (grader_lint) and a budget that would have been exceeded
// (judge_budget_exceeded).
func (d *decider) judge() {
	for _, r := range judgeReasons(d.ev.Judge, d.ev.JudgeLint) {
		d.hold(r)
	}
}

// judgeReasons are the holds of a model grader's run: a budget that would
// have been exceeded, then every hold finding of its lint.
func judgeReasons(u *results.JudgeUsage, lint []manifest.Finding) []results.Reason {
	var front []results.Reason
	if u != nil && u.NotSent > 0 {
		front = append(front, results.Reason{
			Code:    results.ReasonJudgeBudgetExceeded,
			CaseIDs: u.NotSentIDs,
			Message: fmt.Sprintf("grader.max_calls is %d but this run needed %d model calls beyond the judge cache: none was sent, and the %d tasks the cache could not answer are unevaluable", u.MaxCalls, u.Needed, u.NotSent),
		})
	}
	for _, f := range lint {
		if f.Severity == manifest.SeverityHold {
			front = append(front, results.Reason{Code: results.ReasonGraderLint, File: f.File, Message: f.Message})
		}
	}
	return front
}
