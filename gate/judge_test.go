package gate

import (
	"context"
	"slices"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/verdict"
	"github.com/gradegate/gradegate/manifest"
)

// decide grades suite s as TestRun does (gradeRun), lets add put what a
// later stage of the pipeline found into the evidence, and returns the
// results document Decide builds from it.
func decide(t *testing.T, s suite, add func(*verdict.Evidence)) *results.Results {
	t.Helper()
	return decideWith(t, s, suiteOutcomes(), add)
}

// decideWith is decide with the grader's outcomes given.
func decideWith(t *testing.T, s suite, outcomes map[string]grading.Outcome, add func(*verdict.Evidence)) *results.Results {
	t.Helper()
	r := &fakeRunner{outcomes: outcomes, sandbox: grading.Sandbox{UID: 60001, Seccomp: true, LandlockABI: 7, Rlimits: true}}
	g, err := gradeRun(context.Background(), s.inputs(), r, Options{Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	add(&g.ev)
	return g.document()
}

func TestJudgeReasons(t *testing.T) {
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
			s := newSuite()
			s.m.Gate.MaxOmitted = 1
			if tt.verdict == results.VerdictHold {
				s.m.Gate.MinPassRate = 0.95
			}
			base := decide(t, s, func(*verdict.Evidence) {})
			r := decide(t, s, func(ev *verdict.Evidence) { ev.Judge, ev.JudgeLint = tt.usage, tt.lint })
			got := []string{}
			for _, x := range r.Reasons {
				got = append(got, x.Code)
			}
			if r.Verdict != tt.verd || !slices.Equal(got, tt.want) || r.Judge != tt.usage || len(r.Findings) != len(base.Findings)+len(tt.lint) {
				t.Errorf("verdict %s reasons %v findings %d judge %v", r.Verdict, got, len(r.Findings), r.Judge)
			}
		})
	}
}

// A model grader's reasons take their place root cause first: lint and a
// judge budget that sent nothing before the canaries they broke.
func TestJudgeReasonOrder(t *testing.T) {
	s := newSuite()
	s.m.Gate.MaxOmitted = 1
	s.m.Gate.MaxErrors = 0
	outcomes := suiteOutcomes()
	outcomes["boolean-total-one-cent"] = scored(1)
	r := decideWith(t, s, outcomes, func(ev *verdict.Evidence) {
		ev.Judge = &results.JudgeUsage{NotSent: 1, Needed: 2, MaxCalls: 1}
		ev.JudgeLint = []manifest.Finding{{Code: "import_not_in_image", Severity: manifest.SeverityHold, Message: "import requests"}}
	})
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
