package gate

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// Evidence is everything a verdict is decided from. Decide reads nothing else,
// so `run`, `merge` and tests share one set of rules.
type Evidence struct {
	// Cases holds one row per dataset row in scope, with Status (and, for
	// omitted rows, Reason) already set.
	Cases []CaseResult
	// NotInDataset counts intended cases that have no dataset row at all
	// (dataset.intended_cases above the number of rows). They are omitted,
	// with no case row to show.
	NotInDataset int
	// ExtraRows counts dataset rows beyond dataset.intended_cases; every row
	// is graded, and a warning says so.
	ExtraRows int
	Canaries  []CanaryResult
	// Findings are the dataset and grader lint findings.
	Findings         []manifest.Finding
	DigestMismatches []DigestMismatch
	// MutationScore is the grader's mutation score; nil when not measured.
	MutationScore *float64
	// Shard is the part of the cases graded; Count > 1 makes the verdict
	// partial (see Decide).
	Shard Shard
	// CanariesOnly: no case was meant to be graded (the canary command).
	CanariesOnly bool
	// Unsandboxed: graders ran without the sandbox (--unsandboxed).
	Unsandboxed bool
}

// Verdict is what Decide concludes.
type Verdict struct {
	Verdict  string // VerdictPass or VerdictHold
	Reasons  []Reason
	Warnings []Warning
	Counts   Counts
	Overall  Overall
	Slices   []SliceResult
}

// Warning codes beyond the finding codes, which warn findings keep.
const (
	WarnUnsandboxed          = "unsandboxed"
	WarnPartialShard         = "partial_shard"
	WarnOmittedCases         = ReasonOmittedCases
	WarnUnevaluableCases     = ReasonUnevaluableCases
	WarnSliceBelowThreshold  = ReasonSliceBelowThreshold
	WarnSliceTooSmall        = ReasonSliceTooSmall
	WarnOverallBelow         = ReasonOverallBelowThreshold
	WarnMissingControls      = dataset.CodeMissingControls
	WarnMutationNotMeasured  = "mutation_not_measured"
	WarnIntendedCasesSurplus = "intended_cases_exceeded"
)

// Omission reasons of a case row, and of intended cases that have no row.
const (
	OmittedMissingSample = "missing_sample"
	OmittedNotInDataset  = "not_in_dataset"
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

// isGraderLint reports whether a finding code comes from the grader lint
// (SPEC section 8); a hold finding with such a code is grader_lint, any other
// is dataset_invalid.
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

// Decide applies the gate rules of SPEC section 7 to the evidence.
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
func Decide(g manifest.Gate, ev Evidence) Verdict {
	d := decider{g: g, ev: ev, partial: ev.Shard.partial()}
	d.warnings = []Warning{}
	d.reasons = []Reason{}

	if ev.Unsandboxed {
		d.warn(Warning{Code: WarnUnsandboxed,
			Message: "graders ran unsandboxed (--unsandboxed): no network, secret or filesystem isolation was in force"})
	}
	if d.partial {
		d.warn(Warning{Code: WarnPartialShard, Message: fmt.Sprintf(
			"shard %s grades part of the cases: pass rates, slice sizes and controls are decided by gradegate merge", ev.Shard)})
	}
	d.digests()
	d.canaries()
	d.findings()
	d.mutation()

	v := Verdict{Slices: []SliceResult{}}
	if ev.CanariesOnly {
		v.Overall = Overall{MinPassRate: g.MinPassRate, Status: StatusSkipped}
	} else {
		v.Counts = tally(ev.Cases)
		v.Counts.Intended += ev.NotInDataset
		v.Counts.Omitted += ev.NotInDataset
		if ev.ExtraRows > 0 {
			d.warn(Warning{Code: WarnIntendedCasesSurplus, Message: fmt.Sprintf(
				"the dataset has %d more rows than dataset.intended_cases; every row is graded and counted as intended",
				ev.ExtraRows)})
		}
		d.omitted(v.Counts)
		d.errored(v.Counts)
		d.zeroedExceptions()
		v.Slices = d.slices()
		v.Overall = d.overall()
	}

	slices.SortStableFunc(d.reasons, func(a, b Reason) int { return cmp.Compare(reasonRank(a.Code), reasonRank(b.Code)) })
	v.Reasons = d.reasons
	v.Warnings = d.warnings
	v.Verdict = VerdictPass
	if len(v.Reasons) > 0 {
		v.Verdict = VerdictHold
	}
	return v
}

// reasonRank orders reasons as SPEC section 7 lists them.
func reasonRank(code string) int {
	order := []string{
		ReasonDigestMismatch, ReasonCanaryFailed, ReasonDatasetInvalid, ReasonOmittedCases,
		ReasonUnevaluableCases, ReasonSliceBelowThreshold, ReasonSliceTooSmall,
		ReasonOverallBelowThreshold, ReasonFalsePass, ReasonMutantsSurvived, ReasonGraderLint,
	}
	if i := slices.Index(order, code); i >= 0 {
		return i
	}
	return len(order)
}

// decider accumulates reasons and warnings while Decide walks the rules.
type decider struct {
	g        manifest.Gate
	ev       Evidence
	partial  bool
	reasons  []Reason
	warnings []Warning
}

func (d *decider) hold(r Reason)                 { d.reasons = append(d.reasons, r) }
func (d *decider) warn(w Warning)                { d.warnings = append(d.warnings, w) }
func (d *decider) family() bool                  { return d.g.Aggregation == "family" }
func (d *decider) rate(cs []CaseResult) *float64 { return passRate(cs, d.family()) }

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
		d.hold(Reason{Code: ReasonDigestMismatch, File: m.File, Message: msg})
	}
}

