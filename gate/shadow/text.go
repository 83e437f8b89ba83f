package shadow

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gradegate/gradegate/gate/render"
)

// maxMarkdownRows bounds the changed-case table in the markdown view, which
// ends up in step summaries; the JSON always lists every case.
const maxMarkdownRows = 100

// WriteText writes the report for a terminal: the pass rates under both
// sources, every changed canary and case, and the per-slice table.
func (r *Report) WriteText(w io.Writer) error {
	var b bytes.Buffer
	b.WriteString("gradegate shadow\n")
	fmt.Fprintf(&b, "  base  sha256:%s\n", short(r.Base.SHA256))
	fmt.Fprintf(&b, "  head  sha256:%s\n", short(r.Head.SHA256))
	if r.Base.SHA256 == r.Head.SHA256 {
		b.WriteString("  note: base and head are the same bytes; a change means the grader is not deterministic\n")
	}
	o := r.Overall
	fmt.Fprintf(&b, "\n%d of %d graded cases changed; pass rate %s → %s\n", o.Changed, o.Cases, pct(o.BasePassRate), pct(o.HeadPassRate))

	changedCanaries := r.changedCanaries()
	fmt.Fprintf(&b, "\nCanaries changed (%d of %d)\n", len(changedCanaries), len(r.Canaries))
	if len(changedCanaries) == 0 {
		b.WriteString("  none\n")
	} else {
		rows := make([][]string, len(changedCanaries))
		for i, c := range changedCanaries {
			rows[i] = []string{c.Name, canaryText(c.Base), canaryText(c.Head), c.Head.Message}
		}
		if err := table(&b, []string{"canary", "base", "head", "head verdict"}, rows); err != nil {
			return err
		}
	}

	fmt.Fprintf(&b, "\nCases changed (%d)\n", len(r.Changed))
	if len(r.Changed) == 0 {
		b.WriteString("  none\n")
	} else {
		rows := make([][]string, len(r.Changed))
		for i, c := range r.Changed {
			rows[i] = []string{c.CaseID, strings.Join(c.Slices, ", "), gradeText(c.Base), gradeText(c.Head)}
		}
		if err := table(&b, []string{"case", "slices", "base", "head"}, rows); err != nil {
			return err
		}
	}

	if len(r.BySlice) > 0 {
		b.WriteString("\nBy slice\n")
		rows := make([][]string, len(r.BySlice))
		for i, s := range r.BySlice {
			rows[i] = []string{s.Slice, strconv.Itoa(s.Cases), strconv.Itoa(s.Changed), pct(s.BasePassRate), pct(s.HeadPassRate)}
		}
		if err := table(&b, []string{"slice", "cases", "changed", "base pass rate", "head pass rate"}, rows); err != nil {
			return err
		}
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("shadow: writing text: %w", err)
	}
	return nil
}

// WriteMarkdown writes the report as GitHub-flavoured markdown, for
// --format markdown and step summaries.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b bytes.Buffer
	b.WriteString("### gradegate shadow\n\n")
	fmt.Fprintf(&b, "Base `sha256:%s` → head `sha256:%s`.\n\n", short(r.Base.SHA256), short(r.Head.SHA256))
	if r.Base.SHA256 == r.Head.SHA256 {
		b.WriteString("> Base and head are the same bytes; a change means the grader is not deterministic.\n\n")
	}
	o := r.Overall
	fmt.Fprintf(&b, "**%d of %d graded cases changed**; pass rate %s → %s.\n", o.Changed, o.Cases, pct(o.BasePassRate), pct(o.HeadPassRate))

	changedCanaries := r.changedCanaries()
	fmt.Fprintf(&b, "\n#### Canaries changed (%d of %d)\n\n", len(changedCanaries), len(r.Canaries))
	if len(changedCanaries) == 0 {
		b.WriteString("None.\n")
	} else {
		b.WriteString("| canary | base | head | head verdict |\n|---|---|---|---|\n")
		for _, c := range changedCanaries {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", md(c.Name), md(canaryText(c.Base)), md(canaryText(c.Head)), md(c.Head.Message))
		}
	}

	fmt.Fprintf(&b, "\n#### Cases changed (%d)\n\n", len(r.Changed))
	if len(r.Changed) == 0 {
		b.WriteString("None.\n")
	} else {
		b.WriteString("| case | slices | base | head |\n|---|---|---|---|\n")
		for i, c := range r.Changed {
			if i == maxMarkdownRows {
				fmt.Fprintf(&b, "\n…and %d more; the JSON lists every case.\n", len(r.Changed)-i)
				break
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", md(c.CaseID), md(strings.Join(c.Slices, ", ")), md(gradeText(c.Base)), md(gradeText(c.Head)))
		}
	}

	if len(r.BySlice) > 0 {
		b.WriteString("\n#### By slice\n\n| slice | cases | changed | base pass rate | head pass rate |\n|---|---|---|---|---|\n")
		for _, s := range r.BySlice {
			fmt.Fprintf(&b, "| %s | %d | %d | %s | %s |\n", md(s.Slice), s.Cases, s.Changed, pct(s.BasePassRate), pct(s.HeadPassRate))
		}
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("shadow: writing markdown: %w", err)
	}
	return nil
}

func (r *Report) changedCanaries() []CanaryChange {
	var out []CanaryChange
	for _, c := range r.Canaries {
		if c.Changed || c.Base.Status != c.Head.Status {
			out = append(out, c)
		}
	}
	return out
}

// gradeText reads "pass 1", "fail 0" or "error grader_exception".
func gradeText(g Grade) string {
	if g.Score == nil {
		return g.Status + " " + string(g.Class)
	}
	return g.Status + " " + num(*g.Score)
}

// canaryText reads "pass (1)" or "fail (grader_exception)": the canary's
// verdict and what the grader returned.
func canaryText(c Canary) string {
	if c.Score == nil {
		return fmt.Sprintf("%s (%s)", c.Status, c.Class)
	}
	return fmt.Sprintf("%s (%s)", c.Status, num(*c.Score))
}

func table(b *bytes.Buffer, header []string, rows [][]string) error {
	if err := render.Table(b, header, rows); err != nil {
		return fmt.Errorf("shadow: %w", err)
	}
	return nil
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func pct(f *float64) string {
	if f == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", *f*100)
}

// short cuts a hex digest for display; the JSON keeps it whole.
func short(d string) string {
	if len(d) > 12 {
		return d[:12]
	}
	return d
}

// md escapes text for a markdown table cell.
func md(s string) string { return render.MarkdownCell(s) }
