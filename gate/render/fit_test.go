package render

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
)

// TestDefaultTablesFit: the default slice and worst-cases tables keep to 100
// columns, even with long names; --wide shows every column.
func TestDefaultTablesFit(t *testing.T) {
	res := holdResult()
	long := strings.Repeat("a_very_long_slice_name_", 4)
	res.Slices = append(res.Slices, results.SliceResult{Name: long, Mandatory: true, Counts: results.Counts{Intended: 9, Graded: 5, Failed: 2, Errored: 1, Omitted: 1},
		FalsePass: 1, MinPassRate: 1, Status: results.VerdictHold})
	res.Cases = append(res.Cases, results.CaseResult{CaseID: strings.Repeat("case-", 20), Slices: []string{long, long}, Status: results.StatusError,
		Class: grading.ClassGraderException, Error: &grading.CaseError{Class: grading.ClassGraderException, Message: strings.Repeat("boom ", 40), Line: 7}})
	section := func(out, title string) []string {
		_, rest, _ := strings.Cut(out, "\n"+title)
		block, _, _ := strings.Cut(rest, "\n\n")
		return strings.Split(block, "\n")
	}
	var narrow, wide bytes.Buffer
	if err := Human(&narrow, res, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Human(&wide, res, Options{Wide: true}); err != nil {
		t.Fatal(err)
	}
	for _, title := range []string{"Slices", "Worst cases"} {
		for _, line := range section(narrow.String(), title) {
			if n := utf8.RuneCountInString(line); n > 100 {
				t.Errorf("%s: line of %d columns: %s", title, n, line)
			}
		}
	}
	if !strings.Contains(narrow.String(), "2 failed, 1 errored, …") || !strings.Contains(narrow.String(), "│ failing ") {
		t.Errorf("the slice table does not say what is failing:\n%s", narrow.String())
	}
	for _, col := range []string{"│ intended │", "│ false pass/fail │", "│ grader line │", "│ label │"} {
		if !strings.Contains(wide.String(), col) {
			t.Errorf("--wide lacks the column %q", col)
		}
	}

	md := MarkdownString(res, MarkdownOptions{})
	if !strings.Contains(md, "| slice | rule | graded | pass rate | min | status | failing |") {
		t.Errorf("markdown slice table:\n%s", md)
	}
	if !strings.Contains(md, "<details><summary>Every slice column</summary>") || !strings.Contains(md, "| slice | rule | intended | graded | passed |") {
		t.Errorf("markdown does not fold every slice column")
	}
	if !strings.Contains(md, "| case | slices | status | label | why |") {
		t.Errorf("markdown worst cases lack the label")
	}
}
