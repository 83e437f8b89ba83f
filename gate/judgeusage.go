package gate

import (
	"fmt"
	"slices"

	"github.com/gradegate/gradegate/manifest"
)

// ReasonJudgeBudgetExceeded holds a run of a model grader that needed more
// model calls than grader.max_calls allows. None of them is sent: the cases
// the cache could not answer are unevaluable, and this reason says why.
const ReasonJudgeBudgetExceeded = "judge_budget_exceeded"

// JudgeUsage is what asking a model grader cost: the results "judge" block.
type JudgeUsage struct {
	Type     string `json:"type"`     // score_model | label_model
	Model    string `json:"model"`    // as the manifest names it
	Endpoint string `json:"endpoint"` // chat_completions | responses
	// Calls counts the requests the API answered in this run (a request
	// and its retries count once); Retries counts the extra attempts.
	Calls   int `json:"calls"`
	Retries int `json:"retries"`
	// Cached counts the tasks answered from the judge cache.
	Cached int `json:"cached"`
	// NotSent counts the tasks not asked because the budget would be
	// exceeded; NotSentIDs names them (cases and canaries).
	NotSent    int      `json:"not_sent"`
	NotSentIDs []string `json:"not_sent_ids,omitempty"`
	// Needed is how many calls the run needed beyond the cache, and
	// MaxCalls the budget (0: none).
	Needed   int `json:"needed"`
	MaxCalls int `json:"max_calls,omitempty"`
	// InvalidReplies counts the replies that did not parse to a score in
	// range or to one of the labels (class invalid_return); InvalidIDs
	// names them.
	InvalidReplies int      `json:"invalid_replies"`
	InvalidIDs     []string `json:"invalid_ids,omitempty"`
	// Tokens were spent by this run's calls; CachedTokens were spent when
	// the replayed replies were recorded.
	Tokens       Tokens `json:"tokens"`
	CachedTokens Tokens `json:"cached_tokens"`
	// WallMS is the time spent grading with the model, cache included.
	WallMS    float64 `json:"wall_ms"`
	CacheMode string  `json:"cache_mode,omitempty"` // off | read | write | readwrite
}

// Tokens counts a model's input and output tokens as the API reported them.
type Tokens struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
}

// AddJudge records a model grader's usage and its lint findings in the
// results, and holds for what they call for: a hold finding (grader_lint)
// and a budget that would have been exceeded (judge_budget_exceeded).
func (r *Results) AddJudge(u *JudgeUsage, lint []manifest.Finding) {
	r.Judge = u
	var front []Reason
	if u != nil && u.NotSent > 0 {
		front = append(front, Reason{
			Code:    ReasonJudgeBudgetExceeded,
			CaseIDs: u.NotSentIDs,
			Message: fmt.Sprintf("grader.max_calls is %d but this run needed %d model calls beyond the judge cache: none was sent, and the %d tasks the cache could not answer are unevaluable", u.MaxCalls, u.Needed, u.NotSent),
		})
	}
	for _, f := range lint {
		r.Findings = append(r.Findings, f)
		if f.Severity == manifest.SeverityHold {
			front = append(front, Reason{Code: ReasonGraderLint, File: f.File, Message: f.Message})
		}
	}
	if len(front) > 0 {
		r.Reasons = append(front, r.Reasons...)
		sortReasons(r.Reasons)
		r.Verdict = VerdictHold
	}
}

// CodeModelNotPinned is the lint finding of a model grader whose model is
// an alias rather than a dated snapshot. It holds as grader_lint.
const CodeModelNotPinned = "model_not_pinned"

// splitJudgeLint separates a model grader's lint findings, which AddJudge
// weighs, from the others.
func splitJudgeLint(fs []manifest.Finding) (rest, judge []manifest.Finding) {
	for _, f := range fs {
		if f.Code == CodeModelNotPinned {
			judge = append(judge, f)
		} else {
			rest = append(rest, f)
		}
	}
	return rest, judge
}

// mergeJudge adds up the shards' judge usage; nil when no shard asked a
// model.
func mergeJudge(parts []*Results) *JudgeUsage {
	var out *JudgeUsage
	for _, p := range parts {
		u := p.Judge
		if u == nil {
			continue
		}
		if out == nil {
			out = &JudgeUsage{Type: u.Type, Model: u.Model, Endpoint: u.Endpoint, MaxCalls: u.MaxCalls, CacheMode: u.CacheMode}
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
