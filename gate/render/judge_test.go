package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/results"
)

func TestJudgeLine(t *testing.T) {
	tests := []struct {
		name string
		u    *results.JudgeUsage
		want string
	}{
		{"python grader", nil, ""},
		{"recorded run", &results.JudgeUsage{Type: "score_model", Model: "gpt-4o-2024-08-06", Endpoint: "chat_completions", Calls: 12, Retries: 1, InvalidReplies: 1, Tokens: results.Tokens{Input: 4810, Output: 96}, WallMS: 2430},
			"judge: score_model gpt-4o-2024-08-06 (chat_completions): 12 calls (1 retries), 0 cached, 1 invalid reply, tokens 4810 in / 96 out, 2.4 s"},
		{"replay over budget", &results.JudgeUsage{Type: "label_model", Model: "m\x1b[31m", Endpoint: "responses", Cached: 3, NotSent: 2, Needed: 2, MaxCalls: 1, CachedTokens: results.Tokens{Input: 9, Output: 3}},
			"judge: label_model m\\x1b[31m (responses): 0 calls, 3 cached, 2 not sent (max_calls 1, needed 2), 0 invalid replies, tokens 0 in / 0 out (replayed 9 / 3), 0.0 s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := JudgeLine(tt.u); got != tt.want {
				t.Errorf("JudgeLine =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestJudgeLineInOutputs(t *testing.T) {
	res := &results.Results{Verdict: results.VerdictPass, Judge: &results.JudgeUsage{Type: "score_model", Model: "gpt-4o-2024-08-06", Endpoint: "chat_completions", Calls: 2}}
	var h, m bytes.Buffer
	if err := Human(&h, res, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&m, res, MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"human": h.String(), "markdown": m.String()} {
		if !strings.Contains(out, "gpt-4o-2024-08-06 (chat") || !strings.Contains(out, "2 calls") {
			t.Errorf("%s output lacks the judge line:\n%s", name, out)
		}
	}
}
