package render

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// none stands for a value that does not exist (a pass rate with nothing
// graded, a canary that returned no score).
const none = "—"

// Limits on what a listing shows; the results JSON always has everything.
const (
	humanCaseLimit     = 10  // worst cases in the terminal
	markdownCaseLimit  = 50  // worst cases in markdown
	reasonCaseIDLimit  = 5   // case_ids named after a reason's message
	markdownFindLimit  = 100 // findings listed in markdown
	humanCellRunes     = 60  // a free-text cell in a terminal table
	markdownCellRunes  = 300 // a free-text cell in a markdown table
	markdownReasonRune = 1000
)

// SandboxLine states which isolation layers were in force, in the form every
// output uses: "sandbox: uid=60001 seccomp=on landlock=abi7 rlimits=on".
func SandboxLine(s grading.Sandbox) string {
	uid := "unchanged"
	if s.UID >= 0 {
		uid = strconv.Itoa(s.UID)
	}
	landlock := "off"
	if s.LandlockABI > 0 {
		landlock = "abi" + strconv.Itoa(s.LandlockABI)
	}
	line := fmt.Sprintf("sandbox: uid=%s seccomp=%s landlock=%s rlimits=%s",
		uid, onOff(s.Seccomp), landlock, onOff(s.Rlimits))
	if s.Signals != "" {
		// What keeps graders' signals inside their own processes.
		line += " signals=" + s.Signals
	}
	return line
}

// unsandboxedLine is said loudly wherever results of an unsandboxed run appear.
const unsandboxedLine = "UNSANDBOXED: graders ran without isolation"

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// FormatFinding renders a finding as "file:line: code: message (case_id)",
// leaving out the parts it does not have.
func FormatFinding(f manifest.Finding) string {
	var b strings.Builder
	if f.File != "" {
		b.WriteString(f.File)
		if f.Line > 0 {
			fmt.Fprintf(&b, ":%d", f.Line)
		}
		b.WriteString(": ")
	}
	b.WriteString(f.Code)
	b.WriteString(": ")
	b.WriteString(f.Message)
	if f.CaseID != "" {
		fmt.Fprintf(&b, " (%s)", f.CaseID)
	}
	return b.String()
}

// pct formats a rate in [0, 1] as a percentage with one decimal.
func pct(r *float64) string {
	if r == nil {
		return none
	}
	return pctDigits(*r, 1)
}

func pctDigits(r float64, digits int) string {
	return strconv.FormatFloat(r*100, 'f', digits, 64) + "%"
}

// pctVs formats a pass rate next to its minimum. When one decimal would print
// a rate below its minimum as equal to it (99.96% as "100.0%" against a
// minimum of 100.0%), it adds decimals until the two differ, so a hold never
// reads as "100.0% < 100.0%".
func pctVs(r *float64, minimum float64) string {
	if r == nil {
		return none
	}
	for d := 1; d < 4; d++ {
		if *r == minimum || pctDigits(*r, d) != pctDigits(minimum, d) {
			return pctDigits(*r, d)
		}
	}
	return pctDigits(*r, 4)
}

// score formats a grader score compactly: 1, 0, 0.5, 0.3333.
func score(v *float64) string {
	if v == nil {
		return none
	}
	if math.IsNaN(*v) || math.IsInf(*v, 0) {
		return fmt.Sprint(*v)
	}
	return strconv.FormatFloat(*v, 'g', 4, 64)
}

// expectText is what a canary expects: a score, or that the grader raises.
func expectText(c results.CanaryResult) string {
	if c.ExpectError {
		return "raise"
	}
	if c.BuiltIn {
		return "no pass"
	}
	return score(c.Expect)
}

// canaryName is the canary's name as reports show it: a built-in one says
// so, since no manifest writes it.
func canaryName(c results.CanaryResult) string {
	if c.BuiltIn {
		return c.Name + " (built-in)"
	}
	return c.Name
}

// canaryMessage is the canary's own message, or the error it raised.
func canaryMessage(c results.CanaryResult) string {
	if c.Message != "" {
		return c.Message
	}
	return errorText(c.Error)
}

