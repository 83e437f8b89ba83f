package verdict

import (
	"fmt"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// How a grader's outcome counts, under the keys a grader written for
// OpenAI's hosted grader sets: grader.range and grader.on_exception.

// FillCase sets a graded case row from its outcome: class, output, timing
// and judge always; score, scores and pass or fail at threshold for a valid
// score; the error otherwise. Under on_exception: zero a grader_exception is
// the hosted rule's 0: the row fails with score 0 and keeps its class and
// error, so the report still counts and lists it as a grader exception.
func FillCase(row *results.CaseResult, o grading.Outcome, g manifest.Grader) {
	if o.Omitted != "" {
		// The preprocessor dropped the row: never graded, counted as
		// omitted with its reason.
		row.Status, row.Reason = results.StatusOmitted, o.Omitted
		row.Output, row.DurationMS = o.Output, o.DurationMS
		return
	}
	row.Class = o.Class
	row.Output = o.Output
	row.DurationMS = o.DurationMS
	row.Judge = o.Judge
	row.ModelCalls = o.ModelCalls
	row.Repeats, row.RepeatsDisagree = o.Repeats, o.RepeatsDisagree
	if o.Class != grading.ClassOK {
		row.Error = grading.ErrorOf(o)
		row.Status = results.StatusError
		// The hosted rule is about the grader's raise; a preprocessor's
		// stays an error.
		if o.Class == grading.ClassGraderException && g.ZeroOnException() && !o.Preprocess {
			zero := 0.0
			row.Score = &zero
			row.Scores = map[string]float64{g.Metric: 0}
			row.Status = results.StatusFail
			if zero >= g.PassThreshold {
				row.Status = results.StatusPass
			}
		}
		return
	}
	row.Score = o.Score
	row.Scores = o.Scores
	row.DroppedScores = o.DroppedScores
	row.ExtractedOutput = o.ExtractedOutput
	row.Status = results.StatusFail
	if *o.Score >= g.PassThreshold {
		row.Status = results.StatusPass
	}
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
	d.warn(results.Warning{Code: WarnExceptionsGradedZero, Message: fmt.Sprintf(
		"%d %s raised a grader exception and %s graded 0 (on_exception: zero): %s",
		n, plural(n, "case", "cases"), plural(n, "was", "were"), idList(t.zeroedIDs, n))})
}

// ScaleFindings warns when graded cases scored outside [0, 1] while
// grader.range is not set: a grader on another scale should say which.
func ScaleFindings(m *manifest.Manifest, cases []results.CaseResult) []manifest.Finding {
	var w ScaleWatch
	for _, c := range cases {
		w.Add(c)
	}
	return w.Findings(m)
}

// ScaleWatch folds case rows for ScaleFindings as they stream past: how
// many scored outside [0, 1], the lowest and highest score, and the first
// few ids.
type ScaleWatch struct {
	n      int
	lo, hi float64
	ids    []string
}

// Add sees one case row.
func (w *ScaleWatch) Add(c results.CaseResult) {
	if c.Class != grading.ClassOK || c.Score == nil || (*c.Score >= 0 && *c.Score <= 1) {
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

// Findings is the score_scale_unset warning of the rows seen, if any.
func (w *ScaleWatch) Findings(m *manifest.Manifest) []manifest.Finding {
	if w.n == 0 || m.Grader.Judge != nil || m.Grader.Range != nil {
		return nil
	}
	ids := idList(w.ids, w.n)
	return []manifest.Finding{{Code: "score_scale_unset", Severity: manifest.SeverityWarn, File: m.File, Line: m.Line("grader"),
		Message: fmt.Sprintf("%d %s scored outside [0, 1] (from %g to %g) and grader.range is not set: set range: [min, max] so a return outside the grader's scale is an invalid_return (%s)",
			w.n, plural(w.n, "case", "cases"), w.lo, w.hi, ids)}}
}
