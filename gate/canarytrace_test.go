package gate

import (
	"testing"

	"github.com/gradegate/gradegate/manifest"
)

func TestReturnedAt(t *testing.T) {
	broad := manifest.Finding{Code: "broad_except_constant", File: "evals/x/grader.py", Line: 5,
		Message: "`except Exception:` returns 1.0 (line 6): every error ..."}
	unused := manifest.Finding{Code: "sample_unused", File: "evals/x/grader.py", Line: 1, Message: "grade never reads sample"}
	other := manifest.Finding{Code: "near_duplicate", File: "evals/x/cases.jsonl", Line: 6, Message: "…"}
	tests := []struct {
		name     string
		line     int
		findings []manifest.Finding
		want     string
	}{
		{"a handler's return", 6, []manifest.Finding{broad, unused, other}, "grader.py line 6 returned it (lint: broad_except_constant)"},
		{"a finding on the line itself", 1, []manifest.Finding{broad, unused}, "grader.py line 1 returned it (lint: sample_unused)"},
		{"no finding there; another file's line does not count", 6, []manifest.Finding{other}, "grader.py line 6 returned it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := returnedAt("grader.py", tt.line, tt.findings); got != tt.want {
				t.Errorf("returnedAt = %q, want %q", got, tt.want)
			}
		})
	}
}
