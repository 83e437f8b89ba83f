package verdict

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/digest"
	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/gate/stats"
	"github.com/gradegate/gradegate/manifest"
)

// caseOpt changes a hand-built case row.
type caseOpt func(*results.CaseResult)

func in(slices ...string) caseOpt { return func(c *results.CaseResult) { c.Slices = slices } }
func fam(f string) caseOpt        { return func(c *results.CaseResult) { c.Family = f } }
func label(l int) caseOpt         { return func(c *results.CaseResult) { c.HumanScore = &l } }

// row builds a case row with a status as Run would set it.
func row(id, status string, opts ...caseOpt) results.CaseResult {
	c := results.CaseResult{CaseID: id, Status: status, Slices: []string{}}
	switch status {
	case results.StatusPass:
		c.Class, c.Score = grading.ClassOK, ptr(1.0)
	case results.StatusFail:
		c.Class, c.Score = grading.ClassOK, ptr(0.0)
	case results.StatusError:
		c.Class = grading.ClassGraderException
		c.Error = &grading.CaseError{Class: grading.ClassGraderException, Type: "KeyError", Message: "'total'"}
	case results.StatusOmitted:
		c.Reason = results.OmittedMissingSample
	}
	for _, o := range opts {
		o(&c)
	}
	return c
}

func ptr[T any](v T) *T { return &v }

// rows builds n rows named prefix-1..n.
func rows(prefix, status string, n int, opts ...caseOpt) []results.CaseResult {
	var out []results.CaseResult
	for i := 1; i <= n; i++ {
		out = append(out, row(fmt.Sprintf("%s-%d", prefix, i), status, opts...))
	}
	return out
}

func cat(parts ...[]results.CaseResult) []results.CaseResult { return slices.Concat(parts...) }

func passingCanaries() []results.CanaryResult {
	return []results.CanaryResult{
		{Name: "pos", Expect: ptr(1.0), Got: ptr(1.0), Class: grading.ClassOK, Status: results.StatusPass},
		{Name: "neg", Expect: ptr(0.0), Got: ptr(0.0), Class: grading.ClassOK, Status: results.StatusPass},
	}
}

func baseGate() manifest.Gate { return manifest.Gate{MinPassRate: 1, Aggregation: "row"} }

func gateWith(f func(*manifest.Gate)) manifest.Gate {
	g := baseGate()
	f(&g)
	return g
}

func mandatory(name string, minPass float64, minCases int) manifest.SliceRule {
	return manifest.SliceRule{Name: name, Mandatory: true, MinPassRate: minPass, MinCases: minCases}
}

