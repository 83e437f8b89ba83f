package render

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fatih/color"

	"github.com/gradegate/gradegate/gate/results"
)

// Options controls the terminal output.
type Options struct {
	// Color turns ANSI colors on. The caller decides, usually with ColorEnabled.
	Color bool
	// Wide shows every column of the slice and worst-cases tables; by
	// default they keep to 100 columns.
	Wide bool
	// ResultsFile is the results JSON written beside this output, if any:
	// rows left out are said to be there, or how to get them.
	ResultsFile string
}

// ColorEnabled reports whether output to a terminal-or-not should be
// colored by the conventions of the environment: never when NO_COLOR is set
// to anything (https://no-color.org); always when CLICOLOR_FORCE is set to
// anything but 0 (https://bixense.com/clicolors); never for TERM=dumb;
// otherwise only on a terminal.
func ColorEnabled(getenv func(string) string, terminal bool) bool {
	switch {
	case getenv("NO_COLOR") != "":
		return false
	case getenv("CLICOLOR_FORCE") != "" && getenv("CLICOLOR_FORCE") != "0":
		return true
	case getenv("TERM") == "dumb":
		return false
	}
	return terminal
}

// palette holds the colors of one rendering. Each color is switched on or off
// on its own instance, so nothing depends on the package-wide color.NoColor.
type palette struct {
	pass, hold, warn, errs, title, dim, loud *color.Color
	// bigPass and bigHold print the verdict.
	bigPass, bigHold *color.Color
}

func newPalette(on bool) palette {
	p := palette{
		pass:    color.New(color.FgGreen),
		hold:    color.New(color.FgRed),
		warn:    color.New(color.FgYellow),
		errs:    color.New(color.FgMagenta),
		title:   color.New(color.Bold),
		dim:     color.New(color.Faint),
		loud:    color.New(color.Bold, color.FgWhite, color.BgRed),
		bigPass: color.New(color.Bold, color.FgGreen),
		bigHold: color.New(color.Bold, color.FgRed),
	}
	for _, c := range []*color.Color{p.pass, p.hold, p.warn, p.errs, p.title, p.dim, p.loud, p.bigPass, p.bigHold} {
		if on {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
	}
	return p
}

// status colors a status word: pass, hold, warn, fail, error, omitted.
func (p palette) status(s string) string {
	switch s {
	case results.StatusPass:
		return p.pass.Sprint(s)
	case results.VerdictHold, results.StatusFail:
		return p.hold.Sprint(s)
	case results.StatusError:
		return p.errs.Sprint(s)
	case "warn", results.StatusOmitted:
		return p.warn.Sprint(s)
	}
	return s
}

// errWriter keeps the first write error so that rendering code can write
// without checking every call; the caller checks err once at the end.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	}
	return n, err
}

func (e *errWriter) printf(format string, a ...any) {
	fmt.Fprintf(e, format, a...)
}

// Human writes results for a person at a terminal: the verdict, the sandbox
// and the reasons first, then the counts, the per-slice table, the canaries
// (those that failed in a table, those that passed by name), the worst
// cases, the findings that hold, and the warnings grouped by code.
func Human(w io.Writer, res *results.Results, opts Options) error {
	if res == nil {
		return errors.New("render: no results")
	}
	ew := &errWriter{w: w}
	p := newPalette(opts.Color)

	humanHeader(ew, res, p)
	humanReasons(ew, res, p)
	if err := humanCounts(ew, res, p); err != nil {
		return err
	}
	if err := humanSlices(ew, res, p, opts); err != nil {
		return err
	}
	if err := humanLabels(ew, res, p); err != nil {
		return err
	}
	if err := humanCanaries(ew, res, p); err != nil {
		return err
	}
	humanSurvivors(ew, res, p)
	if err := humanMetamorphic(ew, res, p); err != nil {
		return err
	}
	if err := humanCases(ew, res, p, opts); err != nil {
		return err
	}
	humanFindings(ew, res, p)
	humanWarnings(ew, res, p, opts.ResultsFile)
	humanFooter(ew, res, p)

	if ew.err != nil {
		return fmt.Errorf("render: writing results: %w", ew.err)
	}
	return nil
}

func humanHeader(ew *errWriter, res *results.Results, p palette) {
	word := strings.ToUpper(res.Verdict)
	switch res.Verdict {
	case results.VerdictPass:
		word = p.bigPass.Sprint(word)
	case results.VerdictHold:
		word = p.bigHold.Sprint(word)
	}
	line := word + "  " + oneLine(res.Manifest.Name)
	if res.Shard.Count > 1 {
		line += fmt.Sprintf("  (shard %d/%d)", res.Shard.Index, res.Shard.Count)
	}
	if res.Sandbox.Unsandboxed {
		line += "  (unsandboxed)"
	}
	ew.printf("%s\n", line)
	ew.printf("%s\n", SandboxLine(res.Sandbox))
	if res.Judge != nil {
		ew.printf("%s\n", JudgeLine(res.Judge))
	}
	if res.Sandbox.Unsandboxed {
		ew.printf("%s\n", p.loud.Sprint(unsandboxedLine))
	}
}

