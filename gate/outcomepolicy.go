package gate

import (
	"context"
	"fmt"

	"github.com/gradegate/gradegate/canary"
	"github.com/gradegate/gradegate/manifest"
)

// How a grader's outcome counts, under the keys a grader written for
// OpenAI's hosted grader sets: grader.range and grader.on_exception.

// InRange turns an ok outcome whose gating score lies outside rng into an
// invalid_return naming the range; any other outcome, or a nil rng, passes
// through unchanged.
func InRange(o Outcome, rng *[2]float64) Outcome {
	if rng == nil || o.Class != ClassOK || o.Score == nil {
		return o
	}
	s := *o.Score
	if s >= rng[0] && s <= rng[1] {
		return o
	}
	o.Class = ClassInvalidReturn
	o.Error = &CaseError{Class: ClassInvalidReturn, Message: fmt.Sprintf("grade returned %g, outside grader.range [%g, %g]", s, rng[0], rng[1])}
	o.Score = nil
	return o
}

// Ranged returns r with InRange applied to every outcome, or r itself when
// rng is nil. A streaming runner stays a streaming runner.
func Ranged(r Runner, rng *[2]float64) Runner {
	if rng == nil {
		return r
	}
	if s, ok := r.(StreamRunner); ok {
		return rangedStream{ranged{s, *rng}, s}
	}
	return ranged{r, *rng}
}

type ranged struct {
	Runner
	rng [2]float64
}

func (x ranged) Grade(ctx context.Context, tasks []Task) ([]Outcome, error) {
	out, err := x.Runner.Grade(ctx, tasks)
	for i := range out {
		out[i] = InRange(out[i], &x.rng)
	}
	return out, err
}

type rangedStream struct {
	ranged
	s StreamRunner
}

func (x rangedStream) Stream(ctx context.Context, next func() (Task, bool, error), emit func(seq int, o Outcome) error) error {
	return x.s.Stream(ctx, next, func(seq int, o Outcome) error {
		return emit(seq, InRange(o, &x.rng))
	})
}

// FillCase sets a graded case row from its outcome: class, output, timing
// and judge always; score, scores and pass or fail at threshold for a valid
// score; the error otherwise. Under on_exception: zero a grader_exception is
// the hosted rule's 0: the row fails with score 0 and keeps its class and
// error, so the report still counts and lists it as a grader exception.
func FillCase(row *CaseResult, o Outcome, g manifest.Grader) {
	row.Class = o.Class
	row.Output = o.Output
	row.DurationMS = o.DurationMS
	row.Judge = o.Judge
	if o.Class != ClassOK {
		row.Error = caseError(o)
		row.Status = StatusError
		if o.Class == ClassGraderException && g.ZeroOnException() {
			zero := 0.0
			row.Score = &zero
			row.Scores = map[string]float64{g.Metric: 0}
			row.Status = StatusFail
			if zero >= g.PassThreshold {
				row.Status = StatusPass
			}
		}
		return
	}
	row.Score = o.Score
	row.Scores = o.Scores
	row.Status = StatusFail
	if *o.Score >= g.PassThreshold {
		row.Status = StatusPass
	}
}

// ownRaise says why a grader_exception is not a raise of the grader's own
// code on the canary's input, or "" when it is: a grader that failed to
// load, or an import that failed (a missing package is not the fixture
// error an expect_error canary is written for). A Python grader's raise
// during grade() always has a line of the grader's file in its traceback;
// a model grader's (a prompt template that cannot be filled) has none.
func ownRaise(o Outcome) string {
	e := o.Error
	switch {
	case o.LoadFailed:
		return "the grader failed to load (" + errorText(e) + "), which is not a raise on this input"
	case e == nil:
		return "the outcome names no exception"
	case e.Type == "ImportError" || e.Type == "ModuleNotFoundError":
		return "an import failed (" + errorText(e) + "); a missing module is not a raise on this input"
	}
	return ""
}

// evaluateExpectError fails an expect_error canary whose grader_exception
// is not the grader's own raise on its input; ok is false when the canary is
// left to canary.Evaluate.
func evaluateExpectError(c manifest.Canary, o Outcome) (canary.Result, bool) {
	if !c.ExpectError || o.Class != ClassGraderException {
		return canary.Result{}, false
	}
	why := ownRaise(o)
	if why == "" {
		return canary.Result{}, false
	}
	return canary.Result{Status: canary.StatusFail, Message: "expect_error is set but " + why}, true
}

// WarnExceptionsGradedZero: under on_exception: zero, cases whose grader
// raised were graded 0; the warning counts and lists them with their line.
const WarnExceptionsGradedZero = "grader_exceptions_graded_zero"

// zeroedExceptions warns about graded rows whose grader raised (rows that
// on_exception: zero graded 0), so a grader that raises on every case is
// not a quiet string of fails.
func (d *decider) zeroedExceptions() {
	t := d.t
	if t.zeroed == 0 {
		return
	}
	n := t.zeroed
	d.warn(Warning{Code: WarnExceptionsGradedZero, Message: fmt.Sprintf(
		"%d %s raised a grader exception and %s graded 0 (on_exception: zero): %s",
		n, plural(n, "case", "cases"), plural(n, "was", "were"), idList(t.zeroedIDs, n))})
}

// ScaleFindings warns when graded cases scored outside [0, 1] while
// grader.range is not set: a grader on another scale should say which.
func ScaleFindings(m *manifest.Manifest, cases []CaseResult) []manifest.Finding {
	var w scaleWatch
	for _, c := range cases {
		w.add(c)
	}
	return w.findings(m)
}

// scaleWatch folds case rows for ScaleFindings as they stream past: how
// many scored outside [0, 1], the lowest and highest score, and the first
// few ids.
type scaleWatch struct {
	n      int
	lo, hi float64
	ids    []string
}

func (w *scaleWatch) add(c CaseResult) {
	if c.Class != ClassOK || c.Score == nil || (*c.Score >= 0 && *c.Score <= 1) {
		return
	}
	if w.n == 0 {
		w.lo, w.hi = 0, 1
	}
	w.n++
	w.lo, w.hi = min(w.lo, *c.Score), max(w.hi, *c.Score)
	if len(w.ids) < 10 { // the message names the first ten
		w.ids = append(w.ids, c.CaseID)
	}
}

func (w *scaleWatch) findings(m *manifest.Manifest) []manifest.Finding {
	if w.n == 0 || m.Grader.Judge != nil || m.Grader.Range != nil {
		return nil
	}
	ids := idList(w.ids, w.n)
	return []manifest.Finding{{Code: "score_scale_unset", Severity: manifest.SeverityWarn, File: m.File, Line: m.Line("grader"),
		Message: fmt.Sprintf("%d %s scored outside [0, 1] (from %g to %g) and grader.range is not set: set range: [min, max] so a return outside the grader's scale is an invalid_return (%s)",
			w.n, plural(w.n, "case", "cases"), w.lo, w.hi, ids)}}
}

// GatingScore is the score an outcome counts with under g: its score when
// ok, 0 for a grader_exception under on_exception: zero, and false for any
// other outcome (no score: the case is unevaluable).
func GatingScore(g manifest.Grader, o Outcome) (float64, bool) {
	switch {
	case o.Class == ClassOK && o.Score != nil:
		return *o.Score, true
	case o.Class == ClassGraderException && g.ZeroOnException():
		return 0, true
	}
	return 0, false
}
