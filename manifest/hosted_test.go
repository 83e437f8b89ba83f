package manifest

import (
	"strings"
	"testing"
)

// TestParseScale checks the keys of a grader written for the hosted grader:
// any finite pass_threshold, an optional range, and on_exception.
func TestParseScale(t *testing.T) {
	fivePoint := strings.NewReplacer(
		"type: python", "type: python\n  pass_threshold: 5\n  range: [0, 5]\n  on_exception: zero",
		"expect: 1.0", "expect: 5",
	).Replace(minimal)
	tests := []struct {
		name      string
		yaml      string
		threshold float64
		rng       *[2]float64
		zero      bool
	}{
		{"defaults", minimal, 1, nil, false},
		{"five point scale", fivePoint, 5, &[2]float64{0, 5}, true},
		{"negative threshold without range", strings.Replace(minimal, "type: python", "type: python\n  pass_threshold: -0.5\n  on_exception: hold", 1), -0.5, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.yaml), "gradegate.yaml")
			if tt.name == "negative threshold without range" {
				// Both canaries (1 and 0) are positive at -0.5.
				if err == nil || !strings.Contains(err.Error(), "missing a negative canary") {
					t.Fatalf("Parse: %v, want only the missing negative canary", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			g := m.Grader
			if g.PassThreshold != tt.threshold || g.ZeroOnException() != tt.zero {
				t.Errorf("threshold %g zero %v, want %g %v", g.PassThreshold, g.ZeroOnException(), tt.threshold, tt.zero)
			}
			if (g.Range == nil) != (tt.rng == nil) || (g.Range != nil && *g.Range != *tt.rng) {
				t.Errorf("range %v, want %v", g.Range, tt.rng)
			}
		})
	}
}

// TestOnExceptionIsPythonOnly checks a model grader refuses on_exception.
func TestOnExceptionIsPythonOnly(t *testing.T) {
	for _, k := range pythonKeys() {
		if k == "on_exception" {
			return
		}
	}
	t.Fatal("on_exception is not refused for a model grader")
}
