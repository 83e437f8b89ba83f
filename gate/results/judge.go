package results

import ()

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

// CodeModelNotPinned is the lint finding of a model grader whose model is
// an alias rather than a dated snapshot. It holds as grader_lint.
const CodeModelNotPinned = "model_not_pinned"
