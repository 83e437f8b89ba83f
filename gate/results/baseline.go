package results

import (
	"github.com/gradegate/gradegate/gate/digest"
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