func (d *decider) canaries() {
	for _, c := range d.ev.Canaries {
		if c.Status == StatusPass {
			continue
		}
		d.hold(Reason{Code: ReasonCanaryFailed, CaseIDs: []string{c.Name},
			Message: fmt.Sprintf("canary %q failed: %s", c.Name, c.Message)})
	}
}

// findings turns hold findings into reasons, one per code so a dataset with
// hundreds of schema violations gives one readable line, and warn findings
// into warnings.
func (d *decider) findings() {
	type group struct {
		code  string
		list  []manifest.Finding
		cases []string
	}
	var groups []*group
	byCode := map[string]*group{}
	for _, f := range d.ev.Findings {
		if f.Severity != manifest.SeverityHold {
			d.warn(Warning{Code: f.Code, Message: findingText(f)})
			continue
		}
		if isGraderLint(f.Code) {
			d.hold(Reason{Code: ReasonGraderLint, File: f.File, Message: findingText(f)})
			continue
		}
		if f.Code == dataset.CodeMissingControls && d.g.RequireControls && !d.partial {
			// Decide checks require_controls itself, per mandatory slice.
			continue
		}
		g := byCode[f.Code]
		if g == nil {
			g = &group{code: f.Code}
			byCode[f.Code] = g
			groups = append(groups, g)
		}
		g.list = append(g.list, f)
		if f.CaseID != "" && !slices.Contains(g.cases, f.CaseID) {
			g.cases = append(g.cases, f.CaseID)
		}
	}
	for _, g := range groups {
		msg := findingText(g.list[0])
		if n := len(g.list); n > 1 {
			msg = fmt.Sprintf("%d %s findings; first: %s", n, g.code, msg)
		}
		d.hold(Reason{Code: ReasonDatasetInvalid, File: g.list[0].File, CaseIDs: g.cases, Message: msg})
	}
}

func (d *decider) mutation() {
	least, got := d.g.MinMutationScore, d.ev.MutationScore
	switch {
	case least == nil:
	case got == nil:
		d.warn(Warning{Code: WarnMutationNotMeasured, Message: fmt.Sprintf(
			"gate.min_mutation_score is %s but this run did not mutation-test the grader", rate(*least))})
	case *got < *least-rateEpsilon:
		d.hold(Reason{Code: ReasonMutantsSurvived, Message: fmt.Sprintf(
			"mutation score %s is below gate.min_mutation_score %s", rate(shown(*got, *least)), rate(*least))})
	}
}

// omitted applies max_omitted to the overall count; the mandatory-slice half
// of the rule is applied per slice.
func (d *decider) omitted(c Counts) {
	if c.Omitted == 0 {
		return
	}
	ids, parts := d.omittedDetail(d.ev.Cases)
	if d.ev.NotInDataset > 0 {
		parts = append(parts, fmt.Sprintf("%d %s (dataset.intended_cases is %d but only %d rows exist)",
			d.ev.NotInDataset, OmittedNotInDataset, c.Intended, c.Intended-d.ev.NotInDataset))
	}
	msg := fmt.Sprintf("%d intended %s omitted, max_omitted is %d: %s",
		c.Omitted, plural(c.Omitted, "case", "cases"), d.g.MaxOmitted, strings.Join(parts, "; "))
	if c.Omitted > d.g.MaxOmitted {
		d.hold(Reason{Code: ReasonOmittedCases, CaseIDs: ids, Message: msg})
	} else {
		d.warn(Warning{Code: WarnOmittedCases, Message: msg})
	}
}

// omittedDetail lists omitted rows' ids and a "N reason (ids)" text per reason.
func (d *decider) omittedDetail(cs []CaseResult) (ids, parts []string) {
	byReason := map[string][]string{}
	var order []string
	for _, c := range cs {
		if c.Status != StatusOmitted {
			continue
		}
		ids = append(ids, c.CaseID)
		if _, ok := byReason[c.Reason]; !ok {
			order = append(order, c.Reason)
		}
		byReason[c.Reason] = append(byReason[c.Reason], c.CaseID)
	}
	for _, r := range order {
		parts = append(parts, fmt.Sprintf("%d %s (%s)", len(byReason[r]), r, idList(byReason[r])))
	}
	return ids, parts
}