func humanReasons(ew *errWriter, res *results.Results, p palette) {
	type item struct{ code, text, cases string }
	list := func(title string, items []item, c *color.Color) {
		if len(items) == 0 {
			return
		}
		width := 0
		for _, it := range items {
			width = max(width, len(it.code))
		}
		ew.printf("\n%s\n", p.title.Sprintf("%s (%d)", title, len(items)))
		for _, it := range items {
			pad := strings.Repeat(" ", width-len(it.code))
			ew.printf("  %s%s  %s\n", c.Sprint(it.code), pad, oneLine(it.text))
			if it.cases != "" {
				ew.printf("  %s  %s\n", strings.Repeat(" ", width), p.dim.Sprint("cases: "+oneLine(it.cases)))
			}
		}
	}
	var reasons []item
	for _, r := range res.Reasons {
		reasons = append(reasons, item{r.Code, reasonText(r.Slice, r.File, r.Message), caseIDList(r.CaseIDs, reasonCaseIDLimit)})
	}
	list("Reasons", reasons, p.hold)
}

// humanWarnings lists the warnings grouped by code: the code (with a count
// when there are several) beside the first message, the next few under it.
func humanWarnings(ew *errWriter, res *results.Results, p palette, resultsFile string) {
	if len(res.Warnings) == 0 {
		return
	}
	groups := groupWarnings(res.Warnings)
	labels := make([]string, len(groups))
	width := 0
	for i, g := range groups {
		labels[i] = oneLine(g.code)
		if g.n > 1 {
			labels[i] += fmt.Sprintf(" ×%d", g.n)
		}
		width = max(width, utf8.RuneCountInString(labels[i]))
	}
	ew.printf("\n%s\n", p.title.Sprintf("Warnings (%d)", len(res.Warnings)))
	indent := strings.Repeat(" ", width)
	for i, g := range groups {
		pad := strings.Repeat(" ", width-utf8.RuneCountInString(labels[i]))
		for j, m := range g.first {
			if j == 0 {
				ew.printf("  %s%s  %s\n", p.warn.Sprint(labels[i]), pad, oneLine(m))
			} else {
				ew.printf("  %s  %s\n", indent, oneLine(m))
			}
		}
		if more := g.n - len(g.first); more > 0 {
			ew.printf("  %s  %s\n", indent, p.dim.Sprint(moreRows(more, resultsFile)))
		}
	}
}

// table is a box table on its way to a writer.
type table struct {
	w   io.Writer
	box box
}

// newTable returns a terminal table whose headers stay as written and whose
// cells never wrap (the renderer cuts long text itself). align holds one
// alignment per column.
func newTable(w io.Writer, header []string, align []align) *table {
	return &table{w: w, box: box{header: header, align: align}}
}

// renderTable adds rows to a table and draws it.
func renderTable(t *table, rows [][]string) error {
	t.box.rows = rows
	if err := t.box.write(t.w); err != nil {
		return fmt.Errorf("render: table: %w", err)
	}
	return nil
}

func humanCounts(ew *errWriter, res *results.Results, p palette) error {
	ew.printf("\n%s\n", p.title.Sprint("Counts"))
	c := res.Counts
	t := newTable(ew,
		[]string{"intended", "graded", "passed", "failed", "errored", "omitted", rateColumn(res.Overall), "min", "status"},
		[]align{right, right, right, right, right, right, right, right, left})
	err := renderTable(t, [][]string{{
		strconv.Itoa(c.Intended), strconv.Itoa(c.Graded), strconv.Itoa(c.Passed),
		strconv.Itoa(c.Failed), strconv.Itoa(c.Errored), strconv.Itoa(c.Omitted),
		rateCI(res.Overall.PassRate, res.Overall.MinPassRate, res.Overall.CI), pctDigits(res.Overall.MinPassRate, 1),
		p.status(res.Overall.Status),
	}})
	if line := familyLine(res); line != "" {
		ew.printf("%s\n", line)
	}
	if res.MutationScore != nil {
		ew.printf("mutation score: %s\n", pct(res.MutationScore))
		for _, e := range res.MutationExcluded {
			ew.printf("  no-mutate line %d (%s): %s\n", e.Line, plural(e.Mutants, "mutant", "mutants"), oneLine(exclusionReason(e)))
		}
	}
	if d := res.Determinism; d != nil {
		ew.printf("%s\n", oneLine(determinismLine(d)))
	}
	for _, l := range repeatLines(res) {
		ew.printf("%s\n", oneLine(l))
	}
	for _, l := range MetricLines(res.Metrics) {
		ew.printf("%s\n", oneLine(l))
	}
	baselineHuman(ew, res.Baseline)
	return err
}

