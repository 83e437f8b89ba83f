package gate

import (
	"slices"
	"testing"

	"github.com/gradegate/gradegate/manifest"
)

func TestAddJudge(t *testing.T) {
	lint := []manifest.Finding{
		{Code: CodeModelNotPinned, Severity: manifest.SeverityHold, File: "g.yaml", Line: 9, Message: "alias"},
		{Code: "sample_unused", Severity: manifest.SeverityWarn, File: "g.yaml", Line: 10, Message: "unused"},
	}
	tests := []struct {
		name    string
		verdict string
		usage   *JudgeUsage
		lint    []manifest.Finding
		want    []string
		verd    string
	}{
		{"nothing to weigh keeps a pass", VerdictPass, &JudgeUsage{Calls: 3}, nil, []string{}, VerdictPass},
		{"a warn finding keeps a pass", VerdictPass, &JudgeUsage{}, lint[1:], []string{}, VerdictPass},
		{"an alias holds first", VerdictHold, &JudgeUsage{}, lint, []string{ReasonGraderLint, ReasonOverallBelowThreshold}, VerdictHold},
		{"a budget holds first", VerdictPass, &JudgeUsage{NotSent: 2, Needed: 9, MaxCalls: 5, NotSentIDs: []string{"a", "b"}}, nil, []string{ReasonJudgeBudgetExceeded}, VerdictHold},
		{"a python grader has no block", VerdictPass, nil, nil, []string{}, VerdictPass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Results{Verdict: tt.verdict, Reasons: []Reason{}}
			if tt.verdict == VerdictHold {
				r.Reasons = []Reason{{Code: ReasonOverallBelowThreshold}}
			}
			r.AddJudge(tt.usage, tt.lint)
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
	r := &Results{Verdict: VerdictHold, Reasons: []Reason{{Code: ReasonCanaryFailed}, {Code: ReasonUnevaluableCases}}}
	r.AddJudge(&JudgeUsage{NotSent: 1, Needed: 2, MaxCalls: 1},
		[]manifest.Finding{{Code: "import_not_in_image", Severity: manifest.SeverityHold, Message: "import requests"}})
	var got []string
	for _, x := range r.Reasons {
		got = append(got, x.Code)
	}
	want := []string{ReasonGraderLint, ReasonJudgeBudgetExceeded, ReasonCanaryFailed, ReasonUnevaluableCases}
	if !slices.Equal(got, want) {
		t.Errorf("reasons = %v, want %v", got, want)
	}
}

func TestMergeJudge(t *testing.T) {
	a := &Results{Judge: &JudgeUsage{Type: "score_model", Model: "m-2024-01-01", Calls: 2, Cached: 1, NotSent: 1, NotSentIDs: []string{"x"}, Needed: 3, Tokens: Tokens{10, 2}, WallMS: 5}}
	b := &Results{Judge: &JudgeUsage{Type: "score_model", Model: "m-2024-01-01", Calls: 1, InvalidReplies: 1, InvalidIDs: []string{"y"}, Needed: 1, Tokens: Tokens{5, 1}, CachedTokens: Tokens{7, 7}, WallMS: 4}}
	got := mergeJudge([]*Results{a, {}, b})
	want := JudgeUsage{Type: "score_model", Model: "m-2024-01-01", Calls: 3, Cached: 1, NotSent: 1, NotSentIDs: []string{"x"}, Needed: 4,
		InvalidReplies: 1, InvalidIDs: []string{"y"}, Tokens: Tokens{15, 3}, CachedTokens: Tokens{7, 7}, WallMS: 9}
	if got == nil || got.Calls != want.Calls || got.Needed != want.Needed || got.Tokens != want.Tokens || got.CachedTokens != want.CachedTokens ||
		!slices.Equal(got.NotSentIDs, want.NotSentIDs) || !slices.Equal(got.InvalidIDs, want.InvalidIDs) || got.WallMS != want.WallMS {
		t.Errorf("mergeJudge = %+v, want %+v", got, want)
	}
	if mergeJudge([]*Results{{}, {}}) != nil {
		t.Error("python shards merged into a judge block")
	}
}