// ErrorText is "Type: message" for a grader error.
func errorText(e *grading.CaseError) string {
	if e == nil {
		return ""
	}
	if e.Type != "" {
		return e.Type + ": " + e.Message
	}
	return e.Message
}

// graderLine is the grader source line an error points at, or "".
func graderLine(e *grading.CaseError) string {
	if e == nil || e.Line <= 0 {
		return ""
	}
	return strconv.Itoa(e.Line)
}

// caseMessage is the free text shown for a case: the error, the reason it
// was omitted, or the reason it failed.
func caseMessage(c results.CaseResult) string {
	if c.Error != nil {
		return errorText(c.Error)
	}
	return c.Reason
}

// sliceRule names how a slice gates.
func sliceRule(s results.SliceResult) string {
	switch {
	case s.Mandatory && s.WarnOnly:
		return "mandatory, warn-only"
	case s.Mandatory:
		return "mandatory"
	case s.WarnOnly:
		return "warn-only"
	}
	return ""
}

// reasonText is a reason's message, prefixed with its slice or file when the
// message does not already name them.
func reasonText(slice, file, msg string) string {
	if file != "" && !strings.Contains(msg, file) {
		msg = file + ": " + msg
	}
	if slice != "" && !strings.Contains(msg, slice) {
		msg = slice + ": " + msg
	}
	return msg
}

// caseIDList names at most limit case_ids: "a, b, c and 4 more".
func caseIDList(ids []string, limit int) string {
	if len(ids) <= limit {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:limit], ", "), len(ids)-limit)
}

// oneLine is the printer of untrusted text (grader messages, case ids, slice
// names, manifest keys and values) in human and markdown output: Text with
// the bound of one line.
func oneLine(s string) string {
	return Clip(s, LineRunes)
}

// cut shortens s to at most n runes, ending with "…" when it had to cut.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// Bounds on untrusted text in human and markdown output; the JSON keeps
// every value whole.
const (
	// ValueRunes bounds one value said inside a message (a case id, a key).
	ValueRunes = 300
	// LineRunes bounds one line of free text (a finding, a grader message).
	LineRunes = 1000
)

// Text is the printer of one untrusted value: Clip to ValueRunes.
func Text(s string) string { return Clip(s, ValueRunes) }

// Clip makes untrusted text safe to print on one line of human or markdown
// output, whatever reads it next (a terminal, GitHub's log, a browser):
//
//   - it is cut to n runes, and the cut says how long the text was, so a
//     1 MB case id costs a line, not a megabyte per mention;
//   - every run of whitespace, newlines included, folds into one space, so
//     the text never starts a line of its own;
//   - control characters (a terminal escape), bidi controls (U+202A-202E,
//     U+2066-2069), zero-width and other format characters (category Cf:
//     U+200B-200F, U+FEFF, ...) are written as visible escapes ("\x1b",
//     "\u202e"), so a case id cannot recolor a terminal or render as another;
//   - GitHub workflow commands are broken: "::" (a command at the start of a
//     line) is written ": :" and the legacy "##[" is written "# #[", so text
//     from a grader never speaks for gradegate in an Actions log.
func Clip(s string, n int) string {
	total := utf8.RuneCountInString(s)
	if total > n {
		// Cut before anything else, so the work is bounded by n too.
		s = string([]rune(s[:min(len(s), 4*n)])[:n])
	}
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) && r != '\u0085' && r != '\u00a0' && r != '\u2028' && r != '\u2029' {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		writeEscaped(&b, r)
	}
	out := neutralize(b.String())
	if total > n {
		out += fmt.Sprintf("… (%d characters)", total)
	}
	return out
}

// Lines is Clip for text whose line breaks matter, such as a traceback in an
// annotation: the whole is cut to n runes (saying how long it was), and each
// line is made safe as Clip makes it (and cut to LineRunes), so no line
// starts a workflow command.
func Lines(s string, n int) string {
	total := utf8.RuneCountInString(s)
	if total > n {
		s = string([]rune(s[:min(len(s), 4*n)])[:n])
	}
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = Clip(l, min(n, LineRunes))
	}
	out := strings.Join(lines, "\n")
	if total > n {
		out += fmt.Sprintf("… (%d characters)", total)
	}
	return out
}

