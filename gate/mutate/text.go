package mutate

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/gradegate/gradegate/gate/render"
)

// maxKillers is how many killers a killed row names before "+N more"; the
// JSON always lists every one.
const maxKillers = 3

// maxMarkdownRows bounds the killed table in the markdown view, which ends up
// in step summaries; survivors are always listed in full.
const maxMarkdownRows = 100

// WriteText writes the report for a terminal: the score, then every
// survivor (what the suite cannot see), then the killed mutants.
func (r *Report) WriteText(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "gradegate mutate %s\n", render.Text(r.Source))
	fmt.Fprintf(&b, "mutation score %s  (%s)\n", score(r.Score), r.counts())
	for _, n := range r.notes() {
		fmt.Fprintf(&b, "  note: %s\n", render.Clip(n, render.LineRunes))
	}
	survivors, killed := r.split()

	fmt.Fprintf(&b, "\n%s (%d)\n", r.notKilledTitle(), len(survivors))
	if len(survivors) == 0 {
		b.WriteString("  none\n")
	} else {
		rows := make([][]string, len(survivors))
		for i, m := range survivors {
			before, after := m.lines()
			rows[i] = r.withPart(m.Part, m.ID, fmt.Sprint(m.Line), m.operatorText(), "- "+before, "+ "+after)
		}
		if err := table(&b, r.withPart("part", "id", "line", "operator", "before", "after"), rows); err != nil {
			return err
		}
	}
	fmt.Fprintf(&b, "\nExcluded by no-mutate (%d lines)\n", len(r.Excluded))
	if len(r.Excluded) == 0 {
		b.WriteString("  none\n")
	} else {
		rows := make([][]string, len(r.Excluded))
		for i, e := range r.Excluded {
			rows[i] = r.withPart(e.Part, fmt.Sprint(e.Line), fmt.Sprint(e.Mutants), exclusionReason(e), e.Code)
		}
		if err := table(&b, r.withPart("part", "line", "mutants", "reason", "code"), rows); err != nil {
			return err
		}
	}
	fmt.Fprintf(&b, "\nKilled (%d)\n", len(killed))
	if len(killed) == 0 {
		b.WriteString("  none\n")
	} else {
		rows := make([][]string, len(killed))
		for i, m := range killed {
			rows[i] = r.withPart(m.Part, m.ID, fmt.Sprint(m.Line), m.Operator, killers(m.KilledBy))
		}
		if err := table(&b, r.withPart("part", "id", "line", "operator", "killed by"), rows); err != nil {
			return err
		}
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("mutate: writing text: %w", err)
	}
	return nil
}

// WriteMarkdown writes the report as GitHub-flavoured markdown, for
// --format markdown and step summaries: survivors first, with their diffs.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "### gradegate mutate `%s`\n\n", code(r.Source))
	fmt.Fprintf(&b, "**Mutation score %s**: %s.\n\n", score(r.Score), r.counts())
	for _, n := range r.notes() {
		fmt.Fprintf(&b, "> %s\n\n", md(n))
	}
	survivors, killed := r.split()

	fmt.Fprintf(&b, "#### %s (%d)\n\n", r.notKilledTitle(), len(survivors))
	if len(survivors) == 0 {
		b.WriteString("None: every mutant was caught.\n")
	} else {
		b.WriteString("No canary or labeled case notices these changes.\n\n")
		mdRow(&b, r.withPart("part", "id", "line", "operator", "before", "after"), true)
		for _, m := range survivors {
			before, after := m.lines()
			mdRow(&b, r.withPart(md(m.Part), m.ID, fmt.Sprint(m.Line), md(m.operatorText()), "`"+code(before)+"`", "`"+code(after)+"`"), false)
		}
	}
	fmt.Fprintf(&b, "\n#### Excluded by `no-mutate` (%d lines)\n\n", len(r.Excluded))
	if len(r.Excluded) == 0 {
		b.WriteString("None.\n")
	} else {
		mdRow(&b, r.withPart("part", "line", "mutants", "reason", "code"), true)
		for _, e := range r.Excluded {
			mdRow(&b, r.withPart(md(e.Part), fmt.Sprint(e.Line), fmt.Sprint(e.Mutants), md(exclusionReason(e)), "`"+code(e.Code)+"`"), false)
		}
	}
	fmt.Fprintf(&b, "\n#### Killed (%d)\n\n", len(killed))
	if len(killed) == 0 {
		b.WriteString("None.\n")
	} else {
		mdRow(&b, r.withPart("part", "id", "line", "operator", "change", "killed by"), true)
		for i, m := range killed {
			if i == maxMarkdownRows {
				fmt.Fprintf(&b, "\n…and %d more; the JSON lists every mutant.\n", len(killed)-i)
				break
			}
			mdRow(&b, r.withPart(md(m.Part), m.ID, fmt.Sprint(m.Line), md(m.Operator), "`"+code(diffText(m))+"`", md(killers(m.KilledBy))), false)
		}
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("mutate: writing markdown: %w", err)
	}
	return nil
}

// withPart is a table row, led by the part's name when the grader has more
// than one Python part.
func (r *Report) withPart(part string, cells ...string) []string {
	if !r.hasParts() {
		return cells
	}
	return append([]string{part}, cells...)
}

// hasParts reports whether the mutants come from more than one source.
func (r *Report) hasParts() bool {
	for _, m := range r.Mutants {
		if m.Part != "" {
			return true
		}
	}
	for _, e := range r.Excluded {
		if e.Part != "" {
			return true
		}
	}
	return false
}

// mdRow writes one markdown table row; a header row is followed by its
// separator.
func mdRow(b *bytes.Buffer, cells []string, header bool) {
	fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
	if header {
		fmt.Fprintf(b, "|%s\n", strings.Repeat("---|", len(cells)))
	}
}

