package render

import (
	"testing"

	"github.com/gradegate/gradegate/gate/results"
)

func TestVersionLineNamesOnce(t *testing.T) {
	tests := []struct{ name, want string }{
		{"grader", "grader (sha256:0123456789ab) · gradegate dev"},
		{"order_summary", "grader order_summary (sha256:0123456789ab) · gradegate dev"},
	}
	for _, tt := range tests {
		res := &results.Results{Versions: results.Versions{GraderName: tt.name, Gradegate: "dev"}}
		res.Digests.Grader = "sha256:0123456789abcdef"
		if got := versionLine(res); got != tt.want {
			t.Errorf("versionLine(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
