package gate

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

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
	// VersionsChanged names each of the four versions (dataset, rubric,
	// grader and judge, candidate) that differs from the base run's.
	VersionsChanged []VersionChange `json:"versions_changed"`
	// GraderChange says, when the grader or the judge changed, whether
	// this run's calibration on the same labels lets the comparison stand.
	GraderChange *GraderChange `json:"grader_change,omitempty"`
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
func (r *Results) ApplyBaseline(b *Baseline, rule manifest.Baseline) {
	b.MaxDrop = rule.MaxDrop
	if b.Flips == nil {
		b.Flips = []BaselineFlip{}
	}
	if b.VersionsChanged == nil {
		b.VersionsChanged = []VersionChange{}
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
		msg := fmt.Sprintf("the pass rate on the %d cases graded in both runs fell by %s against %s (gate.baseline.max_drop %s)",
			b.Cohort, percent(drop), b.File, percent(rule.MaxDrop))
		if r.Shard.partial() {
			r.Warnings = append(r.Warnings, Warning{Code: ReasonRegressedVsBaseline, Message: msg + "; this shard's cases only"})
			b.Status = StatusWarn
		} else {
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