// counts says what the score is made of.
func (r *Report) counts() string {
	s := fmt.Sprintf("%d killed, %d survived of %d mutants", r.Killed, r.Survived, len(r.Mutants))
	if r.Killed > 0 {
		s += fmt.Sprintf(" (%d by a canary, %d by labeled cases only", r.KilledByCanary, r.KilledByCaseOnly)
		if r.KilledByMetric > 0 {
			s += fmt.Sprintf(", %d by gate.metrics only", r.KilledByMetric)
		}
		s += ")"
	}
	if r.EquivalentSuspect > 0 {
		s += fmt.Sprintf(", %d equivalent-suspect (did not load or raised on every input), counted as not killed", r.EquivalentSuspect)
	}
	hung := "not killed"
	if r.TimeoutCountsAsKill {
		hung = "killed (gate.mutation.timeout_counts_as_kill)"
	}
	if r.TimeoutKilled > 0 {
		s += fmt.Sprintf(", %d timeout-killed (a check timed out, nothing else changed), counted as %s", r.TimeoutKilled, hung)
	}
	if r.NotGraded > 0 {
		s += fmt.Sprintf(", %d not graded (stopped by the time budget), counted as %s", r.NotGraded, hung)
	}
	if r.TimeoutCountsAsKill && r.TimeoutKilled+r.NotGraded == 0 {
		s += ", mutants that hang would count as killed (gate.mutation.timeout_counts_as_kill)"
	}
	if r.ExcludedWithoutReason > 0 {
		s += fmt.Sprintf(", and %d excluded without a reason, counted as survivors", r.ExcludedWithoutReason)
	}
	return s
}

// notKilledTitle heads the list of mutants not killed: "Survived" unless
// some were equivalent-suspect or not graded.
func (r *Report) notKilledTitle() string {
	if r.EquivalentSuspect+r.NotGraded+r.TimeoutKilled > 0 {
		return "Not killed"
	}
	return "Survived"
}

// operatorText is the mutant's operator and, for a mutant not killed that
// did not survive either, what became of it.
func (m Mutant) operatorText() string {
	switch m.Status {
	case StatusEquivalentSuspect:
		return m.Operator + " (equivalent-suspect: " + m.Suspect + ")"
	case StatusNotGraded:
		return m.Operator + " (not graded: stopped by the time budget)"
	case StatusTimeoutKilled:
		return m.Operator + " (timeout-killed: " + list(m.TimedOut, maxKillers) + " timed out)"
	}
	return m.Operator
}

// exclusionReason is the pragma's reason, or what its absence means.
func exclusionReason(e Exclusion) string {
	if e.Unexcused() {
		return "(no reason given: counted as survived)"
	}
	return e.Reason
}

// lines returns the changed line(s) before and after, from the Diff when
// the mutant was read back from JSON.
func (m Mutant) lines() (before, after string) {
	if m.Original != "" || m.Mutated != "" {
		return excerpt(m.Original, m.Mutated)
	}
	before, after, _ = strings.Cut(strings.TrimPrefix(m.Diff, "- "), " / + ")
	return excerpt(before, after)
}

// split returns the mutants not killed (survivors, and those not graded or
// suspect) and the killed ones, each in id order.
func (r *Report) split() (survivors, killed []Mutant) {
	for _, m := range r.Mutants {
		if m.Status == StatusKilled {
			killed = append(killed, m)
		} else {
			survivors = append(survivors, m)
		}
	}
	return survivors, killed
}

// notes says what limits how far the score can be trusted.
func (r *Report) notes() []string {
	var out []string
	if r.Sites > len(r.Mutants) {
		out = append(out, fmt.Sprintf("the source has %d mutation sites; %d, sampled by operator and line, were tested", r.Sites, len(r.Mutants)))
	}
	if len(r.Mutants) == 0 {
		out = append(out, "no mutation site was found, so the score is 0: nothing showed that the canaries can catch a defect")
	}
	checks := fmt.Sprintf("checks that can kill a mutant: %d canaries and %d labeled cases", r.Canaries, r.Cases)
	if r.MetricGates > 0 {
		gates := "gates"
		if r.MetricGates == 1 {
			gates = "gate"
		}
		checks += fmt.Sprintf(", and %d gate.metrics %s over every case", r.MetricGates, gates)
	}
	out = append(out, checks)
	if len(r.Blind) > 0 {
		out = append(out, fmt.Sprintf("left out because the unmutated grader already fails them: %s", list(r.Blind, 10)))
	}
	if r.Survived > 0 {
		out = append(out, "a survivor may be an equivalent mutant (a change no input can observe); mark a reviewed line with `# gradegate: no-mutate: <why>`")
	}
	return out
}

func table(b *bytes.Buffer, header []string, rows [][]string) error {
	if err := render.Table(b, header, rows); err != nil {
		return fmt.Errorf("mutate: %w", err)
	}
	return nil
}

func killers(ids []string) string {
	return list(ids, maxKillers)
}

// list joins names, naming at most n and counting the rest.
func list(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s, +%d more", strings.Join(names[:n], ", "), len(names)-n)
}

func score(f float64) string { return fmt.Sprintf("%.2f", f) }

// md escapes text for a markdown table cell.
func md(s string) string { return render.MarkdownCell(s) }

// code makes text safe inside a markdown code span in a table cell: cut,
// its controls, bidi and zero-width characters written as visible escapes
// and workflow commands broken (render.Text), then a pipe, which would end
// the cell, and a backtick, which would end the span, replaced.
func code(s string) string {
	return strings.NewReplacer("|", `\|`, "`", "'").Replace(render.Text(s))
}
