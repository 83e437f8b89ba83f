package gate

import (
	"slices"
	"testing"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/verdict"
	"github.com/gradegate/gradegate/manifest"
)

func TestAddJudge(t *testing.T) {
	lint := []manifest.Finding{
		{Code: results.CodeModelNotPinned, Severity: manifest.SeverityHold, File: "g.yaml", Line: 9, Message: "alias"},
		{Code: "sample_unused", Severity: manifest.SeverityWarn, File: "g.yaml", Line: 10, Message: "unused"},
	}
	tests := []struct {
		name    string
		verdict string
		usage   *results.JudgeUsage
		lint    []manifest.Finding
		want    []string
		verd    string
	}{
		{"nothing to weigh keeps a pass", results.VerdictPass, &results.JudgeUsage{Calls: 3}, nil, []string{}, results.VerdictPass},
		{"a warn finding keeps a pass", results.VerdictPass, &results.JudgeUsage{}, lint[1:], []string{}, results.VerdictPass},
		{"an alias holds first", results.VerdictHold, &results.JudgeUsage{}, lint, []string{results.ReasonGraderLint, results.ReasonOverallBelowThreshold}, results.VerdictHold},
		{"a budget holds first", results.VerdictPass, &results.JudgeUsage{NotSent: 2, Needed: 9, MaxCalls: 5, NotSentIDs: []string{"a", "b"}}, nil, []string{results.ReasonJudgeBudgetExceeded}, results.VerdictHold},
		{"a python grader has no block", results.VerdictPass, nil, nil, []string{}, results.VerdictPass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &results.Results{Verdict: tt.verdict, Reasons: []results.Reason{}}
			if tt.verdict == results.VerdictHold {
				r.Reasons = []results.Reason{{Code: results.ReasonOverallBelowThreshold}}
			}
			verdict.AddJudge(r, tt.usage, tt.lint)
			got := []string{}
			for _, x := range r.Reasons {
				got = append(got, x.Code)
			}
			if r.Verdict != tt.verd || !slices.Equal(got, tt.want) || r.Judge != tt.usage || len(r.Findings) != len(tt.lint) {
				t.Errorf("verdict %s reasons %v findings %d judge %v", r.Verdict, got, len(r.Findings), r.Judge)
			}
		})
	}
}

// Reasons added after the verdict take their place root cause first: lint
// and a judge budget that sent nothing before the canaries they broke.
func TestAddJudgeKeepsReasonOrder(t *testing.T) {
	r := &results.Results{Verdict: results.VerdictHold, Reasons: []results.Reason{{Code: results.ReasonCanaryFailed}, {Code: results.ReasonUnevaluableCases}}}
	verdict.AddJudge(r, &results.JudgeUsage{NotSent: 1, Needed: 2, MaxCalls: 1},
		[]manifest.Finding{{Code: "import_not_in_image", Severity: manifest.SeverityHold, Message: "import requests"}})
	var got []string
	for _, x := range r.Reasons {
		got = append(got, x.Code)
	}
	want := []string{results.ReasonGraderLint, results.ReasonJudgeBudgetExceeded, results.ReasonCanaryFailed, results.ReasonUnevaluableCases}
	if !slices.Equal(got, want) {
		t.Errorf("reasons = %v, want %v", got, want)
	}
}

func TestMergeJudge(t *testing.T) {
	a := &results.Results{Judge: &results.JudgeUsage{Type: "score_model", Model: "m-2024-01-01", Calls: 2, Cached: 1, NotSent: 1, NotSentIDs: []string{"x"}, Needed: 3, Tokens: results.Tokens{Input: 10, Output: 2}, WallMS: 5}}
	b := &results.Results{Judge: &results.JudgeUsage{Type: "score_model", Model: "m-2024-01-01", Calls: 1, InvalidReplies: 1, InvalidIDs: []string{"y"}, Needed: 1, Tokens: results.Tokens{Input: 5, Output: 1}, CachedTokens: results.Tokens{Input: 7, Output: 7}, WallMS: 4}}
	got := mergeJudge([]*results.Results{a, {}, b})
	want := results.JudgeUsage{Type: "score_model", Model: "m-2024-01-01", Calls: 3, Cached: 1, NotSent: 1, NotSentIDs: []string{"x"}, Needed: 4,
		InvalidReplies: 1, InvalidIDs: []string{"y"}, Tokens: results.Tokens{Input: 15, Output: 3}, CachedTokens: results.Tokens{Input: 7, Output: 7}, WallMS: 9}
	if got == nil || got.Calls != want.Calls || got.Needed != want.Needed || got.Tokens != want.Tokens || got.CachedTokens != want.CachedTokens ||
		!slices.Equal(got.NotSentIDs, want.NotSentIDs) || !slices.Equal(got.InvalidIDs, want.InvalidIDs) || got.WallMS != want.WallMS {
		t.Errorf("mergeJudge = %+v, want %+v", got, want)
	}
	if mergeJudge([]*results.Results{{}, {}}) != nil {
		t.Error("python shards merged into a judge block")
	}
}