func humanSlices(ew *errWriter, res *results.Results, p palette, opts Options) error {
	if len(res.Slices) == 0 {
		return nil
	}
	ew.printf("\n%s\n", p.title.Sprint("Slices"))
	if !opts.Wide {
		t := newTable(ew,
			[]string{"slice", "rule", "graded", rateColumn(res.Overall), "min", "status", "failing"},
			[]align{left, left, right, right, right, left, left})
		var rows [][]string
		for _, s := range res.Slices {
			rows = append(rows, []string{
				cut(oneLine(s.Name), narrowNameRunes), sliceRule(s), strconv.Itoa(s.Graded),
				rateCI(s.PassRate, s.MinPassRate, s.CI), pctDigits(s.MinPassRate, 1), sliceStatus(s, p.status),
				cut(failing(s), narrowFailingRunes),
			})
		}
		return renderTable(t, rows)
	}
	t := newTable(ew,
		[]string{"slice", "rule", "intended", "graded", "passed", "failed", "errored", "omitted", rateColumn(res.Overall), "min", "false pass/fail", "status"},
		[]align{left, left, right, right, right, right, right, right, right, right, right, left})
	var rows [][]string
	for _, s := range res.Slices {
		rows = append(rows, []string{
			oneLine(s.Name), sliceRule(s),
			strconv.Itoa(s.Intended), strconv.Itoa(s.Graded), strconv.Itoa(s.Passed),
			strconv.Itoa(s.Failed), strconv.Itoa(s.Errored), strconv.Itoa(s.Omitted),
			rateCI(s.PassRate, s.MinPassRate, s.CI), pctDigits(s.MinPassRate, 1),
			fmt.Sprintf("%d/%d", s.FalsePass, s.FalseFail),
			sliceStatus(s, p.status),
		})
	}
	return renderTable(t, rows)
}

// humanSurvivors lists the mutants no canary or labeled case noticed, each
// with the kind of canary that would.
func humanSurvivors(ew *errWriter, res *results.Results, p palette) {
	if len(res.MutationSurvivors) == 0 {
		return
	}
	ew.printf("\n%s\n", p.title.Sprintf("Surviving mutants (%d)", len(res.MutationSurvivors)))
	for _, m := range res.MutationSurvivors {
		head, kill := survivorText(m)
		ew.printf("  %s\n    %s\n", cut(oneLine(head), humanCellRunes+30), p.dim.Sprint(oneLine(kill)))
	}
}

func humanCanaries(ew *errWriter, res *results.Results, p palette) error {
	failed, passed := splitCanaries(res.Canaries)
	if len(failed)+len(passed) == 0 {
		return nil
	}
	names := make([]string, len(passed))
	for i, c := range passed {
		names[i] = canaryName(c)
	}
	passedLine := cut(oneLine(strings.Join(names, ", ")), humanCellRunes*2)
	if len(failed) == 0 {
		ew.printf("\n%s %s\n", p.title.Sprintf("Canaries:"), p.pass.Sprintf("all %d behaved as expected", len(passed)))
		ew.printf("  %s\n", p.dim.Sprint(passedLine))
		return nil
	}
	ew.printf("\n%s\n", p.title.Sprintf("Canaries (%d of %d failed)", len(failed), len(failed)+len(passed)))
	header := []string{"canary", "expect", "got", "class", "message"}
	t := newTable(ew, header, []align{left, right, right, left, left})
	var rows [][]string
	for _, c := range failed {
		rows = append(rows, []string{
			cut(oneLine(canaryName(c)), narrowCaseRunes), expectText(c), score(c.Got), oneLine(string(c.Class)), oneLine(canaryMessage(c)),
		})
	}
	// Every row failed, so no status column; the message gets what the
	// other columns leave of the width (the full text is among the reasons).
	room := narrowWidth - tableFrame(len(header))
	for col := range len(header) - 1 {
		room -= columnRunes(header, rows, col)
	}
	for _, r := range rows {
		r[4] = cut(r[4], max(room, narrowWhyRunes))
	}
	if err := renderTable(t, rows); err != nil {
		return err
	}
	if len(passed) > 0 {
		ew.printf("%s %s\n", p.pass.Sprintf("passed (%d):", len(passed)), p.dim.Sprint(passedLine))
	}
	return nil
}

