package canary

import (
	"math"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/manifest"
)

func f(v float64) *float64 { return &v }

// sum adds at run time, so the float64 rounding happens (constant arithmetic
// would be exact).
func sum(a, b float64) float64 { return a + b }

func TestEvaluate(t *testing.T) {
	tests := []struct {
		name      string
		canary    manifest.Canary
		threshold float64
		class     string
		got       *float64
		errMsg    string
		status    string
		message   []string // substrings the message must contain
	}{
		{
			name:      "positive exact match",
			canary:    manifest.Canary{Name: "eq", Expect: f(1)},
			threshold: 1, class: "ok", got: f(1),
			status: StatusPass, message: []string{"positive canary", "reward 1"},
		},
		{
			name:      "negative exact match",
			canary:    manifest.Canary{Name: "bool-total", Expect: f(0)},
			threshold: 1, class: "ok", got: f(0),
			status: StatusPass, message: []string{"negative canary"},
		},
		{
			name:      "reward differs from expect",
			canary:    manifest.Canary{Name: "bool-total", Expect: f(0)},
			threshold: 1, class: "ok", got: f(1),
			status: StatusFail, message: []string{"reward 1 differs from expect 0", "negative canary", "counts as a pass"},
		},
		{
			name:      "exact compare has no slack",
			canary:    manifest.Canary{Name: "partial", Expect: f(0.3)},
			threshold: 1, class: "ok", got: f(sum(0.1, 0.2)),
			status: StatusFail, message: []string{"reward 0.30000000000000004 differs from expect 0.3"},
		},
		{
			name:      "within tolerance",
			canary:    manifest.Canary{Name: "partial", Expect: f(0.3), Tolerance: 0.01},
			threshold: 1, class: "ok", got: f(0.305),
			status: StatusPass, message: []string{"within 0.01 of expect 0.3"},
		},
		{
			name:      "outside tolerance",
			canary:    manifest.Canary{Name: "partial", Expect: f(0.3), Tolerance: 0.01},
			threshold: 1, class: "ok", got: f(0.32),
			status: StatusFail, message: []string{"by more than tolerance 0.01"},
		},
		{
			name:      "positive within tolerance but below threshold fails on polarity",
			canary:    manifest.Canary{Name: "eq", Expect: f(1), Tolerance: 0.1},
			threshold: 1, class: "ok", got: f(0.95),
			status: StatusFail, message: []string{"polarity: a positive canary", "counts as a fail"},
		},
		{
			name:      "negative within tolerance but at threshold fails on polarity",
			canary:    manifest.Canary{Name: "near", Expect: f(0.45), Tolerance: 0.1},
			threshold: 0.5, class: "ok", got: f(0.5),
			status: StatusFail, message: []string{"polarity: a negative canary", "counts as a pass"},
		},
		{
			name:      "expect equal to threshold is positive",
			canary:    manifest.Canary{Name: "half", Expect: f(0.5)},
			threshold: 0.5, class: "ok", got: f(0.5),
			status: StatusPass, message: []string{"positive canary"},
		},
		{
			name:      "expect at threshold scoring just below fails twice",
			canary:    manifest.Canary{Name: "half", Expect: f(0.5)},
			threshold: 0.5, class: "ok", got: f(0.49),
			status: StatusFail, message: []string{"differs from expect 0.5", "polarity: a positive canary"},
		},
		{
			name:      "errored when it should score",
			canary:    manifest.Canary{Name: "eq", Expect: f(1)},
			threshold: 1, class: "grader_exception", errMsg: "KeyError: 'total_cents' (line 12)",
			status: StatusFail, message: []string{"the grader errored (grader_exception: KeyError", "expected reward 1"},
		},
		{
			name:      "timeout when it should score",
			canary:    manifest.Canary{Name: "eq", Expect: f(0)},
			threshold: 1, class: "timeout",
			status: StatusFail, message: []string{"the grader errored (timeout)"},
		},
		{
			name:      "expect_error and the grader raised",
			canary:    manifest.Canary{Name: "corrupt-fixture", ExpectError: true},
			threshold: 1, class: "grader_exception", errMsg: "KeyError: 'expected_total_cents'",
			status: StatusPass, message: []string{"raised as expected", "KeyError"},
		},
		{
			name:      "expect_error but the grader returned a score",
			canary:    manifest.Canary{Name: "corrupt-fixture", ExpectError: true},
			threshold: 1, class: "ok", got: f(1),
			status: StatusFail, message: []string{"did not raise: it returned 1"},
		},
		{
			name:      "expect_error but the grader returned an invalid value",
			canary:    manifest.Canary{Name: "corrupt-fixture", ExpectError: true},
			threshold: 1, class: "invalid_return", errMsg: "returned None",
			status: StatusFail, message: []string{"did not raise", "invalid_return: returned None"},
		},
		{
			name:      "expect_error but the grader timed out",
			canary:    manifest.Canary{Name: "corrupt-fixture", ExpectError: true},
			threshold: 1, class: "timeout",
			status: StatusFail, message: []string{"did not raise", "ended in timeout"},
		},
		{
			name:      "ok without a score fails closed",
			canary:    manifest.Canary{Name: "eq", Expect: f(1)},
			threshold: 1, class: "ok",
			status: StatusFail, message: []string{"no finite reward"},
		},
		{
			name:      "NaN fails closed",
			canary:    manifest.Canary{Name: "eq", Expect: f(1)},
			threshold: 1, class: "ok", got: f(math.NaN()),
			status: StatusFail, message: []string{"no finite reward"},
		},
		{
			name:      "neither expect nor expect_error fails closed",
			canary:    manifest.Canary{Name: "empty"},
			threshold: 1, class: "ok", got: f(1),
			status: StatusFail, message: []string{"neither expect nor expect_error"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Evaluate(tt.canary, tt.threshold, tt.class, tt.got, tt.errMsg)
			if got.Status != tt.status {
				t.Errorf("status = %q, want %q (message %q)", got.Status, tt.status, got.Message)
			}
			if got.Passed() != (tt.status == StatusPass) {
				t.Errorf("Passed() = %v with status %q", got.Passed(), got.Status)
			}
			for _, want := range tt.message {
				if !strings.Contains(got.Message, want) {
					t.Errorf("message %q does not contain %q", got.Message, want)
				}
			}
		})
	}
}
