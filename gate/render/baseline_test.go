package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/results"
)

func TestBaselineLines(t *testing.T) {
	change := -0.25
	flip := func(id, base, head string, mandatory, changed bool) results.BaselineFlip {
		return results.BaselineFlip{CaseID: id, Base: base, Head: head, Mandatory: mandatory, OutputChanged: changed, Slices: []string{"s"}}
	}
	var many []results.BaselineFlip
	for i := range baselineFlipLimit + 3 {
		many = append(many, flip(fmt.Sprintf("c%02d", i), results.StatusFail, results.StatusPass, false, true))
	}
	tests := []struct {
		name  string
		b     results.Baseline
		want  []string // substrings of the lines, in order
		lines int
	}{
		{
			name: "mandatory regressions first, same output marked",
			b: results.Baseline{File: "base.json", Verdict: "pass", Cohort: 8, PassRateChange: &change, Status: "hold", Flips: []results.BaselineFlip{
				flip("a", results.StatusFail, results.StatusPass, false, true),
				flip("b", results.StatusPass, results.StatusFail, false, true),
				flip("c", results.StatusPass, results.StatusFail, true, false),
			}},
			want: []string{
				"vs baseline base.json (pass): pass rate change -25.0% on 8 cases graded in both (max drop 0.0%); 3 flips, 0 added, 0 removed: hold; 1 with the same output",
				"c: pass → fail [s] (mandatory; same output: the grader moved)",
				"b: pass → fail [s]",
				"a: fail → pass [s]",
			},
			lines: 4,
		},
		{
			name:  "no cohort",
			b:     results.Baseline{File: "b.json", Verdict: "hold", Status: "pass"},
			want:  []string{"no case graded in both runs; 0 flips"},
			lines: 1,
		},
		{
			name:  "the list is capped",
			b:     results.Baseline{File: "b.json", Status: "pass", Flips: many},
			want:  []string{"c00: fail → pass", "and 3 more flips"},
			lines: 1 + baselineFlipLimit + 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := baselineLines(&tt.b)
			if len(got) != tt.lines {
				t.Errorf("%d lines, want %d:\n%s", len(got), tt.lines, strings.Join(got, "\n"))
			}
			text := strings.Join(got, "\n")
			at := 0
			for _, w := range tt.want {
				i := strings.Index(text[at:], w)
				if i < 0 {
					t.Fatalf("lines lack %q after offset %d:\n%s", w, at, text)
				}
				at += i + len(w)
			}
		})
	}
}
