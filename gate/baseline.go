package gate

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gradegate/gradegate/gate/stats"
	"github.com/gradegate/gradegate/manifest"
)

// ReasonRegressedVsBaseline holds a run that did worse than the base
// branch's results (run --baseline) on the cases both graded.
const ReasonRegressedVsBaseline = "regressed_vs_baseline"

// Baseline is a run set beside the results of its base branch (run
// --baseline FILE): the results document's "baseline" block.
type Baseline struct {
	// File is the base results file as given on the command line.
	File string `json:"file"`
	// Verdict and Digests are the base run's.
	Verdict string  `json:"verdict"`
	Digests Digests `json:"digests"`
	// Cohort counts the cases graded (pass or fail) in both runs: the
	// denominator of PassRateChange.
	Cohort int `json:"cohort"`
	// PassRateChange is (passed in this run − passed in the base run) / Cohort,
	// rounded to four decimals; nil when Cohort is 0.
	PassRateChange *float64 `json:"pass_rate_change"`
	// MaxDrop is gate.baseline.max_drop: a PassRateChange below −MaxDrop holds.
	MaxDrop float64 `json:"max_drop"`
	// Added and Removed count the cases only this run, or only the base
	// run, has.
	Added   int `json:"added"`
	Removed int `json:"removed"`
	// Flips lists every case in both runs whose status changed, sorted by
	// case_id.
	Flips  []BaselineFlip `json:"flips"`
	Status string         `json:"status"` // pass | hold | warn
	// Pairs counts the cohort by (base, head) outcome; PairedTest is the
	// McNemar test of the change and its interval at gate.confidence.level.
	Pairs Pairs `json:"-"`
	PairedTest
	// Alpha is gate.baseline.alpha: a drop holds only when PValue is at or
	// below it (1: on the drop alone).
	Alpha float64 `json:"alpha"`
}

// Pairs counts the cases graded in both runs by their outcomes in the base
// and in this run.
type Pairs struct {
	BothPass, PassFail, FailPass, BothFail int
}

// Add counts one case of the cohort.
func (p *Pairs) Add(basePassed, headPassed bool) {
	switch {
	case basePassed && headPassed:
		p.BothPass++
	case basePassed:
		p.PassFail++
	case headPassed:
		p.FailPass++
	default:
		p.BothFail++
	}
}

// PairedTest is the exact McNemar test of a matched change: the flips each
// way, the two-sided p-value of as lopsided a split under no change, and
// the interval of the change in pass rate (head − base) at a level.
type PairedTest struct {
	PassToFail int     `json:"pass_to_fail"`
	FailToPass int     `json:"fail_to_pass"`
	PValue     float64 `json:"p_value"`
	// CI is the interval of the pass rate change on the cohort (Newcombe's
	// paired score interval), rounded outward to four decimals.
	CI    stats.Interval `json:"ci"`
	Level float64        `json:"level"`
}

// Test is the McNemar test of the pairs at a confidence level.
func (p Pairs) Test(level float64) PairedTest {
	return PairedTest{
		PassToFail: p.PassFail,
		FailToPass: p.FailPass,
		PValue:     roundP(stats.McNemar(p.PassFail, p.FailPass)),
		CI:         stats.PairedChange(p.BothPass, p.PassFail, p.FailPass, p.BothFail, level).Round(),
		Level:      level,
	}
}

// roundP keeps four significant digits of a p-value, so a tiny one stays
// visible (1.234e-12) rather than rounding to 0.
func roundP(p float64) float64 {
	if p == 0 || p == 1 {
		return p
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(p, 'g', 4, 64), 64)
	return v
}

// PValueText formats a p-value for a message.
func PValueText(p float64) string {
	if p > 0 && p < 0.0001 {
		return strconv.FormatFloat(p, 'e', 1, 64)
	}
	return strconv.FormatFloat(p, 'g', 3, 64)
}

// BaselineFlip is one case whose status differs from the base run's.
type BaselineFlip struct {
	CaseID string `json:"case_id"`
	Base   string `json:"base"` // status in the base run
	Head   string `json:"head"` // status in this run
	// OutputChanged is false when the sample digest is the same in both
	// runs: the grader or the rules moved, not the candidate.
	OutputChanged bool     `json:"output_changed"`
	Slices        []string `json:"slices"`
	// Mandatory: the case is in a mandatory slice of this run.
	Mandatory bool `json:"mandatory"`
}

// Regressed reports whether the flip is a pass that became a fail.
func (f BaselineFlip) Regressed() bool { return f.Base == StatusPass && f.Head == StatusFail }

// Drop is how far the pass rate on the cohort fell, 0 when it did not.
func (b *Baseline) Drop() float64 {
	if b.PassRateChange == nil || *b.PassRateChange >= 0 {
		return 0
	}
	return -*b.PassRateChange
}

