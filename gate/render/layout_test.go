package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/results"
)

// reportOf renders res in the named format.
func reportOf(t *testing.T, format string, res *results.Results) string {
	t.Helper()
	var buf bytes.Buffer
	var err error
	if format == "human" {
		err = Human(&buf, res, Options{})
	} else {
		err = Markdown(&buf, res, MarkdownOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// inOrder reports the first of want that is missing from out, or out of
// order; "" when all are there in order.
func inOrder(out string, want []string) string {
	rest := out
	for _, s := range want {
		i := strings.Index(rest, s)
		if i < 0 {
			return s
		}
		rest = rest[i+len(s):]
	}
	return ""
}

func TestReportLayout(t *testing.T) {
	// Many warnings of one code must not push the evidence down.
	noisy := func() *results.Results {
		res := holdResult()
		for i := range 40 {
			res.Warnings = append(res.Warnings, results.Warning{Code: "near_duplicate", Message: fmt.Sprintf("case dup-%02d is a near duplicate", i)})
		}
		return res
	}
	family := func() *results.Results {
		res := passResult()
		res.Overall.Aggregation, res.Overall.Families = results.AggregationFamily, 12
		return res
	}
	tests := []struct {
		name   string
		format string
		res    func() *results.Results
		order  []string // must appear in this order
		absent []string
	}{
		{
			name: "markdown: evidence before warnings, warnings grouped and folded", format: "markdown", res: noisy,
			order: []string{"### Reasons (6)", "### Counts", "### Slices", "### Canaries (1 of 4 failed)", "boolean-total-one-cent",
				"<details><summary>3 canaries passed</summary>", "### Worst cases", "### Findings",
				"<details><summary>Warnings (41): slice_below_threshold ×1, near_duplicate ×40</summary>",
				"| `near_duplicate` | 40 | case dup-00 is a near duplicate<br>case dup-01 is a near duplicate<br>case dup-02 is a near duplicate<br>… and 37 more in the results JSON |",
				"</details>"},
			absent: []string{"dup-03", "### Warnings"},
		},
		{
			name: "human: evidence before warnings, warnings grouped", format: "human", res: noisy,
			order: []string{"Reasons (6)", "Counts", "Slices", "Canaries (1 of 4 failed)", "boolean-total-one-cent",
				"passed (3): equivalent-serialization, wrong-currency, corrupt-fixture", "Worst cases", "Findings",
				"Warnings (41)", "slice_below_threshold  tone: pass rate 75.0% is below 80.0% (warn-only)\n",
				"near_duplicate ×40     case dup-00 is a near duplicate\n", "case dup-02 is a near duplicate",
				"… and 37 more in the results JSON"},
			absent: []string{"dup-03"},
		},
		{
			name: "markdown: passing canaries folded", format: "markdown", res: passResult,
			order: []string{"### Counts", "### Slices", "### Canaries", "<details><summary>All 4 canaries passed</summary>", "</details>"},
		},
		{
			name: "human: passing canaries by name", format: "human", res: passResult,
			order:  []string{"Counts", "Slices", "Canaries: all 4 behaved as expected", "equivalent-serialization, boolean-total-one-cent"},
			absent: []string{"│ canary"},
		},
		{
			name: "markdown: per family", format: "markdown", res: family,
			order: []string{"| pass rate per family | min |", "Pass rates are per family: each family counts once (the overall rate is the mean over 12 families",
				"| slice | rule | intended | graded | passed | failed | errored | omitted | pass rate per family |"},
		},
		{
			name: "human: per family", format: "human", res: family,
			order: []string{"pass rate per family", "the overall rate is the mean over 12 families", "Slices", "pass rate per family"},
		},
		{
			name: "row aggregation says nothing of families", format: "markdown", res: passResult,
			order:  []string{"| pass rate | min |"},
			absent: []string{"per family"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := reportOf(t, tt.format, tt.res())
			if miss := inOrder(out, tt.order); miss != "" {
				t.Errorf("%q is missing or out of order in:\n%s", miss, out)
			}
			for _, s := range tt.absent {
				if strings.Contains(out, s) {
					t.Errorf("output has %q", s)
				}
			}
		})
	}
}

func TestMarkdownMutationFolded(t *testing.T) {
	res := passResult()
	res.MutationScore = f64(1)
	res.MutationExcluded = []results.MutationExclusion{{Line: 30, Mutants: 2, Reason: "the lookup raises anyway"}}
	out := reportOf(t, "markdown", res)
	want := []string{"Mutation score: 100.0% (1 line excluded by no-mutate, listed below)", "### Slices",
		"<details><summary>1 line excluded from mutation testing (no-mutate)</summary>", "- line 30 (2 mutants): the lookup raises anyway"}
	if miss := inOrder(out, want); miss != "" {
		t.Errorf("%q is missing or out of order in:\n%s", miss, out)
	}
}
