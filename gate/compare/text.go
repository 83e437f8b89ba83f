package compare

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/gradegate/gradegate/gate/render"
	"github.com/gradegate/gradegate/gate/results"
)

// maxMarkdownRows bounds each list in the markdown view, which ends up in
// step summaries and PR comments; the JSON always lists every case.
const maxMarkdownRows = 100

// WriteText writes the report for a terminal.
func (r *Report) WriteText(w io.Writer) error {
	var b bytes.Buffer
	b.WriteString("gradegate compare\n")
	// Everything from the results files goes through the printer: case
	// ids, statuses and names may carry escapes, bidi controls or workflow
	// commands.
	fmt.Fprintf(&b, "  base  %s\n", runLine(r.Base))
	fmt.Fprintf(&b, "  head  %s\n", runLine(r.Head))
	for _, n := range r.notes() {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}

	b.WriteString("\n")
	p := r.PassRate
	fmt.Fprintf(&b, "pass rate  %s → %s  (%s)\n", pct(p.Base), pct(p.Head), pts(change(p)))
	fmt.Fprintf(&b, "  matched effect      %9s  on %s graded in both runs\n", pts(p.MatchedEffect), cases(r.Cohort))
	fmt.Fprintf(&b, "  composition effect  %9s  from cases added, removed, or graded in only one run\n", pts(p.CompositionEffect))
	if r.Cohort > 0 {
		fmt.Fprintf(&b, "  McNemar test        %9s  %s\n", "p = "+results.PValueText(r.Test.PValue), r.testText())
	}
	fmt.Fprintf(&b, "matched: %s with the same output and label in both runs\n", cases(r.Matched))

	fmt.Fprintf(&b, "\nFlipped (%d)\n", len(r.Flipped))
	if len(r.Flipped) == 0 {
		b.WriteString("  none\n")
	} else {
		rows := make([][]string, len(r.Flipped))
		for i, f := range r.Flipped {
			rows[i] = []string{render.Text(f.CaseID), render.Text(f.Base), render.Text(f.Head), output(f.OutputChanged)}
		}
		if err := render.Table(&b, []string{"case", "base", "head", "output"}, rows); err != nil {
			return fmt.Errorf("compare: %w", err)
		}
		if r.sameOutputFlips() > 0 {
			b.WriteString("A flip with the same output is the grader or the rules moving, not the candidate.\n")
		}
	}
	for _, l := range r.lists() {
		fmt.Fprintf(&b, "\n%s (%d)\n", l.title, len(l.ids))
		if len(l.ids) == 0 {
			b.WriteString("  none\n")
		}
		for _, id := range l.ids {
			fmt.Fprintf(&b, "  %s\n", render.Text(id))
		}
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("compare: writing text: %w", err)
	}
	return nil
}

// WriteMarkdown writes the report as GitHub-flavoured markdown, for
// --format markdown and step summaries. Each list shows at most
// maxMarkdownRows rows and says how many it left out.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b bytes.Buffer
	b.WriteString("### gradegate compare\n\n")
	b.WriteString("| | base | head |\n|---|---|---|\n")
	row := func(name, base, head string) {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", name, md(base), md(head))
	}
	row("run", r.Base.Name, r.Head.Name)
	row("verdict", r.Base.Verdict, r.Head.Verdict)
	row("intended", itoa(r.Base.Counts.Intended), itoa(r.Head.Counts.Intended))
	row("graded", itoa(r.Base.Counts.Graded), itoa(r.Head.Counts.Graded))
	row("passed", itoa(r.Base.Counts.Passed), itoa(r.Head.Counts.Passed))
	row("errored", itoa(r.Base.Counts.Errored), itoa(r.Head.Counts.Errored))
	row("omitted", itoa(r.Base.Counts.Omitted), itoa(r.Head.Counts.Omitted))
	row("pass rate", pct(r.PassRate.Base), pct(r.PassRate.Head))
	b.WriteString("\n")
	for _, n := range r.notes() {
		fmt.Fprintf(&b, "> %s\n\n", md(n))
	}

	p := r.PassRate
	fmt.Fprintf(&b, "**Pass rate change %s** = matched effect **%s** (%s graded in both runs) + composition effect **%s** (cases added, removed, or graded in only one run).\n\n",
		pts(change(p)), pts(p.MatchedEffect), cases(r.Cohort), pts(p.CompositionEffect))
	if r.Cohort > 0 {
		fmt.Fprintf(&b, "Exact McNemar test on the matched cases: p = %s; %s.\n\n", results.PValueText(r.Test.PValue), r.testText())
	}
	fmt.Fprintf(&b, "Matched: %s with the same output and label in both runs.\n", cases(r.Matched))

	fmt.Fprintf(&b, "\n#### Flipped (%d)\n\n", len(r.Flipped))
	if len(r.Flipped) == 0 {
		b.WriteString("None.\n")
	} else {
		b.WriteString("| case | base | head | output |\n|---|---|---|---|\n")
		for i, f := range r.Flipped {
			if i == maxMarkdownRows {
				fmt.Fprintf(&b, "\n…and %d more; the JSON lists every case.\n", len(r.Flipped)-i)
				break
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", md(f.CaseID), f.Base, f.Head, output(f.OutputChanged))
		}
		if r.sameOutputFlips() > 0 {
			b.WriteString("\nA flip with the same output is the grader or the rules moving, not the candidate.\n")
		}
	}
	for _, l := range r.lists() {
		fmt.Fprintf(&b, "\n#### %s (%d)\n\n", l.title, len(l.ids))
		if len(l.ids) == 0 {
			b.WriteString("None.\n")
			continue
		}
		shown := l.ids
		if len(shown) > maxMarkdownRows {
			shown = shown[:maxMarkdownRows]
		}
		for _, id := range shown {
			fmt.Fprintf(&b, "- %s\n", md(id))
		}
		if n := len(l.ids) - len(shown); n > 0 {
			fmt.Fprintf(&b, "\n…and %d more; the JSON lists every case.\n", n)
		}
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("compare: writing markdown: %w", err)
	}
	return nil
}

