package render

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gradegate/gradegate/gate/digest"
	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/manifest"
)

// The fixtures describe the order-summary suite: 36 cases in four slices,
// graded by order_summary_contract_v1 with pass_threshold 1.0.

func f64(v float64) *float64 { return &v }
func intp(v int) *int        { return &v }

// sliceRules returns the fixtures' gate.slices, in manifest order.
func sliceRules() []manifest.SliceRule {
	return []manifest.SliceRule{
		{Name: "ineligible_shipped", Mandatory: true, MinPassRate: 1.0, MinCases: 3},
		{Name: "instruction_conflict", Mandatory: true, MinPassRate: 0.95},
		{Name: "happy_path", MinPassRate: 0.95},
		{Name: "tone", MinPassRate: 0.8, WarnOnly: true},
	}
}

// passingCases returns the 36 cases, every one passing.
func passingCases() []results.CaseResult {
	var cases []results.CaseResult
	line := 1
	add := func(prefix, slice string, n int) {
		for i := 1; i <= n; i++ {
			cases = append(cases, results.CaseResult{
				CaseID:       fmt.Sprintf("%s-%03d", prefix, i),
				Slices:       []string{slice},
				Family:       fmt.Sprintf("%s-family-%d", prefix, (i+1)/2),
				Status:       results.StatusPass,
				Class:        grading.ClassOK,
				Score:        f64(1),
				Scores:       map[string]float64{"score": 1},
				Judge:        json.RawMessage(`{"total_cents":"match","currency":"match"}`),
				HumanScore:   intp(1),
				DurationMS:   1.5 + float64(i)/10,
				SampleSHA256: fmt.Sprintf("sha256:%064x", line),
				Line:         line,
			})
			line++
		}
	}
	add("cancel-shipped", "ineligible_shipped", 8)
	add("conflict", "instruction_conflict", 8)
	add("happy", "happy_path", 12)
	add("tone", "tone", 8)
	return cases
}

// setCase changes the case with the given id.
func setCase(cases []results.CaseResult, id string, change func(*results.CaseResult)) {
	for i := range cases {
		if cases[i].CaseID == id {
			change(&cases[i])
			return
		}
	}
	panic("fixture: no case " + id)
}

func failCase(score float64) func(*results.CaseResult) {
	return func(c *results.CaseResult) {
		c.Status, c.Class = results.StatusFail, grading.ClassOK
		c.Score, c.Scores = f64(score), map[string]float64{"score": score}
	}
}

func errorCase(e grading.CaseError) func(*results.CaseResult) {
	return func(c *results.CaseResult) {
		c.Status, c.Class = results.StatusError, e.Class
		c.Score, c.Scores, c.Judge = nil, nil, nil
		c.Error = &e
	}
}

func omitCase(c *results.CaseResult) {
	c.Status, c.Reason, c.Class = results.StatusOmitted, "missing_sample", ""
	c.Score, c.Scores, c.Judge, c.SampleSHA256 = nil, nil, nil, ""
	c.DurationMS = 0
}

// tally counts the cases in a slice ("" for all of them).
func tally(cases []results.CaseResult, slice string) (results.Counts, *float64) {
	var n results.Counts
	for _, c := range cases {
		if slice != "" && !strings.Contains(","+strings.Join(c.Slices, ",")+",", ","+slice+",") {
			continue
		}
		n.Intended++
		switch c.Status {
		case results.StatusPass:
			n.Graded++
			n.Passed++
		case results.StatusFail:
			n.Graded++
			n.Failed++
		case results.StatusError:
			n.Errored++
		case results.StatusOmitted:
			n.Omitted++
		}
	}
	if n.Graded == 0 {
		return n, nil
	}
	return n, f64(float64(n.Passed) / float64(n.Graded))
}

