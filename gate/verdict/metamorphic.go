package verdict

import (
	"fmt"
	"strings"

	"github.com/gradegate/gradegate/canary/metamorphic"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// WarnMetamorphicVariance: an equivalent answer the gate derived scored
// differently from its original (gate.metamorphic.invariance: warn).
const WarnMetamorphicVariance = "metamorphic_variance"

// metamorphic holds or warns on each transform with a violation: one
// reason (or warning) per transform, with its count and first example.
func (d *decider) metamorphic() {
	rep := results.MetamorphicReportOf(d.g.Metamorphic, d.ev.Canaries)
	for _, t := range rep.Transforms {
		if t.Violations == 0 {
			continue
		}
		f := t.First
		msg := fmt.Sprintf("%s (%s): %d of %d variants broke the relation (%s); first: from %s, variant %q: %s",
			t.Name, t.Relation, t.Violations, t.Variants, metamorphic.RelationText(metamorphic.Relation(t.Relation)), f.DerivedFrom, f.Variant, f.Message)
		if f.Site != "" && t.Relation != string(metamorphic.FixtureBreaking) {
			msg = strings.Replace(msg, "variant ", "variant at "+f.Site+" ", 1)
		}
		if f.Error != nil && f.Error.Line > 0 {
			msg += fmt.Sprintf(" (grader line %d)", f.Error.Line)
		}
		if t.Relation == string(metamorphic.Invariant) && d.g.Metamorphic.Invariance != manifest.InvarianceHold {
			d.warn(results.Warning{Code: WarnMetamorphicVariance, Message: msg})
			continue
		}
		d.hold(results.Reason{Code: results.ReasonMetamorphicViolation, CaseIDs: []string{f.Name}, Message: msg})
	}
}
