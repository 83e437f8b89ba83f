package grading

import (
	"context"
	"encoding/json"
)

// ModelCall is one model call a Python grader asked for through ctx
// (ctx.responses_create, ctx.embeddings_create), as the gate made it.
type ModelCall struct {
	Kind  string `json:"kind"`  // responses | embeddings
	Model string `json:"model"` // after model="auto" was resolved
	// Request is the sha256 of the request as sent, the judge cache's key.
	Request string `json:"request_sha256,omitempty"`
	// Cached: the judge cache answered, no call was sent.
	Cached       bool    `json:"cached,omitempty"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	DurationMS   float64 `json:"duration_ms"`
	// Error is why the grader got an exception instead of a response:
	// the budget, a call a replay never recorded, the API refusing it.
	Error string `json:"error,omitempty"`
}

// ModelCallError is a model call refused in a way the grader sees: a
// Python exception of Type (ModelCallError, ModelCallBudgetExceeded,
// ModelCallNotRecorded) raised inside the grader. Any other error of a
// broker is the tool failing.
type ModelCallError struct {
	Type    string
	Message string
}

func (e *ModelCallError) Error() string { return e.Type + ": " + e.Message }

// ModelBroker makes a Python grader's model calls on its behalf, outside
// the sandbox, with the run's key, cache and retry rules.
type ModelBroker interface {
	// Call makes one call of kind ("responses" or "embeddings") with the
	// grader's keyword arguments, and returns the response as the grader
	// receives it. A *ModelCallError is raised in the grader; any other
	// error fails the run.
	Call(ctx context.Context, kind string, args json.RawMessage) (json.RawMessage, ModelCall, error)
}
