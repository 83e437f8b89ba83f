package verdict

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gradegate/gradegate/gate/digest"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// Evidence is everything a verdict is decided from. Decide reads nothing else,
// so `run`, `merge` and tests share one set of rules.
type Evidence struct {
	// Cases holds one row per dataset row in scope, with Status (and, for
	// omitted rows, Reason) already set.
	Cases []results.CaseResult
	// NotInDataset counts intended cases that have no dataset row at all
	// (dataset.intended_cases above the number of rows). They are omitted,
	// with no case row to show.
	NotInDataset int
	// ExtraRows counts dataset rows beyond dataset.intended_cases; every row
	// is graded, and a warning says so.
	ExtraRows int
	Canaries  []results.CanaryResult
	// Findings are the dataset and grader lint findings.
	Findings         []manifest.Finding
	DigestMismatches []digest.DigestMismatch
	// MutationScore is the grader's mutation score; nil when not measured.
	MutationScore *float64
	// Determinism is the determinism check; nil when none ran.
	Determinism *results.Determinism
	// Shard is the part of the cases graded; Count > 1 makes the verdict
	// partial (see Decide).
	Shard shard.Shard
	// CanariesOnly: no case was meant to be graded (the canary command).
	CanariesOnly bool
	// Unsandboxed: graders ran without the sandbox (--unsandboxed).
	Unsandboxed bool
	// Tally, when set, holds the case rows already folded in (a streamed
	// run); Cases is then not read.
	Tally *Tally
}

// Verdict is what Decide concludes.
type Verdict struct {
	Verdict  string // VerdictPass or VerdictHold
	Reasons  []results.Reason
	Warnings []results.Warning
	Counts   results.Counts
	Overall  results.Overall
	Slices   []results.SliceResult
}

// Warning codes beyond the finding codes, which warn findings keep.
const (
	WarnUnsandboxed          = "unsandboxed"
	WarnPartialShard         = "partial_shard"
	WarnOmittedCases         = results.ReasonOmittedCases
	WarnUnevaluableCases     = results.ReasonUnevaluableCases
	WarnSliceBelowThreshold  = results.ReasonSliceBelowThreshold
	WarnSliceTooSmall        = results.ReasonSliceTooSmall
	WarnOverallBelow         = results.ReasonOverallBelowThreshold
	WarnMissingControls      = dataset.CodeMissingControls
	WarnMutationNotMeasured  = "mutation_not_measured"
	WarnIntendedCasesSurplus = "intended_cases_exceeded"
)

// Overall statuses beyond pass and hold.
const (
	// StatusWarn: a slice that cannot hold (warn_only, or without a
	// mandatory rule) is below its minimum, or a shard's rate or size is,
	// which merge decides.
	StatusWarn = "warn"
	// StatusSkipped: no case was graded on purpose (the canary command).
	StatusSkipped = "skipped"
)

// isGraderLint reports whether a finding code comes from the grader lint; a
// hold finding with such a code is grader_lint, any other is
// dataset_invalid.
func isGraderLint(code string) bool {
	switch code {
	case "grade_signature", "source_too_large", "sample_unused", "broad_except_constant",
		"import_not_in_image", "reads_environment", "network_import", "no_mutation_site":
		return true
	}
	return false
}

// rateEpsilon absorbs float error in means of family scores, so that a rate
// of exactly 19/20 is not "below" a min_pass_rate written as 0.95.
const rateEpsilon = 1e-9