// ApplyBaseline records b in the results and holds as regressed_vs_baseline
// when the pass rate on the cases graded in both runs fell by more than
// rule.MaxDrop, and for every mandatory slice in which a case went from pass
// to fail. Mandatory slices are those of r.Slices.
//
// In a shard of several the cohort is only the shard's part, so a drop is
// a warning there; a mandatory case that flipped is one in the union too,
// and holds.
func (r *Results) ApplyBaseline(b *Baseline, rule manifest.Baseline, level float64) {
	b.MaxDrop, b.Alpha = rule.MaxDrop, rule.Alpha
	if !(level > 0 && level < 1) {
		level = stats.DefaultLevel
	}
	b.PairedTest = b.Pairs.Test(level)
	if b.Flips == nil {
		b.Flips = []BaselineFlip{}
	}
	mandatory := map[string]bool{}
	for _, s := range r.Slices {
		if s.Mandatory {
			mandatory[s.Name] = true
		}
	}
	regressed := map[string][]string{} // mandatory slice → case ids
	var order []string
	for i := range b.Flips {
		f := &b.Flips[i]
		for _, s := range f.Slices {
			if !mandatory[s] {
				continue
			}
			f.Mandatory = true
			if f.Regressed() {
				if _, ok := regressed[s]; !ok {
					order = append(order, s)
				}
				regressed[s] = append(regressed[s], f.CaseID)
			}
		}
	}
	b.Status = StatusPass
	// rateEpsilon keeps a drop of exactly max_drop (after rounding) a pass.
	if drop := b.Drop(); drop > rule.MaxDrop+rateEpsilon {
		msg := fmt.Sprintf("the pass rate on the %d cases graded in both runs fell by %s against %s (gate.baseline.max_drop %s); %s",
			b.Cohort, percent(drop), b.File, percent(rule.MaxDrop), b.testText())
		switch {
		case b.PValue > rule.Alpha:
			// A drop the test cannot tell from noise: as many flips each
			// way would come from regrading the same suite.
			r.Warnings = append(r.Warnings, Warning{Code: ReasonRegressedVsBaseline,
				Message: msg + fmt.Sprintf(", above gate.baseline.alpha %s: not told apart from noise", PValueText(rule.Alpha))})
			b.Status = StatusWarn
		case r.Shard.partial():
			r.Warnings = append(r.Warnings, Warning{Code: ReasonRegressedVsBaseline, Message: msg + "; this shard's cases only"})
			b.Status = StatusWarn
		default:
			r.Reasons = append(r.Reasons, Reason{Code: ReasonRegressedVsBaseline, File: b.File, Message: msg})
			b.Status = VerdictHold
		}
	}
	slices.Sort(order)
	for _, s := range order {
		ids := regressed[s]
		r.Reasons = append(r.Reasons, Reason{Code: ReasonRegressedVsBaseline, Slice: s, CaseIDs: ids, File: b.File,
			Message: fmt.Sprintf("%s of mandatory slice %q passed in %s and failed in this run", countOf(len(ids), "case", "cases"), s, b.File)})
		b.Status = VerdictHold
	}
	r.Baseline = b
	if len(r.Reasons) > 0 {
		r.Verdict = VerdictHold
		slices.SortStableFunc(r.Reasons, func(a, b Reason) int { return cmp.Compare(reasonRank(a.Code), reasonRank(b.Code)) })
	}
}

// testText says what the McNemar test found.
func (b *Baseline) testText() string {
	return fmt.Sprintf("%d passed before and failed now, %d the other way (McNemar p = %s; change %s interval %s to %s points)",
		b.PassToFail, b.FailToPass, PValueText(b.PValue), percent(b.Level), points(b.CI.Lo), points(b.CI.Hi))
}

// points formats a change in pass rate as signed percentage points.
func points(f float64) string {
	return fmt.Sprintf("%+.1f", math.Round(f*1000)/10)
}

// SameOutputFlips counts the flips whose output did not change.
func (b *Baseline) SameOutputFlips() int {
	n := 0
	for _, f := range b.Flips {
		if !f.OutputChanged {
			n++
		}
	}
	return n
}

func percent(f float64) string {
	s := fmt.Sprintf("%.1f%%", math.Round(f*1000)/10)
	return strings.Replace(s, ".0%", "%", 1)
}

func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// AllRows returns every case row of the results: from the spool on disk in
// a streamed run, from Cases otherwise. Each call starts again at the first
// row.
func (r *Results) AllRows() (CaseIter, error) {
	if r.Rows == nil {
		return RowsOf(r.Cases), nil
	}
	s := r.Rows.spool
	if s == nil {
		return nil, fmt.Errorf("reading the case rows: they were released (Results.Close)")
	}
	if err := s.flush(); err != nil {
		return nil, err
	}
	// The spool holds the rows as the "cases" array shows them, commas
	// included: wrapped in an object it is a document CaseReader reads.
	doc := io.MultiReader(strings.NewReader(`{"cases":[`), io.NewSectionReader(s.f, 0, s.size), strings.NewReader(`]}`))
	return NewCaseReader(doc), nil
}
