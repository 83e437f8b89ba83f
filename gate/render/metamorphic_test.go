package render

import (
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

func TestMetamorphicLines(t *testing.T) {
	tests := []struct {
		name string
		rep  results.MetamorphicReport
		want []string
	}{
		{"switched off", results.MetamorphicReport{DisabledLine: 35},
			[]string{"derived canaries: off (gate.metamorphic.enabled: false, line 35)"}},
		{"counts and a transform off", results.MetamorphicReport{Enabled: true, Bases: 8, Variants: 84, Violations: 1,
			Off: []manifest.TransformOff{{Name: "trailing_newline", Reason: "the client strips whitespace", Line: 37}}},
			[]string{"derived canaries: 84 variants of 8 bases, 1 broke its relation", "transform trailing_newline off (line 37): the client strips whitespace"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := append([]string{metamorphicLine(&tt.rep)}, offLines(&tt.rep)...)
			if len(got) != len(tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("line %d = %q, want it to start with %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}
