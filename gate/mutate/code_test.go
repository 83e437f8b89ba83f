package mutate

import (
	"strings"
	"testing"
)

// TestCodeSpanSafe: a grader line in a code span of the markdown report
// keeps no control, bidi or zero-width character (Trojan Source: the line
// a reviewer reads would not be the line that runs), no backtick that would
// end the span, no pipe that would end the cell, no workflow command.
func TestCodeSpanSafe(t *testing.T) {
	line := "if answer == \"x\u202e`|@octocat ::add-mask::zz ##[group]G \x1b[31mRED\u200b\":  # \u2066hidden\x1b[2J"
	got := code(line)
	for _, bad := range []string{"\u202e", "\u2066", "\u200b", "\x1b", "`", "::", "##["} {
		if strings.Contains(got, bad) {
			t.Errorf("code(%q) = %q, holds %q", line, got, bad)
		}
	}
	if strings.Contains(strings.ReplaceAll(got, `\|`, ""), "|") {
		t.Errorf("code(%q) = %q, holds a pipe that is not escaped", line, got)
	}
	if !strings.Contains(got, `\u202e`) {
		t.Errorf("code(%q) = %q, want the bidi control written as an escape a reviewer sees", line, got)
	}
}