// Decide applies the gate rules to the evidence.
//
// Pass rates are over graded (ok) cases. With aggregation "family", every
// family's score is the mean pass (0 or 1) of its graded rows, a case without
// a family is a family of its own, and a pass rate is the mean of the family
// scores; a family with no graded row does not count. Slices aggregate the
// same way, over the rows in the slice.
//
// Holds, besides digests, canaries and findings:
//   - omitted_cases: omitted > max_omitted, or any omitted row in a mandatory slice;
//   - unevaluable_cases: errored > max_errors, or any error in a mandatory slice;
//   - slice_too_small: a mandatory slice graded fewer than max(min_cases, 1)
//     cases; a mandatory slice with no row at all holds too, because it has
//     vanished from the data (a lost join, a renamed label);
//   - slice_below_threshold / overall_below_threshold: rate below minimum;
//     nothing graded overall holds as well, since no rate was measured;
//   - false_pass: a mandatory slice with more passes whose human_score is 0
//     than calibration.max_false_pass (false fails are counted, never hold);
//   - dataset_invalid: require_controls and a mandatory slice without both a
//     human_score 1 and a human_score 0 case.
//
// A warn_only slice and a slice without a rule are reported and add warnings
// when below their minimum; they never hold.
//
// A shard of several (Shard.Count > 1) is judged only by the rules a shard
// can judge alone: a count that is over its maximum in one shard is over it
// in the union, but a shard's pass rate, slice size or label mix says nothing
// about the whole. Those rules become warnings and `gradegate merge` decides
// them, so a shard holds only when the merged verdict will hold too.
//
// The case rows come from ev.Tally when it is set (a streamed run folds
// them in as they are graded), and otherwise from ev.Cases.
func Decide(g manifest.Gate, ev Evidence) Verdict {
	t := ev.Tally
	if t == nil {
		t = NewTally(g)
		for _, c := range ev.Cases {
			t.Add(c)
		}
	}
	d := decider{g: g, ev: ev, t: t, partial: ev.Shard.Partial(), reasons: []results.Reason{}, warnings: []results.Warning{}}

	if ev.Unsandboxed {
		d.warn(results.Warning{Code: WarnUnsandboxed,
			Message: "graders ran unsandboxed (--unsandboxed): no network, secret or filesystem isolation was in force"})
	}
	if d.partial {
		d.warn(results.Warning{Code: WarnPartialShard, Message: fmt.Sprintf(
			"shard %s grades part of the cases: pass rates, slice sizes and controls are decided by gradegate merge", ev.Shard)})
	}
	d.digests()
	d.canaries()
	d.findings()
	d.mutation()
	d.determinism()

	v := Verdict{Slices: []results.SliceResult{}}
	if ev.CanariesOnly {
		v.Overall = results.Overall{MinPassRate: g.MinPassRate, Status: StatusSkipped}
	} else {
		v.Counts = t.overall.Counts
		v.Counts.Intended += ev.NotInDataset
		v.Counts.Omitted += ev.NotInDataset
		d.extraRows()
		d.omitted(v.Counts)
		d.errored(v.Counts)
		d.zeroedExceptions()
		v.Slices = d.slices()
		v.Overall = d.overall()
	}

	sortReasons(d.reasons)
	v.Reasons = d.reasons
	v.Warnings = d.warnings
	v.Verdict = results.VerdictPass
	if len(v.Reasons) > 0 {
		v.Verdict = results.VerdictHold
	}
	return v
}

// reasonRank orders reasons root cause first: what makes the run itself
// untrustworthy (digests, the dataset, the grader's lint, a judge budget
// that let no model call go out, the canaries), then what the grading showed
// (a nondeterministic grader, omitted and unevaluable cases, the slice and
// overall rules, false passes, surviving mutants). A code not listed goes
// last.
func reasonRank(code string) int {
	order := []string{
		results.ReasonDigestMismatch, results.ReasonDatasetInvalid, results.ReasonGraderLint, results.ReasonJudgeBudgetExceeded,
		results.ReasonCanaryFailed, results.ReasonNondeterministicGrader, results.ReasonOmittedCases, results.ReasonUnevaluableCases,
		results.ReasonSliceBelowThreshold, results.ReasonSliceTooSmall, results.ReasonOverallBelowThreshold, results.ReasonRegressedVsBaseline,
		results.ReasonFalsePass, results.ReasonMutantsSurvived,
	}
	if i := slices.Index(order, code); i >= 0 {
		return i
	}
	return len(order)
}

// sortReasons puts reasons in reasonRank order, keeping the order of those
// of one code.
func sortReasons(rs []results.Reason) {
	slices.SortStableFunc(rs, func(a, b results.Reason) int { return cmp.Compare(reasonRank(a.Code), reasonRank(b.Code)) })
}

// decider accumulates reasons and warnings while Decide walks the rules.
type decider struct {
	g        manifest.Gate
	ev       Evidence
	t        *Tally
	partial  bool
	reasons  []results.Reason
	warnings []results.Warning
}

func (d *decider) hold(r results.Reason)  { d.reasons = append(d.reasons, r) }
func (d *decider) warn(w results.Warning) { d.warnings = append(d.warnings, w) }
func (d *decider) family() bool           { return d.g.Aggregation == "family" }

