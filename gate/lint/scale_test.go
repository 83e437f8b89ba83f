package lint

import (
	"testing"

	"github.com/gradegate/gradegate/manifest"
)

func TestScale(t *testing.T) {
	five, one, half := 5.0, 1.0, 0.5
	canaries := []manifest.Canary{{Name: "top", Expect: &five, Line: 9}, {Name: "low", Expect: &half, Line: 10}}
	unit := []manifest.Canary{{Name: "top", Expect: &one}, {Name: "low", Expect: &half}}
	tests := []struct {
		name string
		g    manifest.Grader
		cs   []manifest.Canary
		want int
	}{
		{"unit scale", manifest.Grader{Type: "python", PassThreshold: 1}, unit, 0},
		{"five point without range", manifest.Grader{Type: "python", PassThreshold: 5}, canaries, 2},
		{"canary outside, threshold inside", manifest.Grader{Type: "python", PassThreshold: 1}, canaries, 1},
		{"range set", manifest.Grader{Type: "python", PassThreshold: 5, Range: &[2]float64{0, 5}}, canaries, 0},
	}
	for _, tt := range tests {
		got := Scale(&manifest.Manifest{File: "gradegate.yaml", Grader: tt.g, Canaries: tt.cs})
		if len(got) != tt.want {
			t.Errorf("%s: %d findings %+v, want %d", tt.name, len(got), got, tt.want)
		}
		for _, f := range got {
			if f.Code != CodeScaleUnset || f.Severity != manifest.SeverityWarn {
				t.Errorf("%s: %+v, want a %s warning", tt.name, f, CodeScaleUnset)
			}
		}
	}
}
