package render

import (
	"fmt"
	"strings"

	"github.com/gradegate/gradegate/gate/results"
)

// baselineFlipLimit bounds how many flips a report lists; the results JSON
// keeps every one.
const baselineFlipLimit = 20

// baselineLines says what run --baseline found, as plain lines: a summary,
// then one line per flip (each shown indented or as a list item),
// mandatory and pass-to-fail flips first. A flip
// whose output did not change is marked: the grader moved, not the
// candidate. Untrusted values (the file name, case ids, slices) go through
// Text.
func baselineLines(b *results.Baseline) []string {
	change := "no case graded in both runs"
	if b.PassRateChange != nil {
		change = fmt.Sprintf("pass rate change %+.1f%% on %d cases graded in both (max drop %s)",
			*b.PassRateChange*100, b.Cohort, pctDigits(b.MaxDrop, 1))
	}
	lines := []string{fmt.Sprintf("vs baseline %s (%s): %s; %s, %d added, %d removed: %s",
		Text(b.File), Text(b.Verdict), change, plural(len(b.Flips), "flip", "flips"), b.Added, b.Removed, b.Status)}
	if n := b.SameOutputFlips(); n > 0 {
		lines[0] += fmt.Sprintf("; %d with the same output (the grader moved, not the candidate)", n)
	}
	flips := make([]results.BaselineFlip, len(b.Flips))
	copy(flips, b.Flips)
	rank := func(f results.BaselineFlip) int {
		switch {
		case f.Mandatory && f.Regressed():
			return 0
		case f.Regressed():
			return 1
		}
		return 2
	}
	// Stable: the flips arrive sorted by case_id.
	for r := 0; r <= 2; r++ {
		for _, f := range flips {
			if rank(f) != r {
				continue
			}
			if len(lines) > baselineFlipLimit {
				break
			}
			lines = append(lines, flipLine(f))
		}
	}
	if n := len(b.Flips) - (len(lines) - 1); n > 0 {
		lines = append(lines, fmt.Sprintf("and %d more flips (the results JSON lists them all)", n))
	}
	return lines
}

func flipLine(f results.BaselineFlip) string {
	var notes []string
	if f.Mandatory {
		notes = append(notes, "mandatory")
	}
	if !f.OutputChanged {
		notes = append(notes, "same output: the grader moved")
	}
	s := fmt.Sprintf("%s: %s → %s", Text(f.CaseID), f.Base, f.Head)
	if len(f.Slices) > 0 {
		s += " [" + Text(strings.Join(f.Slices, ", ")) + "]"
	}
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, "; ") + ")"
	}
	return s
}

// baselineHuman writes the baseline block of the terminal report.
func baselineHuman(ew *errWriter, b *results.Baseline) {
	if b == nil {
		return
	}
	for i, l := range baselineLines(b) {
		if i > 0 {
			ew.printf("  ")
		}
		ew.printf("%s\n", oneLine(l))
	}
}

// baselineMarkdown is the baseline block of the markdown report.
func baselineMarkdown(b *results.Baseline) string {
	if b == nil {
		return ""
	}
	lines := baselineLines(b)
	var s strings.Builder
	s.WriteString("\n" + md(lines[0]) + "\n")
	if len(lines) > 1 {
		s.WriteString("\n")
		for _, l := range lines[1:] {
			s.WriteString("- " + md(l) + "\n")
		}
	}
	return s.String()
}
