package results

import (
	"bytes"
	"encoding/json"
	"github.com/gradegate/gradegate/gate/grading"
	"math"
	"testing"
)

// The spool's fast path writes every row it takes exactly as the slow path
// (the row's MarshalJSON, indented in the document) does, and leaves every
// other row to it.
func TestAppendCaseIndented(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	h := func(v int) *int { return &v }
	base := CaseResult{CaseID: "case-1", Slices: []string{"refunds"}, Status: StatusPass, Class: grading.ClassOK, Score: f(1),
		Scores: map[string]float64{"score": 1}, DurationMS: 0.033, SampleSHA256: "52c4f44b", Line: 7}
	with := func(change func(*CaseResult)) CaseResult {
		c := base
		change(&c)
		return c
	}
	tests := []struct {
		name string
		row  CaseResult
		fast bool
	}{
		{"graded", base, true},
		{"omitted", CaseResult{CaseID: "c", Slices: []string{}, Status: StatusOmitted, Reason: "missing_sample", Line: 2}, true},
		{"nil slices and scores", with(func(c *CaseResult) { c.Slices, c.Scores = nil, nil }), true},
		{"empty scores", with(func(c *CaseResult) { c.Scores = map[string]float64{} }), true},
		{"several slices and scores", with(func(c *CaseResult) {
			c.Slices = []string{"a", "b<&>"}
			c.Scores = map[string]float64{"z": 0.5, "a": -2, "m": 1e-7}
		}), true},
		{"label family output", with(func(c *CaseResult) { c.HumanScore, c.Family, c.Output = h(0), "fam", "printed 3 lines" }), true},
		{"tiny and huge numbers", with(func(c *CaseResult) { c.Score, c.DurationMS = f(1e-9), 1e22 }), true},
		{"negative zero and fractions", with(func(c *CaseResult) { c.Score, c.DurationMS = f(math.Copysign(0, -1)), 123.456789 }), true},
		{"unicode id", with(func(c *CaseResult) { c.CaseID = "café" }), false},
		{"quote in output", with(func(c *CaseResult) { c.Output = `say "hi"` + "\n" }), false},
		{"error", with(func(c *CaseResult) {
			c.Status, c.Class, c.Score = StatusError, grading.ClassGraderException, nil
			c.Error = &grading.CaseError{Class: grading.ClassGraderException, Type: "KeyError", Message: "'x'"}
		}), false},
		{"judge", with(func(c *CaseResult) { c.Judge = json.RawMessage(`{"model":"m"}`) }), false},
		{"not finite", with(func(c *CaseResult) { c.Score = f(math.NaN()) }), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, notFirst := range []bool{false, true} {
				got, ok := appendCaseIndented(nil, notFirst, &tt.row)
				if ok != tt.fast {
					t.Fatalf("fast path taken %v, want %v", ok, tt.fast)
				}
				if !ok {
					continue
				}
				row, err := tt.row.MarshalJSON()
				if err != nil {
					t.Fatal(err)
				}
				var want bytes.Buffer
				if notFirst {
					want.WriteString(",\n")
				}
				want.WriteString(caseIndent)
				if err := json.Indent(&want, row, caseIndent, "  "); err != nil {
					t.Fatal(err)
				}
				if string(got) != want.String() {
					t.Errorf("fast path:\n%s\nslow path:\n%s", got, want.String())
				}
			}
		})
	}
}
