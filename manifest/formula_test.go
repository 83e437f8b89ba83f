package manifest

import (
	"math"
	"strings"
	"testing"
)

func TestFormula(t *testing.T) {
	names := []string{"py", "exact", "sim1"}
	vals := map[string]float64{"py": 0.8, "exact": 1, "sim1": 0.5}
	tests := []struct {
		text string
		want float64
	}{
		{"0.85 * py + 0.15 * exact", 0.85*0.8 + 0.15},
		{"(py + exact) / 2", 0.9},
		{"-py + 1", 0.2},
		{"min(py, exact, sim1)", 0.5},
		{"max(py, 0.9)", 0.9},
		{"abs(sim1 - py)", 0.3},
		{"floor(py * 10) / 10 + ceil(sim1)", 1.8},
		{"sqrt(4) * exp(0) + log(1)", 2},
		{"2 * 3 - 4 / 2", 4},
	}
	for _, tt := range tests {
		f, err := ParseFormula(tt.text, names)
		if err != nil {
			t.Errorf("%q: %v", tt.text, err)
			continue
		}
		got, err := f.Eval(vals)
		if err != nil || math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%q = %v, %v; want %v", tt.text, got, err, tt.want)
		}
	}
	bad := []struct{ text, msg string }{
		{"py +", "ends where"},
		{"unknown * 2", `"unknown" at column 1 is not a sub-grader`},
		{"pow(py, 2)", "pow at column 1 is not a function"},
		{"abs(py, exact)", "abs at column 1 takes one argument, got 2"},
		{"(py + 1", "missing )"},
		{"py ^ 2", `unexpected "^"`},
		{"py exact", `unexpected "exact"`},
	}
	for _, tt := range bad {
		_, err := ParseFormula(tt.text, names)
		if err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%q: error %v, want %q", tt.text, err, tt.msg)
		}
	}
	f, _ := ParseFormula("py / (exact - 1)", names)
	if _, err := f.Eval(vals); err == nil {
		t.Error("a division by zero evaluated")
	}
}