// build fills counts, the overall line and the slice table from the cases.
// statuses gives each slice's status; a slice not named passes.
func build(cases []results.CaseResult, minPassRate float64, statuses map[string]string) *results.Results {
	res := &results.Results{
		Schema:   results.ResultsSchema,
		Verdict:  results.VerdictPass,
		Reasons:  []results.Reason{},
		Warnings: []results.Warning{},
		Findings: []manifest.Finding{},
		Manifest: results.ManifestRef{Name: "order-summary", Path: "evals/order-summary/gradegate.yaml"},
		Digests: digest.Digests{
			Dataset: "sha256:9f2c4e1d7a0b3c5e8f6a1d2b4c7e9f0a1b3c5d7e9f1a2b4c6d8e0f1a3b5c7d9e",
			Samples: "sha256:4b7e1c9a2d5f8e0b3a6c9d2f5e8b1a4c7d0e3f6a9b2c5d8e1f4a7b0c3d6e9f2a",
			Grader:  "sha256:1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b",
			Rubric:  "sha256:c0ffee0ddba11c0ffee0ddba11c0ffee0ddba11c0ffee0ddba11c0ffee0ddba1",
		},
		Versions: results.Versions{
			DatasetRevision: "2026-11-29",
			RubricVersion:   "order-rubric-2",
			GraderName:      "order_summary_contract_v1",
			ImageTag:        "2025-05-08",
			Gradegate:       "v0.4.0",
		},
		Sandbox:  grading.Sandbox{UID: 60001, Seccomp: true, LandlockABI: 7, Rlimits: true},
		Shard:    shard.Shard{Index: 1, Count: 1},
		Canaries: passingCanaries(),
		Cases:    cases,
	}
	counts, rate := tally(cases, "")
	res.Counts = counts
	res.Overall = results.Overall{PassRate: rate, MinPassRate: minPassRate, Status: results.StatusPass}
	if rate == nil || *rate < minPassRate {
		res.Overall.Status = results.VerdictHold
	}
	for _, rule := range sliceRules() {
		n, r := tally(cases, rule.Name)
		status := statuses[rule.Name]
		if status == "" {
			status = results.StatusPass
		}
		res.Slices = append(res.Slices, results.SliceResult{
			Name: rule.Name, Mandatory: rule.Mandatory, WarnOnly: rule.WarnOnly, Counts: n,
			PassRate: r, MinPassRate: rule.MinPassRate, MinCases: rule.MinCases, Status: status,
		})
	}
	return res
}

func passingCanaries() []results.CanaryResult {
	return []results.CanaryResult{
		{Name: "equivalent-serialization", Expect: f64(1), Got: f64(1), Class: grading.ClassOK, Status: results.StatusPass},
		{Name: "boolean-total-one-cent", Expect: f64(0), Got: f64(0), Class: grading.ClassOK, Status: results.StatusPass},
		{Name: "wrong-currency", Expect: f64(0), Got: f64(0), Class: grading.ClassOK, Status: results.StatusPass},
		{
			Name: "corrupt-fixture", ExpectError: true, Class: grading.ClassGraderException, Status: results.StatusPass,
			Error: &grading.CaseError{Class: grading.ClassGraderException, Type: "KeyError", Message: "'expected_total_cents'", Line: 28},
		},
	}
}

// passResult: everything passes but one tone case, which the tone slice allows.
func passResult() *results.Results {
	cases := passingCases()
	setCase(cases, "tone-004", failCase(0.5))
	return build(cases, 0.95, nil)
}

