package verdict

import (
	"fmt"
	"strings"

	"github.com/gradegate/gradegate/gate/results"
)

func (d *decider) mutation() {
	least, got := d.g.MinMutationScore, d.ev.MutationScore
	switch {
	case least == nil:
	case got == nil:
		d.warn(results.Warning{Code: WarnMutationNotMeasured, Message: fmt.Sprintf(
			"gate.min_mutation_score is %s but this run did not mutation-test the grader", rate(*least))})
	case *got < *least-rateEpsilon:
		msg := fmt.Sprintf("mutation score %s is below gate.min_mutation_score %s", rate(shown(*got, *least)), rate(*least))
		if n := len(d.ev.Survivors); n > 0 {
			msg += fmt.Sprintf("; %d %s survived: %s", n, plural(n, "mutant", "mutants"), survivorList(d.ev.Survivors, maxSurvivorsInReason))
		}
		d.hold(results.Reason{Code: results.ReasonMutantsSurvived, Message: msg})
	}
}

// maxSurvivorsInReason bounds the survivors a mutants_survived reason names;
// every one is in the results' mutation_survivors.
const maxSurvivorsInReason = 5

// survivorList names the first n surviving mutants by line, operator and
// change.
func survivorList(ms []results.SurvivingMutant, n int) string {
	var parts []string
	for i, m := range ms {
		if i == n {
			parts = append(parts, fmt.Sprintf("%d more", len(ms)-n))
			break
		}
		where := fmt.Sprintf("line %d", m.Line)
		if m.Part != "" {
			where = m.Part + " " + where
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s)", where, m.Operator, m.Diff))
	}
	return strings.Join(parts, "; ")
}