type list struct {
	title string
	ids   []string
}

func (r *Report) lists() []list {
	return []list{
		{"Added", r.Added},
		{"Removed", r.Removed},
		{"Newly unevaluable", r.NewlyUnevaluable},
	}
}

func (r *Report) sameOutputFlips() int {
	n := 0
	for _, f := range r.Flipped {
		if !f.OutputChanged {
			n++
		}
	}
	return n
}

// notes says what about the two runs changes how to read the comparison.
func (r *Report) notes() []string {
	var out []string
	for _, side := range []struct {
		name string
		run  Run
	}{{"base", r.Base}, {"head", r.Head}} {
		if s := side.run.Shard; s.Count > 1 {
			out = append(out, fmt.Sprintf("%s is shard %d/%d: the other shards' cases show as added or removed; compare merged results instead", side.name, s.Index, s.Count))
		}
	}
	for _, c := range r.VersionsChanged {
		b, h := c.Base, c.Head
		if c.Name == "grader" || c.Name == "dataset" || c.Name == "rubric" {
			b, h = short(b), short(h)
		}
		what := fmt.Sprintf("the %s changed (%s → %s)", strings.ReplaceAll(c.Name, "_", " "), render.Text(b), render.Text(h))
		if c.IsGrader() {
			what += ": a flip may be the grader's, not the candidate's"
			if r.Labels > 0 {
				what += fmt.Sprintf(" (%d labeled cases graded in both, %d with another label)", r.Labels, r.LabelsChanged)
			}
		}
		out = append(out, what)
	}
	return out
}

func runLine(run Run) string {
	c := run.Counts
	return fmt.Sprintf("%s  %s  %d passed / %d graded, %d failed, %d errored, %d omitted, %d intended",
		render.Text(orDash(run.Name)), render.Text(orDash(run.Verdict)), c.Passed, c.Graded, c.Failed, c.Errored, c.Omitted, c.Intended)
}

// change is the whole pass-rate difference, head − base.
// testText is the flips each way and the matched effect's interval.
func (r *Report) testText() string {
	t := r.Test
	return fmt.Sprintf("%d pass→fail, %d fail→pass; matched effect %.0f%% interval %s to %s",
		t.PassToFail, t.FailToPass, t.Level*100, pts(&t.CI.Lo), pts(&t.CI.Hi))
}

func change(p PassRate) *float64 {
	if p.Base == nil || p.Head == nil {
		return nil
	}
	return round4(ptr(*p.Head - *p.Base))
}

func ptr(f float64) *float64 { return &f }

func pct(f *float64) string {
	if f == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", *f*100)
}

// pts writes a rate difference in percentage points.
func pts(f *float64) string {
	if f == nil {
		return "n/a"
	}
	v := *f * 100
	if v > -0.05 && v < 0.05 {
		return "±0.0 pts"
	}
	return fmt.Sprintf("%+.1f pts", v)
}

func cases(n int) string {
	if n == 1 {
		return "1 case"
	}
	return fmt.Sprintf("%d cases", n)
}

func output(changed bool) string {
	if changed {
		return "changed"
	}
	return "same"
}

func itoa(n int) string { return fmt.Sprint(n) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// short abbreviates a "sha256:<hex>" digest for display.
func short(d string) string {
	if d == "" {
		return "none"
	}
	hex := strings.TrimPrefix(d, "sha256:")
	if len(hex) > 12 {
		hex = hex[:12]
	}
	return hex
}

// md escapes text for a markdown table cell or list item.
func md(s string) string { return render.MarkdownCell(s) }
