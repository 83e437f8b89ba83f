package gate

import (
	"context"
	"encoding/json"
)

// Class is the one class every graded outcome has (SPEC section 4).
type Class string

// The outcome classes.
const (
	ClassOK               Class = "ok"
	ClassInvalidReturn    Class = "invalid_return"
	ClassGraderException  Class = "grader_exception"
	ClassTimeout          Class = "timeout"
	ClassMemoryExceeded   Class = "memory_exceeded"
	ClassSandboxViolation Class = "sandbox_violation"
	ClassWorkerCrash      Class = "worker_crash"
)

// Task is one call of the grader: grade(sample, item).
type Task struct {
	ID     string          // case_id, or the canary's name
	Sample json.RawMessage // the grader's first argument
	Item   json.RawMessage // the grader's second argument
}

// Outcome is what grading one Task produced.
type Outcome struct {
	Class Class
	// Score is the gating metric; set only when Class is ClassOK.
	Score *float64
	// Scores holds every score the grader returned ({"score": x} for a bare number).
	Scores map[string]float64
	Judge  json.RawMessage // the grader's "judge" dict, or nil
	Error  *CaseError      // set when Class is not ClassOK
	// Output is what the grader printed to stdout and stderr during this task,
	// cut to a bound.
	Output     string
	DurationMS float64
}

// CaseError describes why a task did not produce a valid score.
type CaseError struct {
	Class   Class  `json:"class"`
	Type    string `json:"type,omitempty"` // Python exception type, e.g. KeyError
	Message string `json:"message"`
	Line    int    `json:"line,omitempty"` // grader source line, where known
}

// Runner grades tasks with the grader in a sandbox. The worker pool implements it.
type Runner interface {
	// Grade returns one Outcome per task, in order. An error means the tool
	// itself failed (not the grader): the gate then exits 3.
	Grade(ctx context.Context, tasks []Task) ([]Outcome, error)
	// Sandbox reports which isolation layers are in force for this runner.
	Sandbox() Sandbox
}

// Sandbox states what isolation was in force (results "sandbox" block).
type Sandbox struct {
	UID         int  `json:"uid"`          // uid graders ran as; -1 when unchanged
	Seccomp     bool `json:"seccomp"`      // the socket filter was installed
	LandlockABI int  `json:"landlock_abi"` // 0: filesystem confinement by file permissions only
	Rlimits     bool `json:"rlimits"`
	Unsandboxed bool `json:"unsandboxed"`
}

// Reporter publishes a finished run somewhere (a GitHub check run, …).
// A reporting error never changes the verdict; the caller exits non-zero.
type Reporter interface {
	Report(ctx context.Context, res *Results) error
}