func (d *decider) digests() {
	for _, m := range d.ev.DigestMismatches {
		var msg string
		switch {
		case m.Want == "":
			msg = fmt.Sprintf("%s: %s is not pinned; its bytes are %s", m.File, m.Key, m.Got)
		case m.Got == "":
			msg = fmt.Sprintf("%s: the manifest pins %s = %s but no digest of the file was recorded", m.File, m.Key, m.Want)
		default:
			msg = fmt.Sprintf("%s: the manifest pins %s = %s but the file's bytes are %s (run gradegate pin if the change is intended)",
				m.File, m.Key, m.Want, m.Got)
		}
		d.hold(results.Reason{Code: results.ReasonDigestMismatch, File: m.File, Message: msg})
	}
}

func (d *decider) canaries() {
	for _, c := range d.ev.Canaries {
		if c.Status == results.StatusPass {
			continue
		}
		d.hold(results.Reason{Code: results.ReasonCanaryFailed, CaseIDs: []string{c.Name},
			Message: fmt.Sprintf("canary %q failed: %s", c.Name, c.Message)})
	}
}

// findings turns hold findings into reasons, one per code so a dataset with
// hundreds of schema violations gives one readable line, and warn findings
// into warnings.
func (d *decider) findings() {
	type group struct {
		code  string
		first manifest.Finding
		n     int
		cases []string
		seen  map[string]bool
	}
	var groups []*group
	byCode := map[string]*group{}
	for _, f := range d.ev.Findings {
		if f.Severity != manifest.SeverityHold {
			d.warn(results.Warning{Code: f.Code, Message: findingText(f)})
			continue
		}
		if isGraderLint(f.Code) {
			d.hold(results.Reason{Code: results.ReasonGraderLint, File: f.File, Message: findingText(f)})
			continue
		}
		if f.Code == dataset.CodeMissingControls && d.g.RequireControls && !d.partial {
			// Decide checks require_controls itself, per mandatory slice.
			continue
		}
		g := byCode[f.Code]
		if g == nil {
			g = &group{code: f.Code, first: f, seen: map[string]bool{}}
			byCode[f.Code] = g
			groups = append(groups, g)
		}
		g.n++
		if f.CaseID != "" && !g.seen[f.CaseID] && len(g.cases) < maxReasonIDs {
			g.seen[f.CaseID] = true
			g.cases = append(g.cases, f.CaseID)
		}
	}
	for _, g := range groups {
		msg := findingText(g.first)
		if g.n > 1 {
			msg = fmt.Sprintf("%d %s findings; first: %s", g.n, g.code, msg)
		}
		d.hold(results.Reason{Code: results.ReasonDatasetInvalid, File: g.first.File, CaseIDs: g.cases, Message: msg})
	}
}

func (d *decider) mutation() {
	least, got := d.g.MinMutationScore, d.ev.MutationScore
	switch {
	case least == nil:
	case got == nil:
		d.warn(results.Warning{Code: WarnMutationNotMeasured, Message: fmt.Sprintf(
			"gate.min_mutation_score is %s but this run did not mutation-test the grader", rate(*least))})
	case *got < *least-rateEpsilon:
		d.hold(results.Reason{Code: results.ReasonMutantsSurvived, Message: fmt.Sprintf(
			"mutation score %s is below gate.min_mutation_score %s", rate(shown(*got, *least)), rate(*least))})
	}
}

// extraRows warns that the dataset has more rows than it says it intends.
func (d *decider) extraRows() {
	if d.ev.ExtraRows > 0 {
		d.warn(results.Warning{Code: WarnIntendedCasesSurplus, Message: fmt.Sprintf(
			"the dataset has %d more rows than dataset.intended_cases; every row is graded and counted as intended",
			d.ev.ExtraRows)})
	}
}

