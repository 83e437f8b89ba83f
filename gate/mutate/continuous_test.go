package mutate

import (
	"strings"
	"testing"
)

// TestGenerateContinuous checks the operators of graders whose score is a
// computation: each site yields exactly the mutant the table names, and
// every mutant compiles.
func TestGenerateContinuous(t *testing.T) {
	src := "import math\n" +
		"from rapidfuzz import fuzz\n\n" +
		"def grade(sample, item):\n" +
		"    score = fuzz.token_set_ratio(sample['output_text'], item['reference']) / 100\n" +
		"    bonus = max(0, min(1, len(sample['output_text']) / 200))\n" +
		"    total = 0.85 * score + 0.15 * bonus\n" +
		"    steps = math.floor(total * 4) - 2\n" +
		"    return round(total, 3) if steps > 3 else total ** 2\n"
	g := generate(t, src, 0)
	want := []struct{ operator, after string }{
		{"arithmetic-swap", "score = fuzz.token_set_ratio(sample['output_text'], item['reference']) * 100"},
		{"divisor-change", "score = fuzz.token_set_ratio(sample['output_text'], item['reference']) / 1000"},
		{"min-max-swap", "bonus = min(0, min(1, len(sample['output_text']) / 200))"},
		{"min-max-swap", "bonus = max(0, max(1, len(sample['output_text']) / 200))"},
		{"arithmetic-swap", "total = 0.85 * score - 0.15 * bonus"},
		{"arithmetic-swap", "total = 0.85 / score + 0.15 * bonus"},
		{"weight-change", "total = 0.425 * score + 0.15 * bonus"},
		{"weight-change", "total = 0.85 * score + 0.075 * bonus"},
		{"floor-ceil-swap", "steps = math.ceil(total * 4) - 2"},
		{"weight-change", "steps = math.floor(total * 8) - 2"},
		{"arithmetic-swap", "steps = math.floor(total * 4) + 2"},
		{"number-change", "steps = math.floor(total * 4) - 3"},
		{"drop-rounding", "return total if steps > 3 else total ** 2"},
		{"number-change", "return round(total, 4) if steps > 3 else total ** 2"},
		{"number-change", "return round(total, 3) if steps > 4 else total ** 2"},
		{"arithmetic-swap", "return round(total, 3) if steps > 3 else total * 2"},
	}
	var seen []string
	for _, m := range g.Mutants {
		seen = append(seen, m.Operator+": "+m.Mutated)
	}
	for _, w := range want {
		found := false
		for _, m := range g.Mutants {
			found = found || (m.Operator == w.operator && m.Mutated == w.after)
		}
		if !found {
			t.Errorf("no %s mutant %q; got:\n%s", w.operator, w.after, strings.Join(seen, "\n"))
		}
	}
	compileAll(t, g.Mutants)
}
