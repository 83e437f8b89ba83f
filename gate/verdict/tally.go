package verdict

import (
	"fmt"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// maxReasonIDs bounds the case ids a reason lists in case_ids, per reason;
// the counts in its message stay exact. A run of a million cases keeps the
// first ones, the same way on every run.
const maxReasonIDs = 100

// Tally folds case rows into everything the verdict reads, one row at a
// time: counts, pass sums (per family when the gate aggregates by family),
// calibration and the first few ids of each omission reason and error class,
// overall and for every slice. Its memory grows with the slices and the
// families, never with the rows.
type Tally struct {
	family  bool
	overall group
	slices  map[string]*group
	// noSlice tallies the rows that are in no slice; nil until one comes.
	noSlice *group
	// zeroed counts the graded rows whose grader raised (on_exception:
	// zero graded them 0), and zeroedIDs names the first few with their
	// error.
	zeroed    int
	zeroedIDs []string
	// cal is gate.calibration: which label statuses are warn-only, and
	// whether stale labels calibrate.
	cal manifest.Calibration
	// warnOnly tallies, per warn-only label status, the rows that count
	// toward nothing else.
	warnOnly map[string]*warnOnlyGroup
}

// NewTally returns an empty tally for the gate's rules.
func NewTally(g manifest.Gate) *Tally {
	return &Tally{family: g.Aggregation == "family", slices: map[string]*group{}, cal: g.Calibration, warnOnly: map[string]*warnOnlyGroup{}}
}

// Add folds one case row in. A row of a warn-only label status goes to its
// own group only; a stale label under current_labels_only is counted as
// left out instead of calibrating.
func (t *Tally) Add(c results.CaseResult) {
	if t.cal.WarnOnlyStatus(c.LabelStatus) {
		w := t.warnOnly[c.LabelStatus]
		if w == nil {
			w = &warnOnlyGroup{}
			t.warnOnly[c.LabelStatus] = w
		}
		w.add(c)
		return
	}
	staleOut := c.StaleLabel && c.HumanScore != nil && t.cal.CurrentLabelsOnly
	if staleOut {
		c.HumanScore = nil
	}
	t.overall.add(c, t.family, staleOut)
	if c.Status != results.StatusError && c.Class == grading.ClassGraderException {
		t.zeroed++
		if len(t.zeroedIDs) < 10 {
			what := c.CaseID
			if c.Error != nil {
				what = fmt.Sprintf("%s (%s)", c.CaseID, grading.ErrorText(c.Error))
			}
			t.zeroedIDs = append(t.zeroedIDs, what)
		}
	}
	if len(c.Slices) == 0 {
		if t.noSlice == nil {
			t.noSlice = &group{}
		}
		t.noSlice.add(c, t.family, staleOut)
	}
	for _, s := range c.Slices {
		g := t.slices[s]
		if g == nil {
			g = &group{}
			t.slices[s] = g
		}
		g.add(c, t.family, staleOut)
	}
}

// Counts are the overall counts so far.
func (t *Tally) Counts() results.Counts { return t.overall.Counts }

// group is the tally of one set of rows: every row, or one slice's.
type group struct {
	results.Counts
	// families holds the pass sum of each named family, in order of first
	// appearance (kept only under family aggregation); singles the graded
	// rows without a family, each a family of its own.
	families    map[string]*passSum
	familyOrder []string
	singles     passSum
	falsePass   int
	falseFail   int
	// repeated counts the graded rows asked more than once (gate.repeats),
	// disagreed those whose asks fell on both sides of the threshold.
	repeated, disagreed int
	truePass, trueFail  int
	staleExcluded       int
	// falsePassIDs and falseFailIDs are the first maxReasonIDs of each.
	falsePassIDs, falseFailIDs []string
	has0, has1                 bool
	omitted, error             detail
}

type passSum struct{ passed, graded int }

// labeled reports whether a graded row of the group calibrates, or one was
// left out as stale.
func (g *group) labeled() bool {
	return g.truePass+g.trueFail+g.falsePass+g.falseFail+g.staleExcluded > 0
}

func (g *group) add(c results.CaseResult, family, staleOut bool) {
	g.Intended++
	if c.HumanScore != nil {
		g.has0 = g.has0 || *c.HumanScore == 0
		g.has1 = g.has1 || *c.HumanScore == 1
	}
	switch c.Status {
	case results.StatusPass, results.StatusFail:
		p := 0
		if c.Status == results.StatusPass {
			p = 1
			g.Passed++
		} else {
			g.Failed++
		}
		g.Graded++
		if c.Repeats > 1 {
			g.repeated++
			if c.RepeatsDisagree {
				g.disagreed++
			}
		}
		if family {
			g.addFamily(c.Family, p)
		}
		if staleOut {
			g.staleExcluded++
		}
		if c.HumanScore != nil {
			switch {
			case p == 1 && *c.HumanScore == 0:
				g.falsePass++
				if len(g.falsePassIDs) < maxReasonIDs {
					g.falsePassIDs = append(g.falsePassIDs, c.CaseID)
				}
			case p == 0 && *c.HumanScore == 1:
				g.falseFail++
				if len(g.falseFailIDs) < maxReasonIDs {
					g.falseFailIDs = append(g.falseFailIDs, c.CaseID)
				}
			case p == 1:
				g.truePass++
			default:
				g.trueFail++
			}
		}
	case results.StatusError:
		g.Errored++
		g.error.add(string(c.Class), c.CaseID)
	default:
		// Omitted, and any status a hand-edited results file made up:
		// never graded, so it must not vanish from the counts.
		g.Omitted++
		g.omitted.add(c.Reason, c.CaseID)
	}
}

func (g *group) addFamily(name string, p int) {
	if name == "" {
		g.singles.passed += p
		g.singles.graded++
		return
	}
	if g.families == nil {
		g.families = map[string]*passSum{}
	}
	s := g.families[name]
	if s == nil {
		s = &passSum{}
		g.families[name] = s
		g.familyOrder = append(g.familyOrder, name)
	}
	s.passed += p
	s.graded++
}

// familyCount is how many families the group's family rate is over: the
// named families with a graded row, and each graded row without a family.
func (g *group) familyCount() int { return len(g.familyOrder) + g.singles.graded }

// rate is the pass rate over graded rows, or nil when none was graded.
// Under family aggregation each family counts once: its score is the mean
// pass of its graded rows, and the rate is the mean of the family scores.
func (g *group) rate(family bool) *float64 {
	if g.Graded == 0 {
		return nil
	}
	if !family {
		r := float64(g.Passed) / float64(g.Graded)
		return &r
	}
	var sum float64
	for _, name := range g.familyOrder {
		s := g.families[name]
		sum += float64(s.passed) / float64(s.graded)
	}
	sum += float64(g.singles.passed)
	r := sum / float64(g.familyCount())
	return &r
}

// detail counts rows per key (an omission reason, an error class) in order
// of first appearance, and keeps the first ids of each and of all.
type detail struct {
	ids   []string // the first maxReasonIDs ids, whatever the key
	order []string
	byKey map[string]*keyed
}

type keyed struct {
	n   int
	ids []string // the first few, for the message
}

// idsPerKey is how many ids a message names per key.
const idsPerKey = 5

func (d *detail) add(key, id string) {
	if len(d.ids) < maxReasonIDs {
		d.ids = append(d.ids, id)
	}
	if d.byKey == nil {
		d.byKey = map[string]*keyed{}
	}
	k := d.byKey[key]
	if k == nil {
		k = &keyed{}
		d.byKey[key] = k
		d.order = append(d.order, key)
	}
	k.n++
	if len(k.ids) < idsPerKey {
		k.ids = append(k.ids, id)
	}
}

// parts is one "N key (ids)" text per key.
func (d *detail) parts() []string {
	out := make([]string, 0, len(d.order))
	for _, key := range d.order {
		k := d.byKey[key]
		out = append(out, fmt.Sprintf("%d %s (%s)", k.n, key, idList(k.ids, k.n)))
	}
	return out
}