// omitted applies max_omitted to the overall count; the mandatory-slice half
// of the rule is applied per slice.
func (d *decider) omitted(c results.Counts) {
	if c.Omitted == 0 {
		return
	}
	parts := d.t.overall.omitted.parts()
	if d.ev.NotInDataset > 0 {
		parts = append(parts, fmt.Sprintf("%d %s (dataset.intended_cases is %d but only %d rows exist)",
			d.ev.NotInDataset, results.OmittedNotInDataset, c.Intended, c.Intended-d.ev.NotInDataset))
	}
	msg := fmt.Sprintf("%d intended %s omitted, max_omitted is %d: %s",
		c.Omitted, plural(c.Omitted, "case", "cases"), d.g.MaxOmitted, strings.Join(parts, "; "))
	if c.Omitted > d.g.MaxOmitted {
		d.hold(results.Reason{Code: results.ReasonOmittedCases, CaseIDs: d.t.overall.omitted.ids, Message: msg})
	} else {
		d.warn(results.Warning{Code: WarnOmittedCases, Message: msg})
	}
}

// errored applies max_errors to the overall count; the mandatory-slice half
// of the rule is applied per slice.
func (d *decider) errored(c results.Counts) {
	if c.Errored == 0 {
		return
	}
	e := &d.t.overall.error
	msg := fmt.Sprintf("%d %s could not be graded, max_errors is %d: %s",
		c.Errored, plural(c.Errored, "case", "cases"), d.g.MaxErrors, strings.Join(e.parts(), "; "))
	if c.Errored > d.g.MaxErrors {
		d.hold(results.Reason{Code: results.ReasonUnevaluableCases, CaseIDs: e.ids, Message: msg})
	} else {
		d.warn(results.Warning{Code: WarnUnevaluableCases, Message: msg})
	}
}

