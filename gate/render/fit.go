package render

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gradegate/gradegate/gate/results"
)

// Cuts that keep the default tables within 100 columns (a terminal of that
// width, a pull-request comment): the slice table's seven columns and the
// worst cases' six. --wide (human) and the folded block (markdown) show
// every column.
const (
	narrowWidth        = 100
	narrowNameRunes    = 20 // a slice name
	narrowFailingRunes = 22 // what is failing in a slice
	narrowCaseRunes    = 24 // a case_id
	narrowSlicesRunes  = 16 // a case's slices
	narrowWhyRunes     = 30 // why a case is not a pass
)

// failing says what keeps a row from a clean pass, in words: "1 failed, 2
// errored, 1 false pass"; "" when nothing does.
func failing(s results.SliceResult) string {
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(s.Failed, "failed")
	add(s.Errored, "errored")
	add(s.Omitted, "omitted")
	add(s.FalsePass, "false pass")
	return strings.Join(parts, ", ")
}

// humanLabel is a case's human label as a table shows it: 1 or 0, "" when
// the case has none.
func humanLabel(c results.CaseResult) string {
	if c.HumanScore == nil {
		return ""
	}
	return fmt.Sprint(*c.HumanScore)
}

// caseWhy is the narrow worst-cases table's account of a case: its class and
// message for an error, its omission reason, or its score for a fail, with
// the grader line where there is one.
func caseWhy(c results.CaseResult) string {
	var s string
	switch {
	case c.Status == results.StatusOmitted:
		s = c.Reason
	case c.Error != nil:
		s = string(c.Class) + ": " + errorText(c.Error)
	default:
		s = "score " + score(c.Score)
	}
	if l := graderLine(c.Error); l != "" {
		s = "line " + l + ": " + s
	}
	return s
}

// moreRows says that n more rows than shown exist and where they are: in the
// results file written, or, when none was, how to get one.
func moreRows(n int, resultsFile string) string {
	if resultsFile != "" {
		return fmt.Sprintf("… and %d more in %s", n, oneLine(resultsFile))
	}
	return fmt.Sprintf("… and %d more (write every row with --results FILE)", n)
}

// survivorText is one surviving mutant for a list: where, what changed, and
// the canary that would notice.
func survivorText(m results.SurvivingMutant) (head, kill string) {
	where := fmt.Sprintf("line %d", m.Line)
	if m.Part != "" {
		where = m.Part + " " + where
	}
	return fmt.Sprintf("%s  %s  %s", where, m.Operator, m.Diff), "to kill it, add " + m.Kill
}

// tableFrame is how many columns a terminal table's borders and padding take
// for n columns: "│ " before each, " │" after the last, " │ " between.
func tableFrame(n int) int { return 3*n + 1 }

// columnRunes is the width of column col: its widest cell or its header.
func columnRunes(header []string, rows [][]string, col int) int {
	w := utf8.RuneCountInString(header[col])
	for _, r := range rows {
		w = max(w, utf8.RuneCountInString(r[col]))
	}
	return w
}