func TestDecide(t *testing.T) {
	tests := []struct {
		name     string
		gate     manifest.Gate
		ev       Evidence
		reasons  []string // reason codes, in order
		warnings []string // warning codes that must be among the warnings
		counts   *results.Counts
		check    func(t *testing.T, v Verdict)
	}{
		{
			name:   "everything passes",
			gate:   baseGate(),
			ev:     Evidence{Cases: rows("a", results.StatusPass, 3), Canaries: passingCanaries()},
			counts: &results.Counts{Intended: 3, Graded: 3, Passed: 3},
			check: func(t *testing.T, v Verdict) {
				if v.Overall.Status != results.VerdictPass || *v.Overall.PassRate != 1 {
					t.Errorf("overall = %+v", v.Overall)
				}
			},
		},

		// digest_mismatch
		{
			name: "digest mismatch holds",
			gate: baseGate(),
			ev: Evidence{Cases: rows("a", results.StatusPass, 1), DigestMismatches: []digest.DigestMismatch{
				{Name: "grader", File: "evals/x/grader.py", Key: "grader.sha256", Want: "sha256:aa", Got: "sha256:bb"},
			}},
			reasons: []string{results.ReasonDigestMismatch},
			check: func(t *testing.T, v Verdict) {
				r := v.Reasons[0]
				for _, want := range []string{"evals/x/grader.py", "grader.sha256", "sha256:aa", "sha256:bb"} {
					if !strings.Contains(r.Message, want) {
						t.Errorf("message %q lacks %q", r.Message, want)
					}
				}
				if r.File != "evals/x/grader.py" {
					t.Errorf("file = %q", r.File)
				}
			},
		},
		{
			name: "missing required pin holds",
			gate: baseGate(),
			ev: Evidence{Cases: rows("a", results.StatusPass, 1), DigestMismatches: []digest.DigestMismatch{
				{Name: "dataset", File: "cases.jsonl", Key: "dataset.sha256", Got: "sha256:bb"},
			}},
			reasons: []string{results.ReasonDigestMismatch},
		},

		// canary_failed
		{
			name: "failed canary holds and is named",
			gate: baseGate(),
			ev: Evidence{Cases: rows("a", results.StatusPass, 1), Canaries: []results.CanaryResult{
				passingCanaries()[0],
				{Name: "boolean-total-one-cent", Status: results.StatusFail, Message: "reward 1 differs from expect 0"},
			}},
			reasons: []string{results.ReasonCanaryFailed},
			check: func(t *testing.T, v Verdict) {
				if !strings.Contains(v.Reasons[0].Message, "boolean-total-one-cent") {
					t.Errorf("message %q does not name the canary", v.Reasons[0].Message)
				}
			},
		},
		{
			name:    "passing canaries do not hold",
			gate:    baseGate(),
			ev:      Evidence{Cases: rows("a", results.StatusPass, 1), Canaries: passingCanaries()},
			reasons: nil,
		},

		// dataset_invalid
		{
			name: "hold findings hold, grouped per code with case ids",
			gate: baseGate(),
			ev: Evidence{Cases: rows("a", results.StatusPass, 2), Findings: []manifest.Finding{
				{Code: "duplicate_case_id", Severity: manifest.SeverityHold, File: "cases.jsonl", Line: 4, CaseID: "a-1", Message: "case_id a-1 also on line 2"},
				{Code: "duplicate_case_id", Severity: manifest.SeverityHold, File: "cases.jsonl", Line: 9, CaseID: "a-2", Message: "case_id a-2 also on line 3"},
				{Code: "schema_violation", Severity: manifest.SeverityHold, File: "cases.jsonl", Line: 5, CaseID: "a-2", Message: "missing expected_total_cents"},
			}},
			reasons: []string{results.ReasonDatasetInvalid, results.ReasonDatasetInvalid},
			check: func(t *testing.T, v Verdict) {
				if got := v.Reasons[0].CaseIDs; !slices.Equal(got, []string{"a-1", "a-2"}) {
					t.Errorf("case ids = %v", got)
				}
				if !strings.Contains(v.Reasons[0].Message, "2 duplicate_case_id findings") {
					t.Errorf("message = %q", v.Reasons[0].Message)
				}
			},
		},
		{
			name: "warn findings only warn",
			gate: baseGate(),
			ev: Evidence{Cases: rows("a", results.StatusPass, 2), Findings: []manifest.Finding{
				{Code: "near_duplicate", Severity: manifest.SeverityWarn, File: "cases.jsonl", Line: 3, CaseID: "a-2", Message: "near a-1"},
			}},
			reasons:  nil,
			warnings: []string{"near_duplicate"},
		},
		{
			name: "require_controls: mandatory slice without a negative label",
			gate: gateWith(func(g *manifest.Gate) {
				g.RequireControls = true
				g.Slices = []manifest.SliceRule{mandatory("ship", 0, 0)}
			}),
			ev:      Evidence{Cases: cat(rows("a", results.StatusPass, 2, in("ship"), label(1)))},
			reasons: []string{results.ReasonDatasetInvalid},
			check: func(t *testing.T, v Verdict) {
				r := v.Reasons[0]
				if r.Slice != "ship" || !strings.Contains(r.Message, "no case labelled human_score 0") {
					t.Errorf("reason = %+v", r)
				}
				if v.Slices[0].Status != results.VerdictHold {
					t.Errorf("slice status = %q", v.Slices[0].Status)
				}
			},
		},
		{
			name: "require_controls: both labels present",
			gate: gateWith(func(g *manifest.Gate) {
				g.MinPassRate = 0
				g.RequireControls = true
				g.Slices = []manifest.SliceRule{mandatory("ship", 0, 0)}
			}),
			ev: Evidence{Cases: cat(
				rows("a", results.StatusPass, 1, in("ship"), label(1)),
				rows("b", results.StatusFail, 1, in("ship"), label(0)),
			)},
			reasons: nil,
		},
		{
			name: "require_controls off: one label is fine",
			gate: gateWith(func(g *manifest.Gate) {
				g.Slices = []manifest.SliceRule{mandatory("ship", 0, 0)}
			}),
			ev:      Evidence{Cases: rows("a", results.StatusPass, 2, in("ship"), label(1))},
			reasons: nil,
		},
		{
			name: "require_controls replaces the loader's missing_controls finding",
			gate: gateWith(func(g *manifest.Gate) {
				g.RequireControls = true
				g.Slices = []manifest.SliceRule{mandatory("ship", 0, 0)}
			}),
			ev: Evidence{
				Cases:    rows("a", results.StatusPass, 2, in("ship"), label(1)),
				Findings: []manifest.Finding{{Code: "missing_controls", Severity: manifest.SeverityHold, Message: "slice ship: every labelled case is 1"}},
			},
			reasons: []string{results.ReasonDatasetInvalid},
		},

		// omitted_cases
		{
			name:    "more omitted than max_omitted",
			gate:    baseGate(),
			ev:      Evidence{Cases: cat(rows("a", results.StatusPass, 2), rows("m", results.StatusOmitted, 1))},
			reasons: []string{results.ReasonOmittedCases},
			counts:  &results.Counts{Intended: 3, Graded: 2, Passed: 2, Omitted: 1},
			check: func(t *testing.T, v Verdict) {
				if !strings.Contains(v.Reasons[0].Message, "1 missing_sample (m-1)") {
					t.Errorf("message = %q", v.Reasons[0].Message)
				}
			},
		},
		{
			name:     "omitted within max_omitted warns",
			gate:     gateWith(func(g *manifest.Gate) { g.MaxOmitted = 1 }),
			ev:       Evidence{Cases: cat(rows("a", results.StatusPass, 2), rows("m", results.StatusOmitted, 1))},
			reasons:  nil,
			warnings: []string{WarnOmittedCases},
		},
		{
			name: "any omitted in a mandatory slice holds whatever max_omitted",
			gate: gateWith(func(g *manifest.Gate) {
				g.MaxOmitted = 5
				g.Slices = []manifest.SliceRule{mandatory("ship", 1, 0)}
			}),
			ev:      Evidence{Cases: cat(rows("a", results.StatusPass, 2, in("ship")), rows("m", results.StatusOmitted, 1, in("ship")))},
			reasons: []string{results.ReasonOmittedCases},
			check: func(t *testing.T, v Verdict) {
				if v.Reasons[0].Slice != "ship" {
					t.Errorf("reason = %+v", v.Reasons[0])
				}
			},
		},
		{
			name:    "intended cases not in the dataset are omitted and counted",
			gate:    baseGate(),
			ev:      Evidence{Cases: rows("a", results.StatusPass, 3), NotInDataset: 2},
			reasons: []string{results.ReasonOmittedCases},
			counts:  &results.Counts{Intended: 5, Graded: 3, Passed: 3, Omitted: 2},
			check: func(t *testing.T, v Verdict) {
				msg := v.Reasons[0].Message
				if !strings.Contains(msg, "2 not_in_dataset") || !strings.Contains(msg, "intended_cases is 5 but only 3 rows") {
					t.Errorf("message = %q", msg)
				}
			},
		},
		{
			name:     "more rows than intended warns",
			gate:     baseGate(),
			ev:       Evidence{Cases: rows("a", results.StatusPass, 3), ExtraRows: 1},
			reasons:  nil,
			warnings: []string{WarnIntendedCasesSurplus},
		},

		// unevaluable_cases
		{
			name:    "more errors than max_errors",
			gate:    baseGate(),
			ev:      Evidence{Cases: cat(rows("a", results.StatusPass, 2), rows("e", results.StatusError, 1))},
			reasons: []string{results.ReasonUnevaluableCases},
			counts:  &results.Counts{Intended: 3, Graded: 2, Passed: 2, Errored: 1},
			check: func(t *testing.T, v Verdict) {
				if !strings.Contains(v.Reasons[0].Message, "1 grader_exception (e-1)") {
					t.Errorf("message = %q", v.Reasons[0].Message)
				}
				// An error never leaves the denominator silently, nor counts as a failure.
				if *v.Overall.PassRate != 1 {
					t.Errorf("pass rate = %v", *v.Overall.PassRate)
				}
				// The overall row is judged by max_errors too: its rate passes, the row does not.
				if v.Overall.Status != results.VerdictHold {
					t.Errorf("overall status = %q, want hold", v.Overall.Status)
				}
			},
		},
		{
			name:    "more omitted cases than max_omitted hold the overall row",
			gate:    baseGate(),
			ev:      Evidence{Cases: cat(rows("a", results.StatusPass, 2), rows("o", results.StatusOmitted, 1))},
			reasons: []string{results.ReasonOmittedCases},
			check: func(t *testing.T, v Verdict) {
				if v.Overall.Status != results.VerdictHold {
					t.Errorf("overall status = %q, want hold", v.Overall.Status)
				}
			},
		},
		{
			name:     "errors within max_errors warn",
			gate:     gateWith(func(g *manifest.Gate) { g.MaxErrors = 1 }),
			ev:       Evidence{Cases: cat(rows("a", results.StatusPass, 2), rows("e", results.StatusError, 1))},
			reasons:  nil,
			warnings: []string{WarnUnevaluableCases},
		},
		{
			name: "any error in a mandatory slice holds whatever max_errors",
			gate: gateWith(func(g *manifest.Gate) {
				g.MaxErrors = 5
				g.Slices = []manifest.SliceRule{mandatory("ship", 1, 0)}
			}),
			ev:      Evidence{Cases: cat(rows("a", results.StatusPass, 2, in("ship")), rows("e", results.StatusError, 1, in("ship")))},
			reasons: []string{results.ReasonUnevaluableCases},
		},

		// slice_below_threshold
		{
			name: "mandatory slice below its minimum",
			gate: gateWith(func(g *manifest.Gate) {
				g.MinPassRate = 0.5
				g.Slices = []manifest.SliceRule{mandatory("ship", 1, 0)}
			}),
			ev:      Evidence{Cases: cat(rows("a", results.StatusPass, 3, in("ship")), rows("f", results.StatusFail, 1, in("ship")))},
			reasons: []string{results.ReasonSliceBelowThreshold},
			check: func(t *testing.T, v Verdict) {
				s := v.Slices[0]
				if s.Status != results.VerdictHold || *s.PassRate != 0.75 {
					t.Errorf("slice = %+v", s)
				}
			},
		},
		{
			name: "mandatory slice at its minimum",
			gate: gateWith(func(g *manifest.Gate) {
				g.MinPassRate = 0.5
				g.Slices = []manifest.SliceRule{mandatory("ship", 0.75, 0)}
			}),
			ev:      Evidence{Cases: cat(rows("a", results.StatusPass, 3, in("ship")), rows("f", results.StatusFail, 1, in("ship")))},
			reasons: nil,
		},
		{
			name: "warn_only slice below its minimum warns, never holds",
			gate: gateWith(func(g *manifest.Gate) {
				g.MinPassRate = 0.5
				g.Slices = []manifest.SliceRule{{Name: "tone", MinPassRate: 0.8, WarnOnly: true}}
			}),
			ev:       Evidence{Cases: cat(rows("a", results.StatusPass, 1, in("tone")), rows("f", results.StatusFail, 1, in("tone")))},
			reasons:  nil,
			warnings: []string{WarnSliceBelowThreshold},
			check: func(t *testing.T, v Verdict) {
				if s := v.Slices[0]; s.Status != StatusWarn || !s.WarnOnly {
					t.Errorf("slice = %+v", s)
				}
			},
		},
		{
			name:     "a slice without a rule is reported against the overall minimum, never holds",
			gate:     gateWith(func(g *manifest.Gate) { g.MinPassRate = 0.5 }),
			ev:       Evidence{Cases: cat(rows("a", results.StatusPass, 3), rows("f", results.StatusFail, 2, in("other")))},
			reasons:  nil,
			warnings: []string{WarnSliceBelowThreshold},
			check: func(t *testing.T, v Verdict) {
				if len(v.Slices) != 2 || v.Slices[0].Name != "other" || v.Slices[0].Mandatory || v.Slices[0].Status != StatusWarn {
					t.Errorf("slices = %+v", v.Slices)
				}
				// The rows in no slice are a row of the table too.
				if len(v.Slices) == 2 && (v.Slices[1].Name != NoSlice || v.Slices[1].Intended != 3) {
					t.Errorf("slices = %+v", v.Slices)
				}
			},
		},

		// slice_too_small
		{
			name: "mandatory slice graded fewer than min_cases",
			gate: gateWith(func(g *manifest.Gate) {
				g.MaxErrors = 9
				g.Slices = []manifest.SliceRule{mandatory("ship", 1, 3)}
			}),
			ev:      Evidence{Cases: rows("a", results.StatusPass, 2, in("ship"))},
			reasons: []string{results.ReasonSliceTooSmall},
		},
		{
			name: "mandatory slice graded exactly min_cases",
			gate: gateWith(func(g *manifest.Gate) {
				g.Slices = []manifest.SliceRule{mandatory("ship", 1, 3)}
			}),
			ev:      Evidence{Cases: rows("a", results.StatusPass, 3, in("ship"))},
			reasons: nil,
		},
		{
			name: "mandatory slice vanished from the data",
			gate: gateWith(func(g *manifest.Gate) {
				g.Slices = []manifest.SliceRule{mandatory("ineligible_shipped", 1, 0)}
			}),
			ev:      Evidence{Cases: rows("a", results.StatusPass, 5, in("other"))},
			reasons: []string{results.ReasonSliceTooSmall},
			check: func(t *testing.T, v Verdict) {
				s := v.Slices[0]
				if s.Name != "ineligible_shipped" || s.Intended != 0 || s.Status != results.VerdictHold || s.PassRate != nil {
					t.Errorf("slice = %+v", s)
				}
				if !strings.Contains(v.Reasons[0].Message, "no case in the dataset") {
					t.Errorf("message = %q", v.Reasons[0].Message)
				}
			},
		},
		{
			name: "mandatory slice whose only cases errored graded nothing",
			gate: gateWith(func(g *manifest.Gate) {
				g.Slices = []manifest.SliceRule{mandatory("ship", 1, 0)}
			}),
			ev:      Evidence{Cases: cat(rows("a", results.StatusPass, 2), rows("e", results.StatusError, 1, in("ship")))},
			reasons: []string{results.ReasonUnevaluableCases, results.ReasonUnevaluableCases, results.ReasonSliceTooSmall},
		},
		{
			name: "warn_only slice too small warns",
			gate: gateWith(func(g *manifest.Gate) {
				g.Slices = []manifest.SliceRule{{Name: "tone", MinPassRate: 1, MinCases: 5, WarnOnly: true}}
			}),
			ev:       Evidence{Cases: rows("a", results.StatusPass, 2, in("tone"))},
			reasons:  nil,
			warnings: []string{WarnSliceTooSmall},
		},

		// overall_below_threshold
		{
			name:    "overall below min_pass_rate",
			gate:    gateWith(func(g *manifest.Gate) { g.MinPassRate = 0.95 }),
			ev:      Evidence{Cases: cat(rows("a", results.StatusPass, 18), rows("f", results.StatusFail, 2))},
			reasons: []string{results.ReasonOverallBelowThreshold},
			check: func(t *testing.T, v Verdict) {
				if v.Overall.Status != results.VerdictHold || *v.Overall.PassRate != 0.9 || v.Overall.MinPassRate != 0.95 {
					t.Errorf("overall = %+v", v.Overall)
				}
			},
		},
		{
			name:    "overall exactly at min_pass_rate",
			gate:    gateWith(func(g *manifest.Gate) { g.MinPassRate = 0.95 }),
			ev:      Evidence{Cases: cat(rows("a", results.StatusPass, 19), rows("f", results.StatusFail, 1))},
			reasons: nil,
		},
		{
			name:    "nothing graded holds: no rate was measured",
			gate:    gateWith(func(g *manifest.Gate) { g.MaxOmitted = 10 }),
			ev:      Evidence{Cases: rows("m", results.StatusOmitted, 2)},
			reasons: []string{results.ReasonOverallBelowThreshold},
			check: func(t *testing.T, v Verdict) {
				if v.Overall.PassRate != nil {
					t.Errorf("pass rate = %v, want null", *v.Overall.PassRate)
				}
			},
		},
		{
			name:    "empty dataset holds",
			gate:    baseGate(),
			ev:      Evidence{},
			reasons: []string{results.ReasonOverallBelowThreshold},
		},

		// family aggregation
		{
			name: "row aggregation counts every row",
			gate: gateWith(func(g *manifest.Gate) { g.MinPassRate = 0.6 }),
			ev: Evidence{Cases: cat(
				rows("dup", results.StatusPass, 3, fam("easy")),
				rows("hard", results.StatusFail, 1, fam("hard")),
			)},
			reasons: nil,
			check: func(t *testing.T, v Verdict) {
				if *v.Overall.PassRate != 0.75 {
					t.Errorf("pass rate = %v", *v.Overall.PassRate)
				}
				if v.Overall.Aggregation != results.AggregationRow || v.Overall.Families != 0 {
					t.Errorf("overall aggregation %q over %d families, want row", v.Overall.Aggregation, v.Overall.Families)
				}
			},
		},
		{
			name: "family aggregation counts each family once",
			gate: gateWith(func(g *manifest.Gate) { g.MinPassRate = 0.6; g.Aggregation = "family" }),
			ev: Evidence{Cases: cat(
				rows("dup", results.StatusPass, 3, fam("easy")),
				rows("hard", results.StatusFail, 1, fam("hard")),
			)},
			reasons: []string{results.ReasonOverallBelowThreshold},
			check: func(t *testing.T, v Verdict) {
				if *v.Overall.PassRate != 0.5 {
					t.Errorf("pass rate = %v", *v.Overall.PassRate)
				}
				if v.Overall.Aggregation != results.AggregationFamily || v.Overall.Families != 2 {
					t.Errorf("overall aggregation %q over %d families, want family over 2", v.Overall.Aggregation, v.Overall.Families)
				}
				if !strings.Contains(v.Reasons[0].Message, "each family counts once") {
					t.Errorf("message = %q", v.Reasons[0].Message)
				}
			},
		},
		{
			name: "family score is the mean of its graded rows; no family is its own family",
			gate: gateWith(func(g *manifest.Gate) { g.MinPassRate = 0; g.Aggregation = "family"; g.MaxErrors = 9 }),
			ev: Evidence{Cases: cat(
				rows("f1p", results.StatusPass, 1, fam("f1")),
				rows("f1f", results.StatusFail, 1, fam("f1")),
				rows("f1e", results.StatusError, 1, fam("f1")), // not graded: not in the family's mean
				rows("solo", results.StatusPass, 2),
			)},
			check: func(t *testing.T, v Verdict) {
				// families: f1 = 0.5, solo-1 = 1, solo-2 = 1 → 2.5/3
				if got := *v.Overall.PassRate; got != 0.8333 {
					t.Errorf("pass rate = %v, want 0.8333", got)
				}
				if v.Overall.Families != 3 {
					t.Errorf("families = %d, want 3 (f1 and two rows without a family)", v.Overall.Families)
				}
			},
		},
		{
			name: "family aggregation applies inside slices",
			gate: gateWith(func(g *manifest.Gate) {
				g.MinPassRate = 0
				g.Aggregation = "family"
				g.Slices = []manifest.SliceRule{mandatory("ship", 0.6, 0)}
			}),
			ev: Evidence{Cases: cat(
				rows("dup", results.StatusPass, 3, fam("easy"), in("ship")),
				rows("hard", results.StatusFail, 1, fam("hard"), in("ship")),
			)},
			reasons: []string{results.ReasonSliceBelowThreshold},
		},
		{
			name: "family means of thirds meet a minimum they equal",
			gate: gateWith(func(g *manifest.Gate) { g.MinPassRate = 2.0 / 3; g.Aggregation = "family" }),
			ev: Evidence{Cases: cat(
				rows("x", results.StatusPass, 2, fam("x")), rows("xf", results.StatusFail, 1, fam("x")),
				rows("y", results.StatusPass, 2, fam("y")), rows("yf", results.StatusFail, 1, fam("y")),
				rows("z", results.StatusPass, 2, fam("z")), rows("zf", results.StatusFail, 1, fam("z")),
			)},
			reasons: nil,
		},

		// false_pass
		{
			name: "false pass in a mandatory slice over the allowance",
			gate: gateWith(func(g *manifest.Gate) {
				g.Slices = []manifest.SliceRule{mandatory("ship", 0, 0)}
			}),
			ev: Evidence{Cases: cat(
				rows("ok", results.StatusPass, 2, in("ship"), label(1)),
				rows("fp", results.StatusPass, 1, in("ship"), label(0)),
			)},
			reasons: []string{results.ReasonFalsePass},
			check: func(t *testing.T, v Verdict) {
				if v.Slices[0].FalsePass != 1 {
					t.Errorf("slice = %+v", v.Slices[0])
				}
			},
		},
		{
			name: "false pass within the allowances",
			gate: gateWith(func(g *manifest.Gate) {
				g.Calibration.MaxFalsePass = 1
				g.Calibration.MandatoryMaxFalsePass = ptr(1)
				g.Slices = []manifest.SliceRule{mandatory("ship", 0, 0)}
			}),
			ev:       Evidence{Cases: rows("fp", results.StatusPass, 1, in("ship"), label(0))},
			reasons:  nil,
			warnings: []string{WarnFalsePass},
			check: func(t *testing.T, v Verdict) {
				if !slices.ContainsFunc(v.Warnings, func(w results.Warning) bool { return strings.Contains(w.Message, "fp-1") }) {
					t.Errorf("warnings %+v do not name the false pass", v.Warnings)
				}
			},
		},
		{
			name: "a mandatory slice is stricter than max_false_pass by default",
			gate: gateWith(func(g *manifest.Gate) {
				g.Calibration.MaxFalsePass = 1
				g.Slices = []manifest.SliceRule{mandatory("ship", 0, 0)}
			}),
			ev:      Evidence{Cases: rows("fp", results.StatusPass, 1, in("ship"), label(0))},
			reasons: []string{results.ReasonFalsePass},
		},
		{
			name: "false passes in a slice without a rule hold",
			gate: gateWith(func(g *manifest.Gate) {
				g.MinPassRate = 0
				g.Slices = []manifest.SliceRule{mandatory("ship", 0, 0)}
			}),
			ev: Evidence{Cases: cat(
				rows("ok", results.StatusPass, 2, in("ship"), label(1)),
				rows("fp", results.StatusPass, 2, in("totals"), label(0)),
			)},
			reasons: []string{results.ReasonFalsePass},
			check: func(t *testing.T, v Verdict) {
				r := v.Reasons[0]
				if r.Slice != "totals" || !slices.Equal(r.CaseIDs, []string{"fp-1", "fp-2"}) {
					t.Errorf("reason = %+v, want slice totals naming fp-1 and fp-2", r)
				}
			},
		},
		{
			name:    "false passes in no slice hold overall",
			gate:    baseGate(),
			ev:      Evidence{Cases: rows("fp", results.StatusPass, 1, label(0))},
			reasons: []string{results.ReasonFalsePass},
		},
		{
			name: "a false pass in a warn_only slice warns there and holds overall",
			gate: gateWith(func(g *manifest.Gate) {
				g.Slices = []manifest.SliceRule{{Name: "tone", WarnOnly: true}}
			}),
			ev:       Evidence{Cases: rows("fp", results.StatusPass, 1, in("tone"), label(0))},
			reasons:  []string{results.ReasonFalsePass},
			warnings: []string{WarnFalsePass},
		},
		{
			name: "false fails over max_false_fail hold",
			gate: gateWith(func(g *manifest.Gate) {
				g.MinPassRate = 0
				g.Calibration.MaxFalseFail = ptr(1)
				g.Slices = []manifest.SliceRule{mandatory("ship", 0, 0)}
			}),
			ev:      Evidence{Cases: rows("ff", results.StatusFail, 2, in("ship"), label(1))},
			reasons: []string{results.ReasonFalseFail},
		},
		{
			name: "false fails are counted, and hold only under max_false_fail",
			gate: gateWith(func(g *manifest.Gate) {
				g.MinPassRate = 0
				g.Slices = []manifest.SliceRule{mandatory("ship", 0, 0)}
			}),
			ev:      Evidence{Cases: rows("ff", results.StatusFail, 2, in("ship"), label(1))},
			reasons: nil,
			check: func(t *testing.T, v Verdict) {
				if s := v.Slices[0]; s.FalseFail != 2 || s.FalsePass != 0 {
					t.Errorf("slice = %+v", s)
				}
			},
		},

		// mutants_survived (hook)
		{
			name:    "mutation score below the minimum",
			gate:    gateWith(func(g *manifest.Gate) { g.MinMutationScore = ptr(0.9) }),
			ev:      Evidence{Cases: rows("a", results.StatusPass, 1), MutationScore: ptr(0.8)},
			reasons: []string{results.ReasonMutantsSurvived},
		},
		{
			name:    "mutation score meets the minimum",
			gate:    gateWith(func(g *manifest.Gate) { g.MinMutationScore = ptr(0.9) }),
			ev:      Evidence{Cases: rows("a", results.StatusPass, 1), MutationScore: ptr(0.9)},
			reasons: nil,
		},
		{
			name:     "mutation score not measured warns",
			gate:     gateWith(func(g *manifest.Gate) { g.MinMutationScore = ptr(0.9) }),
			ev:       Evidence{Cases: rows("a", results.StatusPass, 1)},
			reasons:  nil,
			warnings: []string{WarnMutationNotMeasured},
		},

		// grader_lint (hook)
		{
			name: "hold lint finding holds as grader_lint",
			gate: baseGate(),
			ev: Evidence{Cases: rows("a", results.StatusPass, 1), Findings: []manifest.Finding{
				{Code: "grade_signature", Severity: manifest.SeverityHold, File: "grader.py", Line: 3, Message: "grade takes 3 parameters"},
			}},
			reasons: []string{results.ReasonGraderLint},
		},
		{
			name: "warn lint finding warns",
			gate: baseGate(),
			ev: Evidence{Cases: rows("a", results.StatusPass, 1), Findings: []manifest.Finding{
				{Code: "broad_except_constant", Severity: manifest.SeverityWarn, File: "grader.py", Line: 9, Message: "except Exception: return 1.0"},
			}},
			reasons:  nil,
			warnings: []string{"broad_except_constant"},
		},

		// several at once, root cause first
		{
			name: "reasons come root cause first",
			gate: gateWith(func(g *manifest.Gate) {
				g.MinPassRate = 0.9
				g.Slices = []manifest.SliceRule{mandatory("ship", 1, 0)}
			}),
			ev: Evidence{
				Cases: cat(rows("f", results.StatusFail, 1, in("ship")), rows("e", results.StatusError, 1), rows("a", results.StatusPass, 1)),
				Findings: []manifest.Finding{
					{Code: "grade_signature", Severity: manifest.SeverityHold, Message: "x"},
					{Code: "missing_field", Severity: manifest.SeverityHold, Message: "y"},
				},
				Canaries:         []results.CanaryResult{{Name: "neg", Status: results.StatusFail}},
				DigestMismatches: []digest.DigestMismatch{{Name: "grader", Want: "sha256:a", Got: "sha256:b"}},
			},
			reasons: []string{
				results.ReasonDigestMismatch, results.ReasonDatasetInvalid, results.ReasonGraderLint, results.ReasonCanaryFailed, results.ReasonUnevaluableCases,
				results.ReasonSliceBelowThreshold, results.ReasonOverallBelowThreshold,
			},
		},

		// shards
		{
			name: "a shard defers rates, sizes and controls to merge",
			gate: gateWith(func(g *manifest.Gate) {
				g.MinPassRate = 0.9
				g.RequireControls = true
				g.Slices = []manifest.SliceRule{mandatory("ship", 1, 3), mandatory("gone", 1, 0)}
			}),
			ev: Evidence{
				Shard: shard.Shard{Index: 2, Count: 4},
				Cases: cat(rows("a", results.StatusPass, 1, in("ship"), label(1)), rows("f", results.StatusFail, 1, in("ship"), label(1))),
			},
			reasons:  nil,
			warnings: []string{WarnPartialShard, WarnSliceBelowThreshold, WarnSliceTooSmall, WarnMissingControls, WarnOverallBelow},
			check: func(t *testing.T, v Verdict) {
				if v.Overall.Status != StatusWarn {
					t.Errorf("overall = %+v", v.Overall)
				}
				for _, s := range v.Slices {
					if s.Status != StatusWarn {
						t.Errorf("slice %s status = %q, want warn", s.Name, s.Status)
					}
				}
			},
		},
		{
			name: "a shard still holds what the union must hold",
			gate: gateWith(func(g *manifest.Gate) {
				g.MinPassRate = 0
				g.Slices = []manifest.SliceRule{mandatory("ship", 0, 0)}
			}),
			ev: Evidence{
				Shard: shard.Shard{Index: 1, Count: 2},
				Cases: cat(
					rows("o", results.StatusOmitted, 1),
					rows("e", results.StatusError, 1, in("ship")),
					rows("fp", results.StatusPass, 1, in("ship"), label(0)),
				),
				Canaries: []results.CanaryResult{{Name: "neg", Status: results.StatusFail}},
			},
			reasons: []string{results.ReasonCanaryFailed, results.ReasonOmittedCases, results.ReasonUnevaluableCases, results.ReasonUnevaluableCases, results.ReasonFalsePass},
		},

		// modes
		{
			name: "canaries only: no case rules",
			gate: gateWith(func(g *manifest.Gate) {
				g.Slices = []manifest.SliceRule{mandatory("ship", 1, 3)}
			}),
			ev:      Evidence{CanariesOnly: true, Canaries: passingCanaries()},
			reasons: nil,
			counts:  &results.Counts{},
			check: func(t *testing.T, v Verdict) {
				if v.Overall.Status != StatusSkipped || len(v.Slices) != 0 {
					t.Errorf("overall = %+v, slices = %+v", v.Overall, v.Slices)
				}
			},
		},
		{
			name:     "unsandboxed warns, a pass stays a pass",
			gate:     baseGate(),
			ev:       Evidence{Cases: rows("a", results.StatusPass, 1), Unsandboxed: true},
			reasons:  nil,
			warnings: []string{WarnUnsandboxed},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Decide(tt.gate, tt.ev)
			var codes []string
			for _, r := range v.Reasons {
				codes = append(codes, r.Code)
			}
			if !slices.Equal(codes, tt.reasons) {
				t.Errorf("reasons = %v, want %v\n%s", codes, tt.reasons, dump(v.Reasons))
			}
			wantVerdict := results.VerdictPass
			if len(tt.reasons) > 0 {
				wantVerdict = results.VerdictHold
			}
			if v.Verdict != wantVerdict {
				t.Errorf("verdict = %q, want %q", v.Verdict, wantVerdict)
			}
			var warned []string
			for _, w := range v.Warnings {
				warned = append(warned, w.Code)
			}
			for _, w := range tt.warnings {
				if !slices.Contains(warned, w) {
					t.Errorf("warnings %v lack %q\n%s", warned, w, dump(v.Warnings))
				}
			}
			if tt.counts != nil && v.Counts != *tt.counts {
				t.Errorf("counts = %+v, want %+v", v.Counts, *tt.counts)
			}
			checkInvariants(t, v)
			if tt.check != nil {
				tt.check(t, v)
			}
		})
	}
}