// slices builds the per-slice table and applies the slice rules: every slice
// the manifest names or a case carries, mandatory ones first, then by name.
func (d *decider) slices() []results.SliceResult {
	rules := map[string]manifest.SliceRule{}
	for _, r := range d.g.Slices {
		rules[r.Name] = r
	}
	for name := range d.t.slices {
		if _, ok := rules[name]; !ok {
			rules[name] = manifest.SliceRule{Name: name, MinPassRate: d.g.MinPassRate}
		}
	}
	names := make([]string, 0, len(rules))
	for name := range rules {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		ma, mb := holds(rules[a]), holds(rules[b])
		if ma != mb {
			if ma {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})

	out := make([]results.SliceResult, 0, len(names))
	for _, name := range names {
		g := d.t.slices[name]
		if g == nil {
			g = &group{}
		}
		rule := rules[name]
		sr := results.SliceResult{
			Name:        rule.Name,
			Mandatory:   rule.Mandatory,
			WarnOnly:    rule.WarnOnly,
			Counts:      g.Counts,
			PassRate:    g.rate(d.family()),
			MinPassRate: rule.MinPassRate,
			MinCases:    rule.MinCases,
			FalsePass:   g.falsePass,
			FalseFail:   g.falseFail,
		}
		if holds(rule) {
			d.mandatorySlice(&sr, rule, g)
		} else {
			_, explicit := d.g.Slice(name)
			d.informativeSlice(&sr, rule, explicit)
		}
		sr.PassRate = rounded(sr.PassRate, rule.MinPassRate)
		out = append(out, sr)
	}
	if g := d.t.noSlice; g != nil && len(out) > 0 {
		// The rows in no slice get a row of their own, last, so that the
		// table accounts for every row; it is reported and never holds.
		rule := manifest.SliceRule{Name: NoSlice, MinPassRate: d.g.MinPassRate}
		sr := results.SliceResult{Name: NoSlice, Counts: g.Counts, PassRate: g.rate(d.family()), MinPassRate: rule.MinPassRate,
			FalsePass: g.falsePass, FalseFail: g.falseFail}
		d.informativeSlice(&sr, rule, false)
		sr.PassRate = rounded(sr.PassRate, rule.MinPassRate)
		out = append(out, sr)
	}
	return out
}

// NoSlice names the slice table's row of the rows that are in no slice.
const NoSlice = "(no slice)"

// holds reports whether a slice rule can hold the gate.
func holds(r manifest.SliceRule) bool { return r.Mandatory && !r.WarnOnly }

// below reports whether a slice's pass rate is under its minimum.
func below(sr *results.SliceResult, rule manifest.SliceRule) bool {
	return sr.PassRate != nil && *sr.PassRate < rule.MinPassRate-rateEpsilon
}

// informativeSlice judges a slice that cannot hold (warn_only, or without a
// mandatory rule): being too small or below its minimum only warns.
func (d *decider) informativeSlice(sr *results.SliceResult, rule manifest.SliceRule, explicit bool) {
	name := rule.Name
	sr.Status = results.StatusPass
	// A slice that graded nothing has no rate to pass with.
	if sr.Graded < rule.MinCases || sr.Graded == 0 {
		sr.Status = StatusWarn
		msg := fmt.Sprintf("slice %q graded %d %s, min_cases is %d", name, sr.Graded, plural(sr.Graded, "case", "cases"), rule.MinCases)
		switch {
		case sr.Graded == 0 && rule.MinCases == 0 && explicit:
			msg = fmt.Sprintf("slice %q is in the manifest but graded no case", name)
		case sr.Graded == 0 && rule.MinCases == 0:
			msg = fmt.Sprintf("slice %q graded no case (%d errored, %d omitted)", name, sr.Errored, sr.Omitted)
		}
		d.warn(results.Warning{Code: WarnSliceTooSmall, Slice: name, Message: msg})
	}
	if below(sr, rule) {
		sr.Status = StatusWarn
		d.warn(results.Warning{Code: WarnSliceBelowThreshold, Slice: name, Message: fmt.Sprintf(
			"slice %q: pass rate %s (%d of %d graded passed) is below its min_pass_rate %s",
			name, rate(shown(*sr.PassRate, rule.MinPassRate)), sr.Passed, sr.Graded, rate(rule.MinPassRate))})
	}
}

// mandatorySlice judges a mandatory slice. Omissions, errors and false
// passes hold in any run; the rate, the size and the controls are what a
// shard cannot judge alone, so a shard of several only warns about them.
func (d *decider) mandatorySlice(sr *results.SliceResult, rule manifest.SliceRule, g *group) {
	name := rule.Name
	held := d.sliceCounts(sr, name, g)
	deferred := d.sliceMeasures(sr, rule, g)
	if d.partial {
		for _, r := range deferred {
			code := r.Code
			if code == results.ReasonDatasetInvalid {
				code = WarnMissingControls
			}
			d.warn(results.Warning{Code: code, Slice: name, Message: r.Message + " (in this shard)"})
		}
	} else {
		held = append(held, deferred...)
		deferred = nil
	}
	for _, r := range held {
		d.hold(r)
	}
	switch {
	case len(held) > 0:
		sr.Status = results.VerdictHold
	case len(deferred) > 0:
		sr.Status = StatusWarn
	default:
		sr.Status = results.VerdictPass
	}
}

// sliceCounts are the mandatory-slice rules any shard judges: omitted,
// errored and falsely passed cases.
func (d *decider) sliceCounts(sr *results.SliceResult, name string, g *group) []results.Reason {
	var held []results.Reason
	if sr.Omitted > 0 {
		held = append(held, results.Reason{Code: results.ReasonOmittedCases, Slice: name, CaseIDs: g.omitted.ids, Message: fmt.Sprintf(
			"mandatory slice %q: %d %s omitted: %s", name, sr.Omitted, plural(sr.Omitted, "case", "cases"), strings.Join(g.omitted.parts(), "; "))})
	}
	if sr.Errored > 0 {
		held = append(held, results.Reason{Code: results.ReasonUnevaluableCases, Slice: name, CaseIDs: g.error.ids, Message: fmt.Sprintf(
			"mandatory slice %q: %d %s could not be graded: %s", name, sr.Errored, plural(sr.Errored, "case", "cases"), strings.Join(g.error.parts(), "; "))})
	}
	if sr.FalsePass > d.g.Calibration.MaxFalsePass {
		held = append(held, results.Reason{Code: results.ReasonFalsePass, Slice: name, Message: fmt.Sprintf(
			"mandatory slice %q: %d %s passed although its human_score is 0, calibration.max_false_pass is %d",
			name, sr.FalsePass, plural(sr.FalsePass, "case", "cases"), d.g.Calibration.MaxFalsePass)})
	}
	return held
}

// sliceMeasures are the mandatory-slice rules only the whole run judges:
// the pass rate, the number graded and the labeled controls.
func (d *decider) sliceMeasures(sr *results.SliceResult, rule manifest.SliceRule, g *group) []results.Reason {
	name := rule.Name
	var out []results.Reason
	if below(sr, rule) {
		out = append(out, results.Reason{Code: results.ReasonSliceBelowThreshold, Slice: name, Message: fmt.Sprintf(
			"mandatory slice %q: pass rate %s (%d of %d graded passed) is below its min_pass_rate %s",
			name, rate(shown(*sr.PassRate, rule.MinPassRate)), sr.Passed, sr.Graded, rate(rule.MinPassRate))})
	}
	if minCases := max(rule.MinCases, 1); sr.Graded < minCases {
		msg := fmt.Sprintf("mandatory slice %q graded %d %s, fewer than min_cases %d",
			name, sr.Graded, plural(sr.Graded, "case", "cases"), rule.MinCases)
		if sr.Intended == 0 {
			msg = fmt.Sprintf("mandatory slice %q has no case in the dataset: it may have vanished in a join or a rename", name)
		} else if rule.MinCases == 0 {
			msg = fmt.Sprintf("mandatory slice %q graded no case (%d intended)", name, sr.Intended)
		}
		out = append(out, results.Reason{Code: results.ReasonSliceTooSmall, Slice: name, Message: msg})
	}
	if d.g.RequireControls && !(g.has0 && g.has1) {
		var missing []string
		if !g.has1 {
			missing = append(missing, "human_score 1")
		}
		if !g.has0 {
			missing = append(missing, "human_score 0")
		}
		out = append(out, results.Reason{Code: results.ReasonDatasetInvalid, Slice: name, Message: fmt.Sprintf(
			"mandatory slice %q has no case labelled %s; gate.require_controls needs both",
			name, strings.Join(missing, " and no case labelled "))})
	}
	return out
}

// overall judges the overall pass rate.
func (d *decider) overall() results.Overall {
	r := d.t.overall.rate(d.family())
	o := results.Overall{PassRate: rounded(r, d.g.MinPassRate), MinPassRate: d.g.MinPassRate, Status: results.VerdictPass, Aggregation: results.AggregationRow}
	if d.family() {
		o.Aggregation, o.Families = results.AggregationFamily, d.t.overall.familyCount()
	}
	var msg string
	switch {
	case r == nil:
		msg = "no case was graded, so there is no pass rate to hold to gate.min_pass_rate " + rate(d.g.MinPassRate)
	case *r < d.g.MinPassRate-rateEpsilon:
		msg = fmt.Sprintf("overall pass rate %s is below gate.min_pass_rate %s", rate(shown(*r, d.g.MinPassRate)), rate(d.g.MinPassRate))
		if d.family() {
			msg += " (each family counts once)"
		}
	default:
		return o
	}
	if d.partial {
		o.Status = StatusWarn
		d.warn(results.Warning{Code: WarnOverallBelow, Message: msg + " (in this shard)"})
		return o
	}
	o.Status = results.VerdictHold
	d.hold(results.Reason{Code: results.ReasonOverallBelowThreshold, Message: msg})
	return o
}

// findingText places a finding's message at its position.
func findingText(f manifest.Finding) string {
	var pos string
	switch {
	case f.File != "" && f.Line > 0:
		pos = fmt.Sprintf("%s:%d: ", f.File, f.Line)
	case f.File != "":
		pos = f.File + ": "
	}
	if f.CaseID != "" && !strings.Contains(f.Message, f.CaseID) && !strings.Contains(pos, f.CaseID) {
		pos += f.CaseID + ": "
	}
	return pos + f.Code + ": " + f.Message
}

// idList names the first few of n case ids; the reason's case_ids lists more.
func idList(ids []string, n int) string {
	if n <= len(ids) {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids, ", "), n-len(ids))
}

// rate formats a rate for a message with up to four decimals, as results show it.
func rate(f float64) string {
	s := fmt.Sprintf("%.4f", round4(f))
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "" || s == "-" {
		return "0"
	}
	return s
}

// shown is a rate as the results show it: four decimals, rounded, except
// that a rate below its minimum never rounds up to it (0.94996 against 0.95
// shows 0.9499, not a confusing 0.95 that holds).
func shown(r, min float64) float64 {
	v := round4(r)
	if r < min-rateEpsilon && v >= min {
		v = math.Floor(r*1e4) / 1e4
	}
	return v
}

// rounded is shown for an optional rate.
func rounded(r *float64, min float64) *float64 {
	if r == nil {
		return nil
	}
	v := shown(*r, min)
	return &v
}

// round4 rounds a rate to four decimals for display.
func round4(f float64) float64 { return math.Round(f*1e4) / 1e4 }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
