package results

import (
	"github.com/gradegate/gradegate/canary/metamorphic"
	"github.com/gradegate/gradegate/manifest"
)

// ReasonMetamorphicViolation: a breaking, fixture-breaking or still-failing
// variant the gate derived passed (or, with gate.metamorphic.invariance:
// hold, an equivalent answer scored differently).
const ReasonMetamorphicViolation = "metamorphic_violation"

// MetamorphicReport is the results' "metamorphic" block: what the derived
// canaries covered, grouped by transform, and what was switched off.
type MetamorphicReport struct {
	Enabled bool `json:"enabled"`
	// DisabledLine is the manifest line of enabled: false.
	DisabledLine int `json:"disabled_line,omitempty"`
	// Bases counts the canaries and labeled cases variants came from.
	Bases      int                     `json:"bases"`
	Variants   int                     `json:"variants"`
	Violations int                     `json:"violations"`
	Transforms []MetamorphicTransform  `json:"transforms"`
	Off        []manifest.TransformOff `json:"transforms_off"`
	Invariance string                  `json:"invariance"`
}

// MetamorphicTransform is one transform's row: how many variants it made
// and how many broke their relation, with the first that did.
type MetamorphicTransform struct {
	Name       string        `json:"name"`
	Relation   string        `json:"relation"`
	Variants   int           `json:"variants"`
	Violations int           `json:"violations"`
	First      *CanaryResult `json:"first,omitempty"`
}

// MetamorphicReportOf groups the derived canaries of a run by transform, in
// the order of metamorphic.Transforms.
func MetamorphicReportOf(mm manifest.Metamorphic, canaries []CanaryResult) *MetamorphicReport {
	rep := &MetamorphicReport{Enabled: mm.Enabled, DisabledLine: mm.EnabledLine, Off: nonNilOff(mm.Off), Invariance: mm.Invariance, Transforms: []MetamorphicTransform{}}
	bases := map[string]bool{}
	rows := map[string]*MetamorphicTransform{}
	for _, t := range metamorphic.Transforms() {
		rows[t.Name] = &MetamorphicTransform{Name: t.Name, Relation: string(t.Relation)}
	}
	for i := range canaries {
		c := &canaries[i]
		row := rows[c.Transform]
		if c.DerivedFrom == "" || row == nil {
			continue
		}
		bases[c.DerivedFrom] = true
		rep.Variants++
		row.Variants++
		if c.Status != StatusPass {
			rep.Violations++
			row.Violations++
			if row.First == nil {
				first := *c
				first.Output, first.Placement = "", nil
				row.First = &first
			}
		}
	}
	rep.Bases = len(bases)
	for _, t := range metamorphic.Transforms() {
		if r := rows[t.Name]; r.Variants > 0 {
			rep.Transforms = append(rep.Transforms, *r)
		}
	}
	return rep
}

func nonNilOff(s []manifest.TransformOff) []manifest.TransformOff {
	if s == nil {
		return []manifest.TransformOff{}
	}
	return s
}
