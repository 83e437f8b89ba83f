package grading

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// Class is the one class every graded outcome has: ok, or the one reason
// the case is unevaluable (invalid_return, grader_exception, timeout,
// memory_exceeded, sandbox_violation, worker_crash).
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
	// Trace asks the worker for the grader line whose return produced the
	// score (Outcome.ReturnLine). It costs a hook on every Python call, so
	// only a failed canary's replay sets it, never a case.
	Trace bool
	// RecordReads asks the runner to note which of the item's top-level
	// keys the grade read (Outcome.Reads): set for canaries only, whose
	// derived fixture-breaking variants remove each in turn, so the cases'
	// path stays as it is.
	RecordReads bool
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
	// ReturnLine is the grader source line whose return produced the
	// score, when the task asked for a trace and the worker could tell.
	ReturnLine int
	// Reads are the item's top-level keys the grade read, in the order
	// first read, when the task asked (Task.RecordReads) and the runner
	// can tell; nil otherwise.
	Reads []string
	// LoadFailed marks an outcome made up for a grader that never loaded:
	// its error is the load's, not a raise on this task's input.
	LoadFailed bool
	// Repeats is how many times a model grader was asked the task
	// (gate.repeats) when more than once; RepeatsDisagree says the asks
	// fell on both sides of grader.pass_threshold.
	Repeats         int
	RepeatsDisagree bool
	// Omitted is set when the task never reached the grader and that is no
	// error: the preprocessor dropped its row (preprocessed_out). Class is
	// then empty, and there is no score.
	Omitted string
	// Preprocess marks an error of the preprocessor (it raised, returned
	// what is not a row, or ran past its time), not of the grader.
	Preprocess bool
	// Batch is the grade_batch call's report (metrics) under MKA1's
	// contract, shared by every outcome of the batch; nil otherwise, and
	// when the batch as a whole was not a valid return.
	Batch *BatchReport
	// DroppedScores are the score keys MKA1's rules dropped from the
	// grader's return (a non-finite or non-numeric value), with why.
	DroppedScores []string
	// ExtractedOutput is the extracted_output a batch update replaced the
	// sample's with (MKA1's contract), as JSON (a string or null); nil
	// when none did.
	ExtractedOutput json.RawMessage
	// ModelCalls are the model calls the grader made through ctx for
	// this task, in order; for a batch, every case of it carries them.
	ModelCalls []ModelCall
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

// GradeTasks calls r.Grade and holds it to the Runner contract: one outcome
// per task, a class on each, a finite score on every ok. A runner breaking it
// is a bug in gradegate, so the error makes the caller fail closed rather
// than guess a status. Without tasks it returns nil, and once ctx has ended
// ctx's error, in both cases without calling r.
func GradeTasks(ctx context.Context, r Runner, tasks []Task) ([]Outcome, error) {
	if len(tasks) == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out, err := r.Grade(ctx, tasks)
	if err != nil {
		return nil, err
	}
	if len(out) != len(tasks) {
		return nil, fmt.Errorf("the runner returned %d outcomes for %d tasks", len(out), len(tasks))
	}
	for i, o := range out {
		if err := CheckOutcome(o); err != nil {
			return nil, fmt.Errorf("%s: %w", tasks[i].ID, err)
		}
	}
	return out, nil
}

// CheckOutcome holds one outcome to the Runner contract: a class, and a
// finite score on every ok; or an omission, with neither.
func CheckOutcome(o Outcome) error {
	switch {
	case o.Omitted != "" && (o.Class != "" || o.Score != nil):
		return errors.New("the runner returned an omitted outcome with a class or a score")
	case o.Omitted != "":
		return nil
	case o.Class == "":
		return errors.New("the runner returned an outcome without a class")
	case o.Class == ClassOK && (o.Score == nil || math.IsNaN(*o.Score) || math.IsInf(*o.Score, 0)):
		return errors.New("the runner returned class ok without a finite score")
	}
	return nil
}

// Sandbox states what isolation was in force (results "sandbox" block).
type Sandbox struct {
	UID         int  `json:"uid"`          // uid graders ran as; -1 when unchanged
	Seccomp     bool `json:"seccomp"`      // the socket filter was installed
	LandlockABI int  `json:"landlock_abi"` // 0: filesystem confinement by file permissions only
	Rlimits     bool `json:"rlimits"`
	Unsandboxed bool `json:"unsandboxed"`
	// Signals names what keeps graders' signals inside their own
	// processes: "landlock" (its signal scope), "uid" (a uid of their
	// own) or "seccomp" (their own process group only); "" when unknown.
	Signals string `json:"signals,omitempty"`
}

// ErrorOf is the outcome's error, with its class always set.
func ErrorOf(o Outcome) *CaseError {
	if o.Error == nil {
		return &CaseError{Class: o.Class, Message: string(o.Class)}
	}
	e := *o.Error
	e.Class = o.Class
	return &e
}

// BatchReport is what one grade_batch call returned beside its cases'
// scores, under MKA1's contract: the aggregate metrics it kept and the ones
// it dropped (non-finite, or undeclared by grader.metrics), and how many
// cases the batch held. Every outcome of the batch points at the same
// report.
type BatchReport struct {
	Metrics map[string]float64
	Dropped []string
	Cases   int
}