// checkInvariants checks what must hold for every verdict: counts add up
// overall and per slice, the slice table is ordered, and every list is
// non-nil so the JSON says [].
func checkInvariants(t *testing.T, v Verdict) {
	t.Helper()
	addsUp := func(what string, c results.Counts) {
		if c.Intended != c.Graded+c.Errored+c.Omitted || c.Graded != c.Passed+c.Failed {
			t.Errorf("%s counts do not add up: %+v", what, c)
		}
	}
	addsUp("overall", v.Counts)
	for _, s := range v.Slices {
		addsUp("slice "+s.Name, s.Counts)
		if s.Status != results.VerdictPass && s.Status != results.VerdictHold && s.Status != StatusWarn {
			t.Errorf("slice %s status %q", s.Name, s.Status)
		}
	}
	table := v.Slices
	if n := len(table); n > 0 && table[n-1].Name == NoSlice {
		table = table[:n-1] // the rows in no slice come last
	}
	if !slices.IsSortedFunc(table, func(a, b results.SliceResult) int {
		if a.Mandatory != b.Mandatory {
			if a.Mandatory {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	}) {
		t.Errorf("slices not ordered mandatory first, then by name: %v", dump(v.Slices))
	}
	if v.Reasons == nil || v.Warnings == nil || v.Slices == nil {
		t.Errorf("nil list in %+v", v)
	}
	for _, r := range v.Reasons {
		if r.Message == "" {
			t.Errorf("reason %s has no message", r.Code)
		}
	}
}

func TestDecideSliceTable(t *testing.T) {
	g := gateWith(func(g *manifest.Gate) {
		g.MinPassRate = 0
		g.Slices = []manifest.SliceRule{
			{Name: "tone", MinPassRate: 0.8, WarnOnly: true},
			mandatory("zeta", 0, 0),
			mandatory("alpha", 0, 0),
		}
	})
	v := Decide(g, Evidence{Cases: cat(
		rows("a", results.StatusPass, 1, in("alpha", "zeta", "data-only")),
		rows("b", results.StatusFail, 1, in("zeta")),
		rows("c", results.StatusPass, 1, in("tone")),
	)})
	var names []string
	for _, s := range v.Slices {
		names = append(names, s.Name)
	}
	if want := []string{"alpha", "zeta", "data-only", "tone"}; !slices.Equal(names, want) {
		t.Errorf("slices = %v, want %v", names, want)
	}
	zeta := v.Slices[1]
	if zeta.Intended != 2 || zeta.Passed != 1 || zeta.Failed != 1 || *zeta.PassRate != 0.5 {
		t.Errorf("zeta = %+v", zeta)
	}
	// A case in several slices counts once overall.
	if v.Counts.Intended != 3 {
		t.Errorf("counts = %+v", v.Counts)
	}
}

// TestDecideNoSliceRow checks that rows in no slice get a row of their own
// in the slice table, last, that never holds, and that no such row appears
// when every row has a slice or there is no slice table.
func TestDecideNoSliceRow(t *testing.T) {
	g := gateWith(func(g *manifest.Gate) { g.Slices = []manifest.SliceRule{mandatory("must", 1, 0)} })
	tests := []struct {
		name  string
		cases []results.CaseResult
		want  *results.SliceResult // the (no slice) row; nil: none
	}{
		{
			name:  "rows without a slice are counted, failing ones warn",
			cases: cat(rows("a", results.StatusPass, 2, in("must")), rows("b", results.StatusPass, 1), rows("c", results.StatusFail, 1)),
			want: &results.SliceResult{Name: NoSlice, Counts: results.Counts{Intended: 2, Graded: 2, Passed: 1, Failed: 1},
				PassRate: ptr(0.5), MinPassRate: 1, Status: StatusWarn, CI: &stats.Interval{Lo: 0.0945, Hi: 0.9055}},
		},
		{name: "every row in a slice: no row", cases: rows("a", results.StatusPass, 2, in("must"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Decide(g, Evidence{Cases: tt.cases, Canaries: passingCanaries()})
			var got *results.SliceResult
			for i, s := range v.Slices {
				if s.Name == NoSlice {
					if i != len(v.Slices)-1 {
						t.Errorf("%s is row %d of %d, want last", NoSlice, i+1, len(v.Slices))
					}
					got = &v.Slices[i]
				}
			}
			if (got == nil) != (tt.want == nil) || got != nil && dump(got) != dump(tt.want) {
				t.Errorf("no-slice row = %s, want %s", dump(got), dump(tt.want))
			}
			for _, r := range v.Reasons {
				if r.Slice == NoSlice {
					t.Errorf("reason %s: the row never holds", dump(r))
				}
			}
		})
	}
	// Without a slice table there is no row to add.
	v := Decide(baseGate(), Evidence{Cases: rows("a", results.StatusPass, 2), Canaries: passingCanaries()})
	if len(v.Slices) != 0 {
		t.Errorf("slices = %s, want none", dump(v.Slices))
	}
}

func TestShownRate(t *testing.T) {
	tests := []struct {
		name      string
		rate, min float64
		want      float64
	}{
		{"rounds to four decimals", 230.0 / 238, 0.95, 0.9664},
		{"never rounds up onto a minimum it misses", 0.94996, 0.95, 0.9499},
		{"exact minimum stays", 0.95, 0.95, 0.95},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := shown(tt.rate, tt.min); got != tt.want {
				t.Errorf("shown(%v, %v) = %v, want %v", tt.rate, tt.min, got, tt.want)
			}
		})
	}
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}
