package verdict

import (
	"fmt"

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
		d.hold(results.Reason{Code: results.ReasonMutantsSurvived, Message: fmt.Sprintf(
			"mutation score %s is below gate.min_mutation_score %s", rate(shown(*got, *least)), rate(*least))})
	}
}