func (d *decider) errored(c Counts) {
	if c.Errored == 0 {
		return
	}
	ids, detail := erroredDetail(d.ev.Cases)
	msg := fmt.Sprintf("%d %s could not be graded, max_errors is %d: %s",
		c.Errored, plural(c.Errored, "case", "cases"), d.g.MaxErrors, detail)
	if c.Errored > d.g.MaxErrors {
		d.hold(Reason{Code: ReasonUnevaluableCases, CaseIDs: ids, Message: msg})
	} else {
		d.warn(Warning{Code: WarnUnevaluableCases, Message: msg})
	}
}

// erroredDetail lists errored rows' ids and a "N class (ids)" text per class.
func erroredDetail(cs []CaseResult) (ids []string, detail string) {
	byClass := map[Class][]string{}
	var order []Class
	for _, c := range cs {
		if c.Status != StatusError {
			continue
		}
		ids = append(ids, c.CaseID)
		if _, ok := byClass[c.Class]; !ok {
			order = append(order, c.Class)
		}
		byClass[c.Class] = append(byClass[c.Class], c.CaseID)
	}
	parts := make([]string, 0, len(order))
	for _, cl := range order {
		parts = append(parts, fmt.Sprintf("%d %s (%s)", len(byClass[cl]), cl, idList(byClass[cl])))
	}
	return ids, strings.Join(parts, "; ")
}

