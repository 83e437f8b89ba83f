package gate

import (
	"slices"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// splitJudgeLint separates a model grader's lint findings, which the judge rule of Decide
// weighs, from the others.
func splitJudgeLint(fs []manifest.Finding) (rest, judge []manifest.Finding) {
	for _, f := range fs {
		if f.Code == results.CodeModelNotPinned {
			judge = append(judge, f)
		} else {
			rest = append(rest, f)
		}
	}
	return rest, judge
}

// mergeJudge adds up the shards' judge usage; nil when no shard asked a
// model.
func mergeJudge(parts []*results.Results) *results.JudgeUsage {
	var out *results.JudgeUsage
	for _, p := range parts {
		u := p.Judge
		if u == nil {
			continue
		}
		if out == nil {
			out = &results.JudgeUsage{Type: u.Type, Model: u.Model, Endpoint: u.Endpoint, MaxCalls: u.MaxCalls, CacheMode: u.CacheMode}
		}
		out.Calls += u.Calls
		out.Retries += u.Retries
		out.Cached += u.Cached
		out.NotSent += u.NotSent
		out.NotSentIDs = append(out.NotSentIDs, u.NotSentIDs...)
		out.Needed += u.Needed
		out.InvalidReplies += u.InvalidReplies
		out.InvalidIDs = append(out.InvalidIDs, u.InvalidIDs...)
		out.Tokens.Input += u.Tokens.Input
		out.Tokens.Output += u.Tokens.Output
		out.CachedTokens.Input += u.CachedTokens.Input
		out.CachedTokens.Output += u.CachedTokens.Output
		out.WallMS += u.WallMS
	}
	if out != nil {
		// Each shard lists at most 100; so does the merged block.
		for _, ids := range []*[]string{&out.NotSentIDs, &out.InvalidIDs} {
			slices.Sort(*ids)
			*ids = (*ids)[:min(len(*ids), 100)]
		}
	}
	return out
}
