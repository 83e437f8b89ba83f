package verdict

import (
	"context"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

func fptr(f float64) *float64 { return &f }

func TestInRange(t *testing.T) {
	rng := &[2]float64{0, 5}
	tests := []struct {
		name  string
		o     grading.Outcome
		rng   *[2]float64
		class grading.Class
	}{
		{"inside", grading.Outcome{Class: grading.ClassOK, Score: fptr(5)}, rng, grading.ClassOK},
		{"above", grading.Outcome{Class: grading.ClassOK, Score: fptr(5.5)}, rng, grading.ClassInvalidReturn},
		{"below", grading.Outcome{Class: grading.ClassOK, Score: fptr(-0.5)}, rng, grading.ClassInvalidReturn},
		{"no range", grading.Outcome{Class: grading.ClassOK, Score: fptr(7)}, nil, grading.ClassOK},
		{"error untouched", grading.Outcome{Class: grading.ClassTimeout}, rng, grading.ClassTimeout},
	}
	for _, tt := range tests {
		got := grading.InRange(tt.o, tt.rng)
		if got.Class != tt.class {
			t.Errorf("%s: class %s, want %s", tt.name, got.Class, tt.class)
		}
		if tt.class == grading.ClassInvalidReturn && (got.Score != nil || got.Error == nil || !strings.Contains(got.Error.Message, "outside grader.range [0, 5]")) {
			t.Errorf("%s: %+v, want no score and an error naming the range", tt.name, got)
		}
	}
}

type fixedRunner []grading.Outcome

func (f fixedRunner) Grade(context.Context, []grading.Task) ([]grading.Outcome, error) {
	return append([]grading.Outcome(nil), f...), nil
}
func (fixedRunner) Sandbox() grading.Sandbox { return grading.Sandbox{} }

func TestRanged(t *testing.T) {
	r := grading.Ranged(fixedRunner{{Class: grading.ClassOK, Score: fptr(6)}}, &[2]float64{0, 5})
	out, err := r.Grade(context.Background(), []grading.Task{{ID: "a"}})
	if err != nil || out[0].Class != grading.ClassInvalidReturn {
		t.Fatalf("Grade = %+v, %v; want invalid_return", out, err)
	}
	if _, ok := grading.Ranged(fixedRunner{}, nil).(fixedRunner); !ok {
		t.Error("Ranged with no range wraps the runner")
	}
}

func TestFillCase(t *testing.T) {
	raised := grading.Outcome{Class: grading.ClassGraderException, Error: &grading.CaseError{Type: "TypeError", Message: "'NoneType' object is not subscriptable", Line: 7}}
	five := manifest.Grader{Metric: "score", PassThreshold: 5}
	zero := five
	zero.OnException = manifest.OnExceptionZero
	tests := []struct {
		name   string
		o      grading.Outcome
		g      manifest.Grader
		status string
		score  *float64
	}{
		{"pass at threshold", grading.Outcome{Class: grading.ClassOK, Score: fptr(5), Scores: map[string]float64{"score": 5}}, five, results.StatusPass, fptr(5)},
		{"fail below", grading.Outcome{Class: grading.ClassOK, Score: fptr(4), Scores: map[string]float64{"score": 4}}, five, results.StatusFail, fptr(4)},
		{"raise holds by default", raised, five, results.StatusError, nil},
		{"raise graded zero", raised, zero, results.StatusFail, fptr(0)},
		{"timeout stays an error under zero", grading.Outcome{Class: grading.ClassTimeout}, zero, results.StatusError, nil},
		{"a preprocessor's raise stays an error under zero", grading.Outcome{Class: grading.ClassGraderException, Preprocess: true,
			Error: &grading.CaseError{Type: "KeyError", Message: "'question' (raised in the preprocessor, preprocess.py line 2)"}}, zero, results.StatusError, nil},
		{"a dropped row is omitted", grading.Outcome{Omitted: results.OmittedPreprocessedOut}, five, results.StatusOmitted, nil},
	}
	for _, tt := range tests {
		var row results.CaseResult
		FillCase(&row, tt.o, tt.g)
		if row.Status != tt.status || (row.Score == nil) != (tt.score == nil) || (row.Score != nil && *row.Score != *tt.score) {
			t.Errorf("%s: status %s score %v, want %s %v", tt.name, row.Status, row.Score, tt.status, tt.score)
		}
		if tt.o.Omitted != "" && row.Reason != tt.o.Omitted {
			t.Errorf("%s: reason %q, want %q", tt.name, row.Reason, tt.o.Omitted)
		}
		if row.Class != tt.o.Class {
			t.Errorf("%s: class %s, want the outcome's %s", tt.name, row.Class, tt.o.Class)
		}
		if tt.o.Error != nil && (row.Error == nil || row.Error.Line != tt.o.Error.Line) {
			t.Errorf("%s: error %+v, want the outcome's", tt.name, row.Error)
		}
	}
}

func TestExpectErrorOnlyOwnRaise(t *testing.T) {
	c := manifest.Canary{Name: "corrupt", ExpectError: true}
	tests := []struct {
		name string
		o    grading.Outcome
		pass bool
		msg  string
	}{
		{"own raise", grading.Outcome{Class: grading.ClassGraderException, Error: &grading.CaseError{Type: "KeyError", Message: "'total'", Line: 4}}, true, "raised as expected"},
		{"load failure", grading.Outcome{Class: grading.ClassGraderException, LoadFailed: true, Error: &grading.CaseError{Type: "ModuleNotFoundError", Message: "No module named 'rapidfuzz'", Line: 1}}, false, "failed to load"},
		{"import in grade", grading.Outcome{Class: grading.ClassGraderException, Error: &grading.CaseError{Type: "ModuleNotFoundError", Message: "No module named 'x'", Line: 9}}, false, "an import failed"},
		{"model grader template error", grading.Outcome{Class: grading.ClassGraderException, Error: &grading.CaseError{Type: "TemplateError", Message: "{{item.reference}} is missing"}}, true, "raised as expected"},
		{"no raise", grading.Outcome{Class: grading.ClassOK, Score: fptr(0)}, false, "did not raise"},
		{"the preprocessor's raise", grading.Outcome{Class: grading.ClassGraderException, Preprocess: true, Error: &grading.CaseError{Type: "KeyError", Message: "'answer' (raised in the preprocessor, preprocess.py line 3)"}}, false, "the preprocessor raised"},
		{"dropped by the preprocessor", grading.Outcome{Omitted: results.OmittedPreprocessedOut}, false, "the preprocessor dropped the canary's row"},
	}
	for _, tt := range tests {
		res := grading.EvaluateCanary(c, 1, tt.o)
		if res.Passed() != tt.pass || !strings.Contains(res.Message, tt.msg) {
			t.Errorf("%s: %s %q, want pass=%v and %q", tt.name, res.Status, res.Message, tt.pass, tt.msg)
		}
	}
}

func TestDecideListsZeroedExceptions(t *testing.T) {
	zero := 0.0
	cases := []results.CaseResult{
		{CaseID: "a", Status: results.StatusFail, Class: grading.ClassGraderException, Score: &zero, Error: &grading.CaseError{Class: grading.ClassGraderException, Type: "TypeError", Message: "bad", Line: 7}},
		{CaseID: "b", Status: results.StatusPass, Class: grading.ClassOK, Score: fptr(1)},
	}
	v := Decide(manifest.Gate{MinPassRate: 0.5}, Evidence{Cases: cases})
	if v.Counts.Failed != 1 || v.Counts.Errored != 0 {
		t.Errorf("counts %+v, want the zeroed case as a fail", v.Counts)
	}
	var found bool
	for _, w := range v.Warnings {
		if w.Code == WarnExceptionsGradedZero {
			found = strings.Contains(w.Message, "1 case raised") && strings.Contains(w.Message, "a (TypeError: bad (grader line 7))")
			if !found {
				t.Errorf("warning %q", w.Message)
			}
		}
	}
	if !found {
		t.Errorf("warnings %+v, want %s", v.Warnings, WarnExceptionsGradedZero)
	}
}

func TestScaleFindings(t *testing.T) {
	cases := []results.CaseResult{
		{CaseID: "a", Class: grading.ClassOK, Score: fptr(5)},
		{CaseID: "b", Class: grading.ClassOK, Score: fptr(0.5)},
		{CaseID: "c", Class: grading.ClassOK, Score: fptr(-0.5)},
	}
	m := &manifest.Manifest{Grader: manifest.Grader{Type: "python"}}
	got := ScaleFindings(m, cases)
	if len(got) != 1 || got[0].Severity != manifest.SeverityWarn || !strings.Contains(got[0].Message, "2 cases scored outside [0, 1] (from -0.5 to 5)") || !strings.Contains(got[0].Message, "(a, c)") {
		t.Errorf("ScaleFindings = %+v", got)
	}
	m.Grader.Range = &[2]float64{-1, 5}
	if got := ScaleFindings(m, cases); len(got) != 0 {
		t.Errorf("with a range: %+v, want none", got)
	}
	m.Grader.Range = nil
	if got := ScaleFindings(m, cases[1:2]); len(got) != 0 {
		t.Errorf("unit scores: %+v, want none", got)
	}
}

// TestSliceNothingGraded checks that a slice whose cases all errored shows
// warn, not pass: it has no rate to pass with.
func TestSliceNothingGraded(t *testing.T) {
	cases := []results.CaseResult{
		{CaseID: "a", Slices: []string{"tone"}, Status: results.StatusError, Class: grading.ClassTimeout, Error: &grading.CaseError{Class: grading.ClassTimeout, Message: "timeout"}},
		{CaseID: "b", Slices: []string{"math"}, Status: results.StatusPass, Class: grading.ClassOK, Score: fptr(1)},
	}
	v := Decide(manifest.Gate{MinPassRate: 0.5, MaxErrors: 5}, Evidence{Cases: cases})
	for _, s := range v.Slices {
		want := results.StatusPass
		if s.Name == "tone" {
			want = StatusWarn
		}
		if s.Status != want {
			t.Errorf("slice %s: status %s, want %s", s.Name, s.Status, want)
		}
	}
	var found bool
	for _, w := range v.Warnings {
		found = found || (w.Code == WarnSliceTooSmall && strings.Contains(w.Message, `slice "tone" graded no case (1 errored, 0 omitted)`))
	}
	if !found {
		t.Errorf("warnings %+v, want tone's", v.Warnings)
	}
}

func TestGatingScore(t *testing.T) {
	raised := grading.Outcome{Class: grading.ClassGraderException}
	hold := manifest.Grader{}
	zero := manifest.Grader{OnException: manifest.OnExceptionZero}
	if _, ok := grading.GatingScore(hold, raised); ok {
		t.Error("hold: a raise has a score")
	}
	if s, ok := grading.GatingScore(zero, raised); !ok || s != 0 {
		t.Errorf("zero: a raise scores %g, %v; want 0", s, ok)
	}
	if _, ok := grading.GatingScore(zero, grading.Outcome{Class: grading.ClassTimeout}); ok {
		t.Error("zero: a timeout has a score")
	}
	if s, ok := grading.GatingScore(hold, grading.Outcome{Class: grading.ClassOK, Score: fptr(3)}); !ok || s != 3 {
		t.Errorf("ok: %g, %v", s, ok)
	}
}