// slices builds the per-slice table and applies the slice rules: every slice
// the manifest names or a case carries, mandatory ones first, then by name.
func (d *decider) slices() []SliceResult {
	members := map[string][]CaseResult{}
	for _, c := range d.ev.Cases {
		for _, s := range c.Slices {
			members[s] = append(members[s], c)
		}
	}
	rules := map[string]manifest.SliceRule{}
	for _, r := range d.g.Slices {
		rules[r.Name] = r
	}
	for name := range members {
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

	out := make([]SliceResult, 0, len(names))
	for _, name := range names {
		_, explicit := d.g.Slice(name)
		out = append(out, d.slice(rules[name], explicit, members[name]))
	}
	return out
}

// holds reports whether a slice rule can hold the gate.
func holds(r manifest.SliceRule) bool { return r.Mandatory && !r.WarnOnly }

// slice judges one slice.
func (d *decider) slice(rule manifest.SliceRule, explicit bool, cs []CaseResult) SliceResult {
	sr := SliceResult{
		Name:        rule.Name,
		Mandatory:   rule.Mandatory,
		WarnOnly:    rule.WarnOnly,
		Counts:      tally(cs),
		PassRate:    d.rate(cs),
		MinPassRate: rule.MinPassRate,
		MinCases:    rule.MinCases,
	}
	var has0, has1 bool
	for _, c := range cs {
		if c.HumanScore != nil {
			has0 = has0 || *c.HumanScore == 0
			has1 = has1 || *c.HumanScore == 1
		}
		switch {
		case c.Status == StatusPass && c.HumanScore != nil && *c.HumanScore == 0:
			sr.FalsePass++
		case c.Status == StatusFail && c.HumanScore != nil && *c.HumanScore == 1:
			sr.FalseFail++
		}
	}
	below := sr.PassRate != nil && *sr.PassRate < rule.MinPassRate-rateEpsilon
	name := rule.Name

	if !holds(rule) {
		sr.Status = StatusPass
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
			d.warn(Warning{Code: WarnSliceTooSmall, Slice: name, Message: msg})
		}
		if below {
			sr.Status = StatusWarn
			d.warn(Warning{Code: WarnSliceBelowThreshold, Slice: name, Message: fmt.Sprintf(
				"slice %q: pass rate %s (%d of %d graded passed) is below its min_pass_rate %s",
				name, rate(shown(*sr.PassRate, rule.MinPassRate)), sr.Passed, sr.Graded, rate(rule.MinPassRate))})
		}
		sr.PassRate = rounded(sr.PassRate, rule.MinPassRate)
		return sr
	}

	// A mandatory slice. held collects reasons for this slice; deferred
	// collects what a shard cannot judge alone.
	var held, deferred []Reason
	if sr.Omitted > 0 {
		ids, parts := d.omittedDetail(cs)
		held = append(held, Reason{Code: ReasonOmittedCases, Slice: name, CaseIDs: ids, Message: fmt.Sprintf(
			"mandatory slice %q: %d %s omitted: %s", name, sr.Omitted, plural(sr.Omitted, "case", "cases"), strings.Join(parts, "; "))})
	}
	if sr.Errored > 0 {
		ids, detail := erroredDetail(cs)
		held = append(held, Reason{Code: ReasonUnevaluableCases, Slice: name, CaseIDs: ids, Message: fmt.Sprintf(
			"mandatory slice %q: %d %s could not be graded: %s", name, sr.Errored, plural(sr.Errored, "case", "cases"), detail)})
	}
	if below {
		deferred = append(deferred, Reason{Code: ReasonSliceBelowThreshold, Slice: name, Message: fmt.Sprintf(
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
		deferred = append(deferred, Reason{Code: ReasonSliceTooSmall, Slice: name, Message: msg})
	}
	if sr.FalsePass > d.g.Calibration.MaxFalsePass {
		held = append(held, Reason{Code: ReasonFalsePass, Slice: name, Message: fmt.Sprintf(
			"mandatory slice %q: %d %s passed although its human_score is 0, calibration.max_false_pass is %d",
			name, sr.FalsePass, plural(sr.FalsePass, "case", "cases"), d.g.Calibration.MaxFalsePass)})
	}
	if d.g.RequireControls && !(has0 && has1) {
		var missing []string
		if !has1 {
			missing = append(missing, "human_score 1")
		}
		if !has0 {
			missing = append(missing, "human_score 0")
		}
		deferred = append(deferred, Reason{Code: ReasonDatasetInvalid, Slice: name, Message: fmt.Sprintf(
			"mandatory slice %q has no case labelled %s; gate.require_controls needs both",
			name, strings.Join(missing, " and no case labelled "))})
	}

	if d.partial {
		for _, r := range deferred {
			code := r.Code
			if code == ReasonDatasetInvalid {
				code = WarnMissingControls
			}
			d.warn(Warning{Code: code, Slice: name, Message: r.Message + " (in this shard)"})
		}
	} else {
		held = append(held, deferred...)
		deferred = nil
	}
	for _, r := range held {
		d.hold(r)
	}
	sr.PassRate = rounded(sr.PassRate, rule.MinPassRate)
	switch {
	case len(held) > 0:
		sr.Status = VerdictHold
	case len(deferred) > 0:
		sr.Status = StatusWarn
	default:
		sr.Status = VerdictPass
	}
	return sr
}

// overall judges the overall pass rate.
func (d *decider) overall() Overall {
	r := d.rate(d.ev.Cases)
	o := Overall{PassRate: rounded(r, d.g.MinPassRate), MinPassRate: d.g.MinPassRate, Status: VerdictPass}
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
		d.warn(Warning{Code: WarnOverallBelow, Message: msg + " (in this shard)"})
		return o
	}
	o.Status = VerdictHold
	d.hold(Reason{Code: ReasonOverallBelowThreshold, Message: msg})
	return o
}

// tally counts rows by status. Intended counts every row, so Intended =
// Graded + Errored + Omitted and Graded = Passed + Failed by construction.
func tally(cs []CaseResult) Counts {
	var c Counts
	for _, r := range cs {
		c.Intended++
		switch r.Status {
		case StatusPass:
			c.Graded++
			c.Passed++
		case StatusFail:
			c.Graded++
			c.Failed++
		case StatusError:
			c.Errored++
		default:
			// Omitted, and any status a hand-edited results file made up:
			// never graded, so it must not vanish from the counts.
			c.Omitted++
		}
	}
	return c
}

// passRate is the pass rate over graded rows, or nil when none was graded.
// With family true, each family counts once: its score is the mean pass of
// its graded rows, and the rate is the mean of the family scores.
func passRate(cs []CaseResult, family bool) *float64 {
	type score struct{ passed, graded int }
	var keys []string
	fams := map[string]*score{}
	var total score
	for _, c := range cs {
		if c.Status != StatusPass && c.Status != StatusFail {
			continue
		}
		p := 0
		if c.Status == StatusPass {
			p = 1
		}
		total.passed += p
		total.graded++
		// NUL cannot appear in a family name read from JSON text that
		// matters here, so a case without a family never joins a named one.
		key := "\x00" + c.CaseID
		if c.Family != "" {
			key = c.Family
		}
		s := fams[key]
		if s == nil {
			s = &score{}
			fams[key] = s
			keys = append(keys, key)
		}
		s.passed += p
		s.graded++
	}
	if total.graded == 0 {
		return nil
	}
	if !family {
		r := float64(total.passed) / float64(total.graded)
		return &r
	}
	var sum float64
	for _, k := range keys {
		s := fams[k]
		sum += float64(s.passed) / float64(s.graded)
	}
	r := sum / float64(len(keys))
	return &r
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

// idList names up to maxIDs case ids; the full list is in the reason's case_ids.
func idList(ids []string) string {
	const maxIDs = 5
	if len(ids) <= maxIDs {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:maxIDs], ", "), len(ids)-maxIDs)
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
