package render

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gradegate/gradegate/gate/results"
)

// MaxCheckRunSummary is the most a check run's output summary may hold:
// GitHub rejects a longer one (65535 characters, REST API "Create a check
// run", output.summary). Counting bytes stays on the safe side.
const MaxCheckRunSummary = 65535

// MarkdownOptions controls the markdown output.
type MarkdownOptions struct {
	// MaxBytes, when positive, is the most bytes the output may take. The
	// least important rows are cut first (case rows, then findings, canary
	// rows that passed, warnings, failed canaries, slice rows); the verdict,
	// the reasons, the counts and the slice table's header always stay. A note
	// at the end says what was cut.
	MaxBytes int
	// RunURL, when set, links the workflow run that produced the results.
	RunURL string
	// ResultsFile is the results JSON written beside this output, if any:
	// rows left out are said to be there, or how to get them.
	ResultsFile string
}

// Markdown writes results as GitHub-flavoured markdown with the same content
// as Human, in tables: for --format markdown, the step summary and the check
// run summary.
func Markdown(w io.Writer, res *results.Results, opts MarkdownOptions) error {
	if res == nil {
		return errors.New("render: no results")
	}
	return writeString(w, layout(resultSections(res, opts), opts, fullResults(opts)))
}

// MarkdownString returns Markdown's output as a string; "" for nil results.
func MarkdownString(res *results.Results, opts MarkdownOptions) string {
	if res == nil {
		return ""
	}
	return layout(resultSections(res, opts), opts, fullResults(opts))
}

func writeString(w io.Writer, s string) error {
	if _, err := io.WriteString(w, s); err != nil {
		return fmt.Errorf("render: writing markdown: %w", err)
	}
	return nil
}

// fullResults ends the note on cuts in a results summary: where every row
// is, or how to get it.
func fullResults(opts MarkdownOptions) string {
	if opts.ResultsFile != "" {
		return "The full results are in " + md(opts.ResultsFile)
	}
	return "The full results are written by --results FILE"
}

// mdMore says, in markdown, that n more rows exist and where they are.
func mdMore(n int, resultsFile string) string {
	if resultsFile != "" {
		return fmt.Sprintf("… and %d more in %s", n, md(resultsFile))
	}
	return fmt.Sprintf("… and %d more (write every row with --results FILE)", n)
}

// Cut order of markdown rows: a row of higher rank goes first; rank 0 rows
// are never cut.
const (
	rankKeep = iota
	rankSliceHold
	rankSlicePass
	rankCanaryFail
	rankWarning
	rankCanaryPass
	rankFinding
	rankCase
	rankFolded
	rankFooter
)

// fullResultsPlace names where every row is, for "… and N more in …".
func fullResultsPlace(opts MarkdownOptions) string {
	if opts.ResultsFile != "" {
		return md(opts.ResultsFile)
	}
	return "the results JSON (write it with --results FILE)"
}

// mdSection is a part of a markdown document: a head (title, table header),
// rows that may be cut one by one, and a tail written after the rows.
type mdSection struct {
	head string
	rows []mdRow
	// tail, when set, returns the text after the rows given how many were cut.
	tail func(cut int) string
	// keepHead keeps the head when every row was cut; otherwise the section
	// goes away with its last row.
	keepHead bool
	// what names the rows in the note on cuts ("case rows"); "" for no mention.
	what string
}

type mdRow struct {
	text string
	rank int
}

type rowRef struct{ sec, row int }

// assemble writes the sections without the rows in drop.
func assemble(secs []mdSection, drop map[rowRef]bool) string {
	var b strings.Builder
	for si, s := range secs {
		var kept strings.Builder
		n := 0
		for ri, r := range s.rows {
			if drop[rowRef{si, ri}] {
				continue
			}
			kept.WriteString(r.text)
			n++
		}
		if n == 0 && len(s.rows) > 0 && !s.keepHead {
			continue
		}
		b.WriteString(s.head)
		b.WriteString(kept.String())
		if s.tail != nil {
			b.WriteString(s.tail(len(s.rows) - n))
		}
	}
	return b.String()
}

