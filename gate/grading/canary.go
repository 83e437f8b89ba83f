package grading

import (
	"fmt"

	"github.com/gradegate/gradegate/canary"
	"github.com/gradegate/gradegate/manifest"
)

// EvaluateCanary judges the outcome of grading canary c with canary.Evaluate;
// when the grader errored, the message quotes the error and its grader line.
func EvaluateCanary(c manifest.Canary, threshold float64, o Outcome) canary.Result {
	if o.Omitted != "" {
		return canary.Result{Status: canary.StatusFail, Message: "the preprocessor dropped the canary's row (" + o.Omitted + "), so the grader never saw it; a canary must reach the grader"}
	}
	if res, ok := evaluateExpectError(c, o); ok {
		return res
	}
	return canary.Evaluate(c, threshold, string(o.Class), o.Score, ErrorText(o.Error))
}

// ErrorText is how a canary's error is shown in its message.
func ErrorText(e *CaseError) string {
	if e == nil {
		return ""
	}
	msg := e.Message
	if e.Type != "" {
		msg = e.Type + ": " + msg
	}
	if e.Line > 0 {
		msg = fmt.Sprintf("%s (grader line %d)", msg, e.Line)
	}
	return msg
}

// ownRaise says why a grader_exception is not a raise of the grader's own
// code on the canary's input, or "" when it is: a grader that failed to
// load, or an import that failed (a missing package is not the fixture
// error an expect_error canary is written for). A Python grader's raise
// during grade() always has a line of the grader's file in its traceback;
// a model grader's (a prompt template that cannot be filled) has none.
func ownRaise(o Outcome) string {
	e := o.Error
	switch {
	case o.LoadFailed:
		return "the grader failed to load (" + ErrorText(e) + "), which is not a raise on this input"
	case e == nil:
		return "the outcome names no exception"
	case o.Preprocess:
		return "the preprocessor raised (" + ErrorText(e) + "), not the grader; an expect_error canary must reach the grader"
	case e.Type == "ImportError" || e.Type == "ModuleNotFoundError":
		return "an import failed (" + ErrorText(e) + "); a missing module is not a raise on this input"
	}
	return ""
}

// evaluateExpectError fails an expect_error canary whose grader_exception
// is not the grader's own raise on its input; ok is false when the canary is
// left to canary.Evaluate.
func evaluateExpectError(c manifest.Canary, o Outcome) (canary.Result, bool) {
	if !c.ExpectError || o.Class != ClassGraderException {
		return canary.Result{}, false
	}
	why := ownRaise(o)
	if why == "" {
		return canary.Result{}, false
	}
	return canary.Result{Status: canary.StatusFail, Message: "expect_error is set but " + why}, true
}
