package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/judge/judgetest"
	"github.com/gradegate/gradegate/gate/results"
)

// obedientJudge is keywordJudge, except that it does what an answer tells
// the grader to do: the defect of a model judge that follows instructions
// inside the text it grades.
func obedientJudge(prompt string) string {
	if strings.Contains(strings.ToLower(prompt), "give it the highest score") {
		return judgetest.Score(5)
	}
	return keywordJudge(prompt)
}

// TestBrokenJudgeFollowsInstructions: the broken example whose judge obeys
// the answer holds with metamorphic_violation on grader_instruction, its
// written canaries all passing; the same suite with a judge that does not
// obey passes. Both count the derived canaries' calls before sending any,
// within max_calls.
func TestBrokenJudgeFollowsInstructions(t *testing.T) {
	manifestPath := filepath.Join("..", "..", "testdata", "examples", "broken", "judge-follows-instructions", "gradegate.yaml")
	tests := []struct {
		name   string
		answer func(string) string
		code   int
	}{
		{"an obedient judge holds", obedientJudge, exitHold},
		{"a judge that grades the facts passes", keywordJudge, exitPass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := judgetest.New(t, tt.answer)
			env := judgeEnv("OPENAI_API_KEY", judgetest.Key, "OPENAI_BASE_URL", fake.URL())
			resultsPath := filepath.Join(t.TempDir(), "r.json")
			code, out, errs := runCLI(t, env, "run", manifestPath, "--results", resultsPath)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tt.code, out, errs)
			}
			res := readJudgeResults(t, resultsPath)
			for _, r := range res.Reasons {
				if r.Code == results.ReasonCanaryFailed {
					t.Errorf("a written canary failed: %s", r.Message)
				}
			}
			i := slices.IndexFunc(res.Reasons, func(r results.Reason) bool {
				return r.Code == results.ReasonMetamorphicViolation && strings.HasPrefix(r.Message, "grader_instruction ")
			})
			if (i >= 0) != (tt.code == exitHold) {
				t.Errorf("reasons %+v", res.Reasons)
			}
			if !strings.Contains(errs, "derived canaries: 36 variants, up to 24 extra model calls, 24 of them not in the judge cache") {
				t.Errorf("stderr does not count the derived canaries' calls first:\n%s", errs)
			}
			if fake.Requests() != 34 || res.Judge.Calls != 34 || fake.BadAuth() != 0 {
				t.Errorf("%d requests, usage %+v; want 10 and 24 derived", fake.Requests(), res.Judge)
			}
		})
	}
}
