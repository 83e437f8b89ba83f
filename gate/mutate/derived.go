package mutate

import (
	"encoding/json"

	"github.com/gradegate/gradegate/canary/metamorphic"
	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/manifest"
)

// derivedCheck is a variant of a written canary that mutants are graded on
// too: a mutant that only a malformed answer, a refusal or a padded wrong
// answer reveals is killed by it.
type derivedCheck struct {
	task      grading.Task
	base      int // the written canary's index
	rel       metamorphic.Relation
	tolerance float64
}

// derivedChecks are the variants the gate derives from the written
// canaries, under gate.metamorphic's switches. Two kinds are left to the
// gate run: item_field_removed, whose fields come from the reads recorded
// while grading, and every variant under the batch contract, which would
// share a batch with canaries a raise must not touch.
func derivedChecks(m *manifest.Manifest) []derivedCheck {
	mm := m.Gate.Metamorphic
	if !mm.Enabled || m.Grader.Contract == "batch" {
		return nil
	}
	th := m.Grader.PassThreshold
	ref := ""
	for _, c := range m.Canaries {
		if c.Positive(th) {
			var s struct {
				OutputText string `json:"output_text"`
			}
			if json.Unmarshal(c.Sample, &s) == nil && s.OutputText != "" {
				ref = s.OutputText
				break
			}
		}
	}
	var out []derivedCheck
	for i, c := range m.Canaries {
		var pol metamorphic.Polarity
		switch {
		case c.Positive(th):
			pol = metamorphic.Positive
		case c.Negative(th):
			pol = metamorphic.Negative
		default:
			continue
		}
		for _, v := range metamorphic.Derive(metamorphic.Base{Polarity: pol, Sample: c.Sample, Item: c.Item, Reference: ref}, mm.On) {
			name := c.Name + "/" + v.Transform
			if v.Site != "" {
				name += "[" + v.Site + "]"
			}
			out = append(out, derivedCheck{task: grading.Task{ID: name, Sample: v.Sample, Item: v.Item}, base: i, rel: v.Relation, tolerance: c.Tolerance})
		}
	}
	return out
}

// fails judges the variant's outcome v against its base's outcome b, both
// from one source.
func (d derivedCheck) fails(threshold float64, b, v grading.Outcome) bool {
	ok, _ := metamorphic.Check(d.rel, threshold, d.tolerance,
		metamorphic.Outcome{Class: string(b.Class), Score: b.Score}, metamorphic.Outcome{Class: string(v.Class), Score: v.Score})
	return !ok
}
