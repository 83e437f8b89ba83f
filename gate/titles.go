package gate

import (
	"fmt"

	"github.com/gradegate/gradegate/gate/mutate"
	"github.com/gradegate/gradegate/gate/shadow"
)

// MutationTitle is a mutation test's verdict and score in one line, as a
// check run's title says it.
func MutationTitle(rep *mutate.Report, minScore *float64) string {
	verdict := "hold"
	if rep.Passes(minScore) {
		verdict = "pass"
	}
	if len(rep.Mutants) == 0 {
		return "hold: " + NoMutationSite(nil).Code + ": " + NoMutationSite(nil).Message
	}
	bar := "every mutant killed"
	if minScore != nil {
		bar = fmt.Sprintf("minimum %.2f", *minScore)
	}
	return fmt.Sprintf("%s: mutation score %.2f (%s): %d killed, %d survived of %d mutants",
		verdict, rep.Score, bar, rep.Killed, rep.Survived, len(rep.Mutants))
}

// ShadowTitle is a shadow comparison's verdict in one line, with how many
// graded cases and canaries changed, as a check run's title says it.
func ShadowTitle(rep *shadow.Report) string {
	canaries := 0
	for _, c := range rep.Canaries {
		if c.Changed {
			canaries++
		}
	}
	verdict := "pass"
	if rep.AnyChanged() {
		verdict = "hold"
	}
	return fmt.Sprintf("%s: %d of %d graded cases and %d of %d canaries changed",
		verdict, len(rep.Changed), rep.Overall.Cases, canaries, len(rep.Canaries))
}
