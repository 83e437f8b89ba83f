package verdict

import (
	"cmp"
	"fmt"
	"github.com/gradegate/gradegate/canary/hosted"
	"slices"

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
	// Survivors are the mutants that score left alive.
	Survivors []results.SurvivingMutant
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
	// Labels is what the dataset's labels showed (reviewer agreement,
	// brittle and stale rows); nil when unknown.
	Labels *dataset.LabelSummary
	// Judge is what a model grader's calls cost (nil for none), and
	// JudgeLint the model grader lint's findings, which the judge rule
	// weighs (they are reported after Findings).
	Judge     *results.JudgeUsage
	JudgeLint []manifest.Finding
	// Hosted is the canaries' parity with OpenAI's hosted grader (canary
	// --hosted), and HostedErr why the hosted run could not finish; both
	// nil when none ran.
	Hosted    *hosted.Report
	HostedErr error
	// Notes are findings reported after every other and weighed by no
	// rule (a determinism check that could not ask the model again).
	Notes []manifest.Finding
	// Metrics are the aggregate metrics of a batch grader under MKA1's
	// contract, which gate.metrics gates; nil for none.
	Metrics *results.Metrics
}

// Verdict is what Decide concludes.
type Verdict struct {
	Verdict  string // VerdictPass or VerdictHold
	Reasons  []results.Reason
	Warnings []results.Warning
	Counts   results.Counts
	Overall  results.Overall
	Slices   []results.SliceResult
	// Confidence is the level and the rule the intervals were read with.
	Confidence manifest.Confidence
	Labels     *results.Labels
	// Metrics is the metrics block with gate.metrics decided; nil when
	// the run has neither.
	Metrics *results.Metrics
}

// Warning codes beyond the finding codes, which warn findings keep.
const (
	WarnUnsandboxed         = "unsandboxed"
	WarnPartialShard        = "partial_shard"
	WarnOmittedCases        = results.ReasonOmittedCases
	WarnUnevaluableCases    = results.ReasonUnevaluableCases
	WarnSliceBelowThreshold = results.ReasonSliceBelowThreshold
	WarnSliceTooSmall       = results.ReasonSliceTooSmall
	WarnOverallBelow        = results.ReasonOverallBelowThreshold
	WarnMissingControls     = dataset.CodeMissingControls
	WarnMutationNotMeasured = "mutation_not_measured"
	// WarnFalsePass names the cases that passed although their
	// human_score is 0, when no calibration rule holds on them.
	WarnFalsePass            = results.ReasonFalsePass
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
//   - false_pass: more passes whose human_score is 0 than
//     calibration.max_false_pass, overall or in any slice, or in a mandatory
//     slice more than calibration.mandatory_max_false_pass (0 unless set);
//     a warn_only slice only warns, and every false pass is named in a
//     warning when no rule holds on it;
//   - false_fail: the same for fails whose human_score is 1, when
//     calibration.max_false_fail (or mandatory_max_false_fail) is set;
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
	d.judge()
	d.digests()
	d.canaries()
	d.metamorphic()
	d.hosted()
	d.findings()
	d.mutation()
	d.determinism()

	v := Verdict{Slices: []results.SliceResult{}, Confidence: confidence(g)}
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
		v.Labels = d.labelsBlock(v.Slices)
		d.labelRules(v.Slices, v.Labels)
		d.calibration()
		v.Metrics = d.metrics()
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
		results.ReasonPolicyWeakened, results.ReasonDigestMismatch, results.ReasonDatasetInvalid, results.ReasonGraderLint, results.ReasonJudgeBudgetExceeded,
		results.ReasonCanaryFailed, results.ReasonMetamorphicViolation, results.ReasonNondeterministicGrader, results.ReasonOmittedCases, results.ReasonUnevaluableCases,
		results.ReasonSliceBelowThreshold, results.ReasonSliceInconclusive, results.ReasonSliceTooSmall, results.ReasonOverallBelowThreshold, results.ReasonRegressedVsBaseline,
		results.ReasonGraderChangedVsBaseline, results.ReasonFalsePass, results.ReasonFalseFail, results.ReasonAgreementBelowThreshold, results.ReasonMutantsSurvived,
		results.ReasonMetricMissing, results.ReasonMetricNotShardable, results.ReasonMetricBelowThreshold, results.ReasonMetricAboveThreshold,
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
	// countsHeld: the overall counts hold (omitted or errored cases over
	// their maximum), so the overall row's status is hold whatever its rate.
	countsHeld bool
}

func (d *decider) hold(r results.Reason)  { d.reasons = append(d.reasons, r) }
func (d *decider) warn(w results.Warning) { d.warnings = append(d.warnings, w) }
func (d *decider) family() bool           { return d.g.Aggregation == "family" }

// NoSlice names the slice table's row of the rows that are in no slice.
const NoSlice = "(no slice)"
