// Package canary judges one canary's outcome against what the manifest says
// it must be: the exact reward within its tolerance, or an error for an
// expect_error canary.
//
// Evaluation is pure: the caller runs the grader (through the same sandbox
// and packaging path as the dataset) and hands over what came back in plain
// values, so this package depends on manifest only and the gate, the hosted
// parity check and the mutation tester can all share it.
package canary

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gradegate/gradegate/manifest"
)

// Statuses of an evaluated canary.
const (
	StatusPass = "pass"
	StatusFail = "fail"
)

// classOK is the outcome class of a valid score (gate.ClassOK); repeated here
// as a plain string because gate imports canary, not the other way round.
const classOK = "ok"

// classRaised is the one class that counts as "the grader raised"
// (gate.ClassGraderException).
const classRaised = "grader_exception"

// Result is the verdict on one canary.
type Result struct {
	Status string // StatusPass or StatusFail
	// Message says exactly why a canary failed; for a pass it restates what
	// was checked, so a reader sees what the canary guards.
	Message string
}

// Passed reports whether the canary passed.
func (r Result) Passed() bool { return r.Status == StatusPass }

// Evaluate judges one canary.
//
// threshold is grader.pass_threshold. class is the outcome class ("ok",
// "grader_exception", "timeout", …); got is the gating score when class is
// "ok"; errMsg describes the error otherwise (type and message, as the caller
// wants it shown).
//
// A canary fails when
//   - expect_error is set and the grader did not raise. Only a raise
//     (grader_exception) counts: the canary proves the grader refuses a
//     corrupt fixture on purpose, and a timeout, crash or invalid return on
//     that input is a different bug that would go unnoticed if it counted;
//   - it should score but the outcome is not ok (the class is named);
//   - the score differs from expect: exactly when tolerance is 0, otherwise
//     by more than tolerance;
//   - polarity: the score lands on the wrong side of threshold. A positive
//     canary (expect >= threshold) must score >= threshold and a negative one
//     below it, whatever tolerance allowed: the gate counts a case as a pass
//     at the threshold, so a canary on the wrong side means the gate would
//     classify that known input the wrong way.
//
// Every problem that applies is named, joined with "; ".
func Evaluate(c manifest.Canary, threshold float64, class string, got *float64, errMsg string) Result {
	if c.ExpectError {
		switch {
		case class == classRaised:
			return pass("the grader raised as expected (%s)", describe(class, errMsg))
		case class == classOK:
			return fail("expect_error is set but the grader did not raise: it returned %s", score(got))
		default:
			return fail("expect_error is set but the grader did not raise: the case ended in %s", describe(class, errMsg))
		}
	}
	if c.Expect == nil {
		// The manifest parser rejects such a canary; failing closed keeps
		// a hand-built one from passing by default.
		return fail("the canary has neither expect nor expect_error")
	}
	expect := *c.Expect
	if class != classOK {
		return fail("the grader errored (%s); expected reward %s", describe(class, errMsg), num(expect))
	}
	if got == nil || math.IsNaN(*got) || math.IsInf(*got, 0) {
		return fail("the grader returned no finite reward; expected %s", num(expect))
	}

	var problems []string
	if c.Tolerance > 0 {
		if math.Abs(*got-expect) > c.Tolerance {
			problems = append(problems, fmt.Sprintf("reward %s differs from expect %s by more than tolerance %s",
				num(*got), num(expect), num(c.Tolerance)))
		}
	} else if *got != expect {
		problems = append(problems, fmt.Sprintf("reward %s differs from expect %s", num(*got), num(expect)))
	}

	positive := expect >= threshold
	gotPass := *got >= threshold
	switch {
	case positive && !gotPass:
		problems = append(problems, fmt.Sprintf(
			"polarity: a positive canary (expect %s >= pass_threshold %s) scored %s, which the gate counts as a fail",
			num(expect), num(threshold), num(*got)))
	case !positive && gotPass:
		problems = append(problems, fmt.Sprintf(
			"polarity: a negative canary (expect %s < pass_threshold %s) scored %s, which the gate counts as a pass",
			num(expect), num(threshold), num(*got)))
	}
	if len(problems) > 0 {
		return Result{Status: StatusFail, Message: strings.Join(problems, "; ")}
	}

	kind := "negative"
	if positive {
		kind = "positive"
	}
	if c.Tolerance > 0 {
		return pass("%s canary: reward %s within %s of expect %s", kind, num(*got), num(c.Tolerance), num(expect))
	}
	return pass("%s canary: reward %s as expected", kind, num(*got))
}

func pass(format string, args ...any) Result {
	return Result{Status: StatusPass, Message: fmt.Sprintf(format, args...)}
}

func fail(format string, args ...any) Result {
	return Result{Status: StatusFail, Message: fmt.Sprintf(format, args...)}
}

// num formats a reward the way a user wrote it: 1 not 1.000000, and
// 0.30000000000000004 in full, because an exact compare failed on it.
func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// describe names an error outcome: its class, and the message when there is one.
func describe(class, errMsg string) string {
	if errMsg == "" {
		return class
	}
	return class + ": " + errMsg
}

func score(got *float64) string {
	if got == nil {
		return "no score"
	}
	return num(*got)
}