// layout assembles the sections, cutting rows until the text and a note on
// what was cut fit in opts.MaxBytes. where is the note's sentence saying
// which document holds everything.
func layout(secs []mdSection, opts MarkdownOptions, where string) string {
	full := assemble(secs, nil)
	if opts.MaxBytes <= 0 || len(full) <= opts.MaxBytes {
		return full
	}

	var order []rowRef
	for si, s := range secs {
		for ri, r := range s.rows {
			if r.rank != rankKeep {
				order = append(order, rowRef{si, ri})
			}
		}
	}
	// Highest rank first; within a rank, from the end of the document, so a
	// table loses its last (least important) rows first.
	slices.SortStableFunc(order, func(a, b rowRef) int {
		ra, rb := secs[a.sec].rows[a.row].rank, secs[b.sec].rows[b.row].rank
		if ra != rb {
			return rb - ra
		}
		if a.sec != b.sec {
			return b.sec - a.sec
		}
		return b.row - a.row
	})

	try := func(k int, textCut bool) string {
		drop := make(map[rowRef]bool, k)
		for _, ref := range order[:k] {
			drop[ref] = true
		}
		return assemble(secs, drop) + cutNote(secs, drop, opts, where, textCut)
	}

	// Dropping rows only ever shortens the text, but for a few digits in the
	// note, so a binary search finds (nearly) the fewest rows to drop; the
	// scan after it makes sure the result fits.
	lo, hi := 1, len(order)
	for lo < hi {
		mid := (lo + hi) / 2
		if len(try(mid, false)) <= opts.MaxBytes {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	for k := lo; k <= min(lo+16, len(order)); k++ {
		if s := try(k, false); len(s) <= opts.MaxBytes {
			return s
		}
	}

	// Even the parts that are never cut do not fit (a flood of reasons): cut
	// the text itself at a line end and keep the note.
	drop := make(map[rowRef]bool, len(order))
	for _, ref := range order {
		drop[ref] = true
	}
	text, note := assemble(secs, drop), cutNote(secs, drop, opts, where, true)
	room := opts.MaxBytes - len(note)
	if room <= 0 {
		// No room for the note either: the verdict line is what matters most.
		first, _, _ := strings.Cut(text, "\n")
		return truncateUTF8(first+"\n", opts.MaxBytes)
	}
	text = truncateUTF8(text, room)
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = text[:i+1]
	}
	return text + note
}

// cutNote says what was cut and where the full results are.
func cutNote(secs []mdSection, drop map[rowRef]bool, opts MarkdownOptions, where string, textCut bool) string {
	var parts []string
	for si, s := range secs {
		if s.what == "" {
			continue
		}
		n := 0
		for ri := range s.rows {
			if drop[rowRef{si, ri}] {
				n++
			}
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d of %d %s", n, len(s.rows), s.what))
		}
	}
	if textCut {
		parts = append(parts, "the end of the text")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n---\n\n**Cut to fit %d bytes**", opts.MaxBytes)
	if len(parts) > 0 {
		b.WriteString(": " + strings.Join(parts, ", "))
	}
	b.WriteString(". " + where)
	if opts.RunURL != "" {
		fmt.Fprintf(&b, " ([workflow run](%s))", opts.RunURL)
	}
	b.WriteString(".\n")
	return b.String()
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// mdEscaper backslash-escapes what markdown would otherwise read as markup:
// a "|" would end a table cell, "<" would start an HTML tag ("<lambda>" in a
// traceback would vanish), "*", "_", "`", "[" and "~" would format. CommonMark
// allows a backslash before any ASCII punctuation.
var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`,
	"<", `\<`, ">", `\>`, "|", `\|`, "&", `\&`, "~", `\~`,
)

// md escapes free text for a markdown paragraph or list item, on one line.
func md(s string) string {
	return mdText(oneLine(s))
}

// mdText is the last step of every markdown printer of untrusted text: the
// mentions, references, links and emoji codes made inert (Inert), then the
// markup escaped.
func mdText(s string) string {
	return mdEscaper.Replace(Inert(s))
}

// cell escapes free text for a table cell, keeping its line breaks as <br>
// and cutting it to n runes.
func cell(s string, n int) string {
	s = cut(strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n")), n)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = mdText(oneLine(l))
	}
	return strings.Join(lines, "<br>")
}

// code formats one of gradegate's own identifiers (a reason code, a class).
func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + strings.ReplaceAll(s, "`", "") + "`"
}

// mdStatus marks a status so that it reads at a glance.
func mdStatus(s string) string {
	switch s {
	case results.StatusPass:
		return "✅ pass"
	case results.VerdictHold, results.StatusFail:
		return "❌ " + s
	case results.StatusError:
		return "⛔ error"
	case "warn":
		return "⚠️ warn"
	case results.StatusOmitted:
		return "⚪ omitted"
	}
	return md(s)
}

// mutationLine states the grader's mutation score when the run measured it
// and the determinism check when one ran, in one short paragraph under the
// counts.
func mutationLine(res *results.Results) string {
	var parts []string
	if res.MutationScore != nil {
		p := "Mutation score: " + pct(res.MutationScore)
		if n := len(res.MutationExcluded); n > 0 {
			p += fmt.Sprintf(" (%s excluded by no-mutate, listed below)", plural(n, "line", "lines"))
		}
		parts = append(parts, p)
	}
	if d := res.Determinism; d != nil {
		parts = append(parts, md(determinismLine(d)))
	}
	for _, l := range repeatLines(res) {
		parts = append(parts, md(strings.TrimSpace(l)))
	}
	if len(parts) == 0 {
		return ""
	}
	return "\n" + strings.Join(parts, "<br>\n") + "\n"
}

// exclusionSection lists every line a no-mutate pragma excluded from
// mutation testing and why, folded: it explains the score, not the verdict.
func exclusionSection(res *results.Results) string {
	if res.MutationScore == nil || len(res.MutationExcluded) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n<details><summary>%s excluded from mutation testing (no-mutate)</summary>\n\n",
		plural(len(res.MutationExcluded), "line", "lines"))
	for _, e := range res.MutationExcluded {
		fmt.Fprintf(&b, "- line %d (%s): %s\n", e.Line, plural(e.Mutants, "mutant", "mutants"), md(exclusionReason(e)))
	}
	b.WriteString("\n</details>\n")
	return b.String()
}

// tableRow writes cells as one markdown table row.
func tableRow(cells ...string) string {
	return "| " + strings.Join(cells, " | ") + " |\n"
}

// tableHead writes a table header; a column whose name starts with ">" is
// right-aligned.
func tableHead(cols ...string) string {
	names := make([]string, len(cols))
	rule := make([]string, len(cols))
	for i, c := range cols {
		if name, ok := strings.CutPrefix(c, ">"); ok {
			names[i], rule[i] = name, "---:"
		} else {
			names[i], rule[i] = c, "---"
		}
	}
	return tableRow(names...) + "|" + strings.Join(rule, "|") + "|\n"
}

func resultSections(res *results.Results, opts MarkdownOptions) []mdSection {
	runURL := opts.RunURL
	var secs []mdSection
	add := func(s mdSection) { secs = append(secs, s) }

	// Verdict and sandbox.
	var head strings.Builder
	mark := "❌"
	if res.Verdict == results.VerdictPass {
		mark = "✅"
	}
	fmt.Fprintf(&head, "## %s %s — %s", mark, strings.ToUpper(res.Verdict), md(res.Manifest.Name))
	if res.Shard.Count > 1 {
		fmt.Fprintf(&head, " (shard %d/%d)", res.Shard.Index, res.Shard.Count)
	}
	if res.Sandbox.Unsandboxed {
		head.WriteString(" (unsandboxed)")
	}
	fmt.Fprintf(&head, "\n\n`%s`\n", SandboxLine(res.Sandbox))
	if res.Judge != nil {
		fmt.Fprintf(&head, "\n%s\n", md(JudgeLine(res.Judge)))
	}
	if res.Sandbox.Unsandboxed {
		fmt.Fprintf(&head, "\n> ⚠️ **%s**\n", unsandboxedLine)
	}
	add(mdSection{head: head.String()})

	// Reasons are never cut.
	if len(res.Reasons) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "\n### Reasons (%d)\n\n", len(res.Reasons))
		b.WriteString(tableHead("code", "message"))
		for _, r := range res.Reasons {
			text := cell(reasonText(r.Slice, r.File, r.Message), markdownReasonRune)
			if len(r.CaseIDs) > 0 {
				text += "<br>cases: " + md(caseIDList(r.CaseIDs, reasonCaseIDLimit))
			}
			b.WriteString(tableRow(code(r.Code), text))
		}
		add(mdSection{head: b.String()})
	}

	// Counts, overall.
	c := res.Counts
	add(mdSection{head: "\n### Counts\n\n" +
		tableHead(">intended", ">graded", ">passed", ">failed", ">errored", ">omitted", ">"+rateColumn(res.Overall), ">min", "status") +
		tableRow(strconv.Itoa(c.Intended), strconv.Itoa(c.Graded), strconv.Itoa(c.Passed),
			strconv.Itoa(c.Failed), strconv.Itoa(c.Errored), strconv.Itoa(c.Omitted),
			rateCI(res.Overall.PassRate, res.Overall.MinPassRate, res.Overall.CI), pctDigits(res.Overall.MinPassRate, 1),
			mdStatus(res.Overall.Status)) +
		mdFamilyLine(res) + mutationLine(res) + mdMetricLines(res),
	})

	if len(res.Slices) > 0 {
		// Seven columns that fit a pull-request comment; every column of
		// every slice is folded under them.
		s := mdSection{
			head:     "\n### Slices\n\n" + tableHead("slice", "rule", ">graded", ">"+rateColumn(res.Overall), ">min", "status", "failing"),
			keepHead: true,
			what:     "slice rows",
		}
		for _, sl := range res.Slices {
			rank := rankSliceHold
			if sl.Status == results.StatusPass {
				rank = rankSlicePass
			}
			s.rows = append(s.rows, mdRow{tableRow(
				md(sl.Name), sliceRule(sl), strconv.Itoa(sl.Graded),
				rateCI(sl.PassRate, sl.MinPassRate, sl.CI), pctDigits(sl.MinPassRate, 1), sliceStatus(sl, mdStatus), md(failing(sl)),
			), rank})
		}
		add(s)
		wide := mdSection{
			head: "\n<details><summary>Every slice column</summary>\n\n" + tableHead("slice", "rule", ">intended", ">graded", ">passed", ">failed",
				">errored", ">omitted", ">"+rateColumn(res.Overall), ">min", ">false pass/fail", "status"),
			tail: func(int) string { return "\n</details>\n" },
			what: "folded slice rows",
		}
		for _, sl := range res.Slices {
			wide.rows = append(wide.rows, mdRow{tableRow(
				md(sl.Name), sliceRule(sl),
				strconv.Itoa(sl.Intended), strconv.Itoa(sl.Graded), strconv.Itoa(sl.Passed),
				strconv.Itoa(sl.Failed), strconv.Itoa(sl.Errored), strconv.Itoa(sl.Omitted),
				rateCI(sl.PassRate, sl.MinPassRate, sl.CI), pctDigits(sl.MinPassRate, 1),
				fmt.Sprintf("%d/%d", sl.FalsePass, sl.FalseFail), sliceStatus(sl, mdStatus),
			), rankFolded})
		}
		add(wide)
	}

	if len(res.MutationSurvivors) > 0 {
		s := mdSection{
			head: fmt.Sprintf("\n### Surviving mutants (%d)\n\n", len(res.MutationSurvivors)) + tableHead(">line", "operator", "change", "to kill it, add"),
			what: "surviving mutant rows",
		}
		for _, m := range res.MutationSurvivors {
			line := strconv.Itoa(m.Line)
			if m.Part != "" {
				line = md(m.Part) + " " + line
			}
			s.rows = append(s.rows, mdRow{tableRow(line, code(m.Operator), cell(m.Diff, markdownCellRunes), md(m.Kill)), rankCanaryFail})
		}
		add(s)
	}

	secs = append(secs, labelSections(res)...)

	if bl := baselineMarkdown(res.Baseline); bl != "" {
		add(mdSection{head: bl})
	}

	if len(res.Canaries) > 0 {
		secs = append(secs, canarySections(res.Canaries)...)
	}
	if res.Metamorphic != nil {
		add(markdownMetamorphic(res.Metamorphic))
	}

	if h := res.Hosted; h != nil {
		s := mdSection{
			head: "\n### Hosted parity\n\n" + tableHead("canary", ">expect", ">local", ">hosted", "parity", "attempts"),
			what: "hosted parity rows",
		}
		if !h.Validate.OK {
			s.head = "\n### Hosted parity\n\nThe hosted grader refused the grader at validation.\n\n" + tableHead("canary", ">expect", ">local", ">hosted", "parity", "attempts")
		}
		for _, row := range h.Rows {
			rank := rankCanaryPass
			parity := "✅ agrees"
			if !row.OK() {
				rank, parity = rankCanaryFail, "❌ disagrees"
			}
			expect := score(row.Expect)
			if row.ExpectError {
				expect = "raise"
			}
			local := "—"
			if row.Local != nil {
				local = score(row.Local.Got)
				if row.Local.Errored {
					local = code(row.Local.Class)
				}
			}
			hostedText := "—"
			if row.Hosted != nil {
				v := row.Hosted.Reward
				hostedText = score(&v)
				if row.Hosted.Errored {
					hostedText = "error"
				}
			} else if row.Error != "" {
				hostedText = cell(row.Error, markdownCellRunes)
			}
			s.rows = append(s.rows, mdRow{tableRow(md(row.Name), expect, local, hostedText, parity, fmt.Sprint(len(row.Attempts))), rank})
		}
		add(s)
	}

	if worst := worstCases(res); len(worst) > 0 {
		shown := worst[:min(len(worst), markdownCaseLimit)]
		total := len(worst) + res.CasesNotKept // a streamed run keeps what is shown
		unlisted := total - len(shown)
		s := mdSection{
			head: fmt.Sprintf("\n### Worst cases (%d)\n\n", total) +
				tableHead("case", "slices", "status", ">label", "why"),
			what: "case rows",
			tail: func(cut int) string {
				if n := unlisted + cut; n > 0 {
					return "\n_" + mdMore(n, opts.ResultsFile) + "_\n"
				}
				return ""
			},
		}
		for _, cs := range shown {
			s.rows = append(s.rows, mdRow{tableRow(
				md(cs.CaseID), md(strings.Join(cs.Slices, ", ")), mdStatus(cs.Status), humanLabel(cs),
				cell(caseWhy(cs), markdownCellRunes),
			), rankCase})
		}
		add(s)
	}

	if ex := exclusionSection(res); ex != "" {
		add(mdSection{head: ex})
	}

	// Findings of severity warn are among the warnings already.
	if hold, others := holdFindings(res.Findings); len(hold) > 0 {
		add(findingSection("Findings that hold", hold, others, rankFinding, "finding rows", fullResultsPlace(opts)))
	}

	if len(res.Warnings) > 0 {
		add(warningSection(res.Warnings, opts.ResultsFile))
	}

	var foot []string
	if line := versionLine(res); line != "" {
		foot = append(foot, md(line))
	}
	if runURL != "" {
		foot = append(foot, fmt.Sprintf("[workflow run](%s)", runURL))
	}
	if len(foot) > 0 {
		add(mdSection{rows: []mdRow{{"\n<sub>" + strings.Join(foot, " · ") + "</sub>\n", rankFooter}}})
	}
	return secs
}

// mdFamilyLine says, under the counts, that the pass rates are per family.
func mdFamilyLine(res *results.Results) string {
	if line := familyLine(res); line != "" {
		return "\n" + md(line) + "\n"
	}
	return ""
}

// canarySections writes the canaries that failed as a table, and those that
// passed folded in a details block: the failures are the evidence.
func canarySections(cs []results.CanaryResult) []mdSection {
	failed, passed := splitCanaries(cs)
	var secs []mdSection
	if len(failed) > 0 {
		s := mdSection{
			head: fmt.Sprintf("\n### Canaries (%d of %d failed)\n\n", len(failed), len(failed)+len(passed)) +
				tableHead("canary", ">expect", ">got", "class", "status", "message"),
			what: "failed canary rows",
		}
		for _, cn := range failed {
			s.rows = append(s.rows, mdRow{tableRow(md(canaryName(cn)), expectText(cn), score(cn.Got), code(string(cn.Class)),
				mdStatus(cn.Status), cell(canaryMessage(cn), markdownCellRunes)), rankCanaryFail})
		}
		secs = append(secs, s)
	} else {
		secs = append(secs, mdSection{head: "\n### Canaries\n"})
	}
	if len(passed) > 0 {
		summary := plural(len(passed), "canary", "canaries") + " passed"
		if len(failed) == 0 {
			summary = fmt.Sprintf("All %d canaries passed", len(passed))
			if len(passed) == 1 {
				summary = "The canary passed"
			}
		}
		s := mdSection{
			head: fmt.Sprintf("\n<details><summary>%s</summary>\n\n", summary) +
				tableHead("canary", ">expect", ">got", "class", "message"),
			tail: func(int) string { return "\n</details>\n" },
			what: "passed canary rows",
		}
		for _, cn := range passed {
			s.rows = append(s.rows, mdRow{tableRow(md(canaryName(cn)), expectText(cn), score(cn.Got), code(string(cn.Class)),
				cell(canaryMessage(cn), markdownCellRunes)), rankCanaryPass})
		}
		secs = append(secs, s)
	}
	return secs
}

// warningSection writes the warnings grouped by code, each with its count
// and first few messages, folded in a details block: they come last because
// they do not decide the verdict.
func warningSection(ws []results.Warning, resultsFile string) mdSection {
	groups := groupWarnings(ws)
	codes := make([]string, len(groups))
	for i, g := range groups {
		codes[i] = fmt.Sprintf("%s ×%d", summaryText(g.code), g.n)
	}
	s := mdSection{
		head: fmt.Sprintf("\n<details><summary>Warnings (%d): %s</summary>\n\n", len(ws), strings.Join(codes, ", ")) +
			tableHead("code", ">count", "first"),
		tail: func(int) string { return "\n</details>\n" },
		what: "warning rows",
	}
	for _, g := range groups {
		lines := make([]string, len(g.first))
		for i, m := range g.first {
			lines[i] = cell(m, markdownCellRunes)
		}
		if more := g.n - len(g.first); more > 0 {
			lines = append(lines, mdMore(more, resultsFile))
		}
		s.rows = append(s.rows, mdRow{tableRow(code(g.code), strconv.Itoa(g.n), strings.Join(lines, "<br>")), rankWarning})
	}
	return s
}

// summaryText keeps what may stand in an HTML <summary> as it is (letters,
// digits, "_", "-", "."): markdown is not read there, so nothing can be
// escaped, only left out.
func summaryText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			return r
		}
		return -1
	}, s)
}

// mdMetricLines are MetricLines as markdown lines under the counts.
func mdMetricLines(res *results.Results) string {
	var b strings.Builder
	for i, l := range MetricLines(res.Metrics) {
		if i == 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s<br>\n", md(strings.TrimSpace(l)))
	}
	return b.String()
}
