package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/results"
)

// TestExclusionsAndDeterminismShown checks that every no-mutate exclusion,
// with its reason, and the determinism check reach the human and markdown
// outputs (the markdown is the step summary and the check run's summary).
func TestExclusionsAndDeterminismShown(t *testing.T) {
	score := 0.9
	res := &results.Results{
		Schema: results.ResultsSchema, Verdict: results.VerdictPass, Reasons: []results.Reason{}, Warnings: []results.Warning{},
		Overall:       results.Overall{Status: results.StatusPass},
		MutationScore: &score,
		MutationExcluded: []results.MutationExclusion{
			{Line: 30, Reason: "the lookup below raises KeyError anyway", Mutants: 1, Code: "raise KeyError(...)"},
			{Line: 52, Mutants: 2, Code: "if type(x) is not str:"},
		},
		Determinism: &results.Determinism{Seed: 42, HashSeeds: [2]uint32{7, 9}, Canaries: 11, Cases: 36, Differed: []results.Difference{}, Status: results.StatusPass},
	}
	var h bytes.Buffer
	if err := Human(&h, res, Options{}); err != nil {
		t.Fatal(err)
	}
	m := MarkdownString(res, MarkdownOptions{})
	for name, out := range map[string]string{"human": h.String(), "markdown": m} {
		for _, want := range []string{
			"line 30 (1 mutant): the lookup below raises KeyError anyway",
			"line 52 (2 mutants): no reason given: counted as survived",
			"11 canaries and 36 cases graded twice (seed 42, PYTHONHASHSEED 7 then 9): nothing differed",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%s output lacks %q:\n%s", name, want, out)
			}
		}
	}
}
