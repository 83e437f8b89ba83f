package results

import (
	"strconv"

	"github.com/gradegate/gradegate/gate/digest"
	"github.com/gradegate/gradegate/gate/stats"
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
	Verdict string         `json:"verdict"`
	Digests digest.Digests `json:"digests"`
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
	// VersionsChanged names each of the four versions (dataset, rubric,
	// grader and judge, candidate) that differs from the base run's.
	VersionsChanged []VersionChange `json:"versions_changed"`
	// GraderChange says, when the grader or the judge changed, whether
	// this run's calibration on the same labels lets the comparison stand.
	GraderChange *GraderChange `json:"grader_change,omitempty"`
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
		PValue:     RoundP(stats.McNemar(p.PassFail, p.FailPass)),
		CI:         stats.PairedChange(p.BothPass, p.PassFail, p.FailPass, p.BothFail, level).Round(),
		Level:      level,
	}
}

// RoundP keeps four significant digits of a p-value, so a tiny one stays
// visible (1.234e-12) rather than rounding to 0.
func RoundP(p float64) float64 {
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
