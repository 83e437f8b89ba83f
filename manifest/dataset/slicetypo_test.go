package dataset

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/manifest"
)

func TestSliceTypos(t *testing.T) {
	tests := []struct {
		name   string
		slices []string // one row each, in order
		rules  []string
		want   []string // "line:message prefix"
	}{
		{name: "a one-row typo of a larger slice",
			slices: []string{"eligible", "eligible", "eligible", "elegible"},
			want:   []string{`4:slice "elegible" has 1 row; did you mean "eligible" (3 rows)?`}},
		{name: "a typo of a slice only the manifest names",
			slices: []string{"refunds", "captials"}, rules: []string{"capitals"},
			want: []string{`2:slice "captials" has 1 row; did you mean "capitals" (gate.slices names it)?`}},
		{name: "a slice the manifest names is meant", slices: []string{"eligible", "eligible", "eligible", "elegible"}, rules: []string{"elegible"}},
		{name: "large slices are not typos", slices: []string{"tone-a", "tone-a", "tone-a", "tone-b", "tone-b", "tone-b"}},
		{name: "short names differ on purpose", slices: []string{"en", "en", "en", "es"}},
		{name: "equally near names are ambiguous", slices: []string{"cat-a", "cat-a", "cat-a", "cat-b", "cat-b", "cat-b", "cat-c"}},
		{name: "far names are not typos", slices: []string{"refunds", "refunds", "refunds", "shipping"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var st sliceTally
			for i, s := range tt.slices {
				st.add(s, i+1, "c")
			}
			var rules []manifest.SliceRule
			for _, r := range tt.rules {
				rules = append(rules, manifest.SliceRule{Name: r})
			}
			got := []string{}
			for _, f := range st.findings("cases.jsonl", rules) {
				if f.Code != CodeSliceTypo || f.Severity != manifest.SeverityWarn {
					t.Errorf("finding %+v", f)
				}
				got = append(got, strconv.Itoa(f.Line)+":"+f.Message)
			}
			want := tt.want
			if len(got) != len(want) {
				t.Fatalf("findings = %q, want %q", got, want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], want[i]) {
					t.Errorf("finding %d = %q, want it to start %q", i, got[i], want[i])
				}
			}
		})
	}
}