// holdResult holds for several reasons, with an error of every class, omitted
// cases, a failed canary and a grader lint finding.
func holdResult() *results.Results {
	cases := passingCases()
	setCase(cases, "cancel-shipped-002", failCase(0))
	setCase(cases, "cancel-shipped-005", errorCase(grading.CaseError{
		Class: grading.ClassGraderException, Type: "KeyError", Message: "'expected_total_cents'", Line: 28}))
	setCase(cases, "conflict-003", errorCase(grading.CaseError{
		Class: grading.ClassTimeout, Message: "ran past timeout_seconds (120 s); the process was killed"}))
	setCase(cases, "conflict-006", omitCase)
	setCase(cases, "happy-002", failCase(0))
	setCase(cases, "happy-004", errorCase(grading.CaseError{
		Class: grading.ClassInvalidReturn, Message: "grade returned a str: 'USD|EUR\nmismatch'; a score must be a finite number"}))
	setCase(cases, "happy-007", errorCase(grading.CaseError{
		Class: grading.ClassMemoryExceeded, Message: "the grader process went past memory_mb (2048 MB)"}))
	setCase(cases, "happy-009", errorCase(grading.CaseError{
		Class: grading.ClassSandboxViolation, Type: "PermissionError", Message: "[Errno 1] socket(AF_INET) is not allowed in <lambda>", Line: 12}))
	setCase(cases, "happy-011", errorCase(grading.CaseError{
		Class: grading.ClassWorkerCrash, Message: "the grader process was killed by signal 11 (SIGSEGV)"}))
	setCase(cases, "happy-012", omitCase)
	setCase(cases, "tone-003", failCase(0.5))
	setCase(cases, "tone-006", failCase(0.5))
	setCase(cases, "cancel-shipped-002", func(c *results.CaseResult) {
		c.Judge = json.RawMessage(`{"total_cents":"mismatch"}`)
	})

	res := build(cases, 0.95, map[string]string{
		"ineligible_shipped":   results.VerdictHold,
		"instruction_conflict": results.VerdictHold,
		"happy_path":           "warn",
		"tone":                 "warn",
	})
	res.Slices[0].FalseFail = 1
	res.Verdict = results.VerdictHold
	res.Canaries[1] = results.CanaryResult{
		Name: "boolean-total-one-cent", Expect: f64(0), Got: f64(1), Class: grading.ClassOK, Status: results.StatusFail,
		Message: "expected 0, got 1: the grader accepts true as a total of 1 cent",
	}
	res.Reasons = []results.Reason{
		{Code: results.ReasonCanaryFailed, Message: "canary boolean-total-one-cent: expected 0, got 1"},
		{Code: results.ReasonGraderLint, File: "grader.py", Message: "import of requests is not in image 2025-05-08"},
		{Code: results.ReasonUnevaluableCases, CaseIDs: []string{"cancel-shipped-005", "conflict-003", "happy-004", "happy-007", "happy-009", "happy-011"},
			Message: "6 cases are unevaluable (max_errors 0), 2 of them in mandatory slices"},
		{Code: results.ReasonOmittedCases, CaseIDs: []string{"conflict-006", "happy-012"},
			Message: "2 intended cases were omitted (max_omitted 0), 1 of them in a mandatory slice"},
		{Code: results.ReasonSliceBelowThreshold, Slice: "ineligible_shipped", CaseIDs: []string{"cancel-shipped-002"},
			Message: "pass rate 85.7% is below the minimum 100.0%"},
		{Code: results.ReasonOverallBelowThreshold, Message: "overall pass rate 85.7% is below the minimum 95.0%"},
	}
	res.Warnings = []results.Warning{
		{Code: results.ReasonSliceBelowThreshold, Slice: "tone", Message: "pass rate 75.0% is below 80.0% (warn-only)"},
	}
	res.Findings = []manifest.Finding{
		{Code: "import_not_in_image", Severity: manifest.SeverityHold, File: "grader.py", Line: 3,
			Message: "import requests: requests is not in image 2025-05-08"},
		{Code: "broad_except_constant", Severity: manifest.SeverityWarn, File: "grader.py", Line: 41,
			Message: "except Exception returns the constant 1.0"},
	}
	return res
}

// warnOnlyResult passes while the warn-only tone slice is below its minimum.
func warnOnlyResult() *results.Results {
	cases := passingCases()
	for _, id := range []string{"tone-002", "tone-005", "tone-008"} {
		setCase(cases, id, failCase(0))
	}
	res := build(cases, 0.9, map[string]string{"tone": "warn"})
	res.Warnings = []results.Warning{
		{Code: results.ReasonSliceBelowThreshold, Slice: "tone", Message: "pass rate 62.5% is below 80.0% (warn-only)"},
	}
	return res
}

// unsandboxedResult passes, but graded with --unsandboxed.
func unsandboxedResult() *results.Results {
	res := passResult()
	res.Sandbox = grading.Sandbox{UID: -1, Unsandboxed: true}
	return res
}

// allOmittedResult graded nothing: every sample is missing.
func allOmittedResult() *results.Results {
	cases := passingCases()
	for i := range cases {
		omitCase(&cases[i])
	}
	res := build(cases, 0.95, map[string]string{
		"ineligible_shipped": results.VerdictHold, "instruction_conflict": results.VerdictHold,
		"happy_path": results.VerdictHold, "tone": "warn",
	})
	res.Verdict = results.VerdictHold
	ids := make([]string, len(cases))
	for i, c := range cases {
		ids[i] = c.CaseID
	}
	res.Reasons = []results.Reason{
		{Code: results.ReasonOmittedCases, CaseIDs: ids, Message: "36 intended cases were omitted (max_omitted 0)"},
		{Code: results.ReasonSliceTooSmall, Slice: "ineligible_shipped", Message: "graded 0 cases, fewer than min_cases 3"},
		{Code: results.ReasonOverallBelowThreshold, Message: "nothing was graded"},
	}
	return res
}

type scenario struct {
	name string
	res  func() *results.Results
}

// scenarios returns the fixtures every renderer is tested with.
func scenarios() []scenario {
	return []scenario{
		{"pass", passResult},
		{"hold", holdResult},
		{"warn_only", warnOnlyResult},
		{"unsandboxed", unsandboxedResult},
		{"all_omitted", allOmittedResult},
	}
}
