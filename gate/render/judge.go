package render

import (
	"fmt"
	"strings"

	"github.com/gradegate/gradegate/gate/results"
)

// JudgeLine states what a model grader's calls cost, in the form every
// output uses: "judge: score_model gpt-4o-2024-08-06 (chat_completions):
// 12 calls, 30 cached, 0 not sent, 1 invalid reply, tokens 4810 in / 96
// out, 2.4 s".
func JudgeLine(u *results.JudgeUsage) string {
	if u == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "judge: %s %s (%s): %d calls", oneLine(u.Type), oneLine(u.Model), oneLine(u.Endpoint), u.Calls)
	if u.Retries > 0 {
		fmt.Fprintf(&b, " (%d retries)", u.Retries)
	}
	fmt.Fprintf(&b, ", %d cached", u.Cached)
	if u.MaxCalls > 0 || u.NotSent > 0 {
		fmt.Fprintf(&b, ", %d not sent (max_calls %d, needed %d)", u.NotSent, u.MaxCalls, u.Needed)
	}
	replies := "replies"
	if u.InvalidReplies == 1 {
		replies = "reply"
	}
	fmt.Fprintf(&b, ", %d invalid %s, tokens %d in / %d out", u.InvalidReplies, replies, u.Tokens.Input, u.Tokens.Output)
	if u.Cached > 0 {
		fmt.Fprintf(&b, " (replayed %d / %d)", u.CachedTokens.Input, u.CachedTokens.Output)
	}
	fmt.Fprintf(&b, ", %.1f s", u.WallMS/1000)
	return b.String()
}