func humanCases(ew *errWriter, res *results.Results, p palette, opts Options) error {
	worst := worstCases(res)
	if len(worst) == 0 {
		return nil
	}
	shown := worst[:min(len(worst), humanCaseLimit)]
	// A streamed run keeps only the rows a report can show; the rest are
	// counted, and all are in the results JSON.
	total := len(worst) + res.CasesNotKept
	ew.printf("\n%s\n", p.title.Sprintf("Worst cases (%d of %d)", len(shown), total))
	var t *table
	var rows [][]string
	if opts.Wide {
		t = newTable(ew,
			[]string{"case", "slices", "status", "class", "score", "label", "message", "grader line"},
			[]align{left, left, left, left, right, right, left, right})
		for _, c := range shown {
			rows = append(rows, []string{
				oneLine(c.CaseID), oneLine(strings.Join(c.Slices, ", ")), p.status(c.Status), oneLine(string(c.Class)),
				caseScore(c), humanLabel(c), cut(oneLine(caseMessage(c)), humanCellRunes), graderLine(c.Error),
			})
		}
	} else {
		header := []string{"case", "slices", "status", "label", "why"}
		t = newTable(ew, header, []align{left, left, left, right, left})
		for _, c := range shown {
			rows = append(rows, []string{
				cut(oneLine(c.CaseID), narrowCaseRunes), cut(oneLine(strings.Join(c.Slices, ", ")), narrowSlicesRunes),
				c.Status, humanLabel(c), oneLine(caseWhy(c)),
			})
		}
		// "why" gets what the other columns leave of the width.
		room := narrowWidth - tableFrame(len(header))
		for col := range len(header) - 1 {
			room -= columnRunes(header, rows, col)
		}
		for _, r := range rows {
			r[2] = p.status(r[2])
			r[4] = cut(r[4], max(room, narrowWhyRunes))
		}
	}
	if err := renderTable(t, rows); err != nil {
		return err
	}
	if more := total - len(shown); more > 0 {
		ew.printf("%s\n", p.dim.Sprint(moreRows(more, opts.ResultsFile)))
	}
	return nil
}

// caseScore is a case's score; omitted and unevaluable cases have none to show.
func caseScore(c results.CaseResult) string {
	if c.Status == results.StatusOmitted {
		return ""
	}
	return score(c.Score)
}

// humanFindings lists the findings that hold. Those of severity warn are
// among the warnings already, so they are only counted here, pointing there.
func humanFindings(ew *errWriter, res *results.Results, p palette) {
	hold, others := holdFindings(res.Findings)
	if len(hold) == 0 {
		return
	}
	ew.printf("\n%s\n", p.title.Sprintf("Findings that hold (%d)", len(hold)))
	for _, f := range hold {
		ew.printf("  %s\n", oneLine(FormatFinding(f)))
	}
	if others > 0 {
		ew.printf("  %s\n", p.dim.Sprintf("(and %s of severity warn, under Warnings)", plural(others, "finding", "findings")))
	}
}

func humanFooter(ew *errWriter, res *results.Results, p palette) {
	if line := versionLine(res); line != "" {
		ew.printf("\n%s\n", p.dim.Sprint(oneLine(line)))
	}
}

// versionLine names what produced the results: grader, dataset and rubric
// versions with short digests, the image tag and gradegate's own version.
func versionLine(res *results.Results) string {
	var parts []string
	add := func(label, name, digest string) {
		if name == "" && digest == "" {
			return
		}
		s := label
		// A grader file named grader.py is "grader", not "grader grader".
		if name != "" && name != label {
			s += " " + name
		}
		if d := shortDigest(digest); d != "" {
			s += " (" + d + ")"
		}
		parts = append(parts, s)
	}
	v := res.Versions
	add("grader", v.GraderName, res.Digests.Grader)
	add("dataset", v.DatasetRevision, res.Digests.Dataset)
	add("rubric", v.RubricVersion, res.Digests.Rubric)
	add("preprocess", "", v.PreprocessDigest)
	if v.JudgeModel != "" {
		parts = append(parts, "judge "+v.JudgeModel)
	}
	if c := v.Candidate; c != nil {
		parts = append(parts, "candidate "+candidateText(c))
	}
	if v.ImageTag != "" {
		parts = append(parts, "image "+v.ImageTag)
	}
	if v.Gradegate != "" {
		parts = append(parts, "gradegate "+v.Gradegate)
	}
	return strings.Join(parts, " · ")
}

// candidateText is "model revision", with the samples' models when they
// name several.
func candidateText(c *results.Candidate) string {
	s := c.Model
	if c.Revision != "" {
		s += " " + c.Revision
	}
	if len(c.Models) > 0 {
		var ms []string
		for _, m := range c.Models {
			ms = append(ms, fmt.Sprintf("%s ×%d", m.Model, m.Samples))
		}
		s += " (samples: " + strings.Join(ms, ", ") + ")"
	}
	return s
}

// shortDigest keeps "sha256:" and the first 12 hex digits.
func shortDigest(d string) string {
	const keep = len("sha256:") + 12
	if len(d) > keep {
		return d[:keep]
	}
	return d
}