// worstCases returns the cases worth a person's attention, most important
// first: errors (unevaluable cases), then omitted cases, then failures in a
// mandatory slice, then other failures. Within each group, cases in a
// mandatory slice come first; otherwise the results' order is kept.
func worstCases(res *results.Results) []results.CaseResult {
	mandatory := make(map[string]bool)
	for _, s := range res.Slices {
		if s.Mandatory {
			mandatory[s.Name] = true
		}
	}
	inMandatory := func(c results.CaseResult) bool {
		return slices.ContainsFunc(c.Slices, func(s string) bool { return mandatory[s] })
	}
	rank := func(c results.CaseResult) int {
		r := 0
		switch c.Status {
		case results.StatusError:
			r = 0
		case results.StatusOmitted:
			r = 2
		default: // fail
			r = 4
		}
		if !inMandatory(c) {
			r++
		}
		return r
	}
	var worst []results.CaseResult
	for _, c := range res.Cases {
		if c.Status != results.StatusPass {
			worst = append(worst, c)
		}
	}
	slices.SortStableFunc(worst, func(a, b results.CaseResult) int { return rank(a) - rank(b) })
	return worst
}

// holdFindings returns the findings of severity hold, and how many others
// there are.
func holdFindings(fs []manifest.Finding) (hold []manifest.Finding, others int) {
	for _, f := range fs {
		if f.Severity == manifest.SeverityHold {
			hold = append(hold, f)
		} else {
			others++
		}
	}
	return hold, others
}

// plural returns "1 case" or "3 cases".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// exclusionReason is a no-mutate pragma's reason, or what its absence means.
func exclusionReason(e results.MutationExclusion) string {
	if e.Unexcused() {
		return "no reason given: counted as survived"
	}
	return e.Reason
}

// determinismLine sums up the determinism check in one line; the reason
// names what differed.
func determinismLine(d *results.Determinism) string {
	s := fmt.Sprintf("determinism: %d canaries and %d cases graded twice (seed %d, PYTHONHASHSEED %d then %d): ",
		d.Canaries, d.Cases, d.Seed, d.HashSeeds[0], d.HashSeeds[1])
	if len(d.Differed) == 0 {
		return s + "nothing differed" + flipRateText(d.FlipRate)
	}
	return s + plural(len(d.Differed), "differed", "differed") + flipRateText(d.FlipRate)
}

// warningExamples is how many messages of one warning code a report shows;
// the results JSON has them all.
const warningExamples = 3

// warnGroup is the warnings of one code: how many, and the first few
// messages.
type warnGroup struct {
	code  string
	n     int
	first []string
}

// groupWarnings groups warnings by code, in order of each code's first
// warning, so a hundred near_duplicate warnings read as one line.
func groupWarnings(ws []results.Warning) []warnGroup {
	var out []warnGroup
	at := map[string]int{}
	for _, w := range ws {
		i, ok := at[w.Code]
		if !ok {
			i = len(out)
			at[w.Code] = i
			out = append(out, warnGroup{code: w.Code})
		}
		g := &out[i]
		g.n++
		if len(g.first) < warningExamples {
			g.first = append(g.first, reasonText(w.Slice, "", w.Message))
		}
	}
	return out
}

// splitCanaries returns the canaries that failed and those that passed, each
// in the results' order.
func splitCanaries(cs []results.CanaryResult) (failed, passed []results.CanaryResult) {
	for _, c := range cs {
		if c.DerivedFrom != "" {
			continue // shown grouped by transform
		}
		if c.Status == results.StatusPass {
			passed = append(passed, c)
		} else {
			failed = append(failed, c)
		}
	}
	return failed, passed
}

// rateColumn names the pass rate column: under family aggregation each
// family counts once, which the counts beside it do not show.
func rateColumn(o results.Overall) string {
	if o.PerFamily() {
		return "pass rate per family"
	}
	return "pass rate"
}

// familyLine says why a per-family pass rate differs from passed over
// graded; "" under row aggregation.
func familyLine(res *results.Results) string {
	o := res.Overall
	if !o.PerFamily() {
		return ""
	}
	return fmt.Sprintf("Pass rates are per family: each family counts once (the overall rate is the mean over %s, while the counts are rows).",
		plural(o.Families, "family", "families"))
}
