package verdict

import (
	"fmt"
	"strings"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
)

// maxNamed is how many differing tasks a reason's message names.
const maxNamed = 10

// DeterminismReason is the nondeterministic_grader hold of a determinism
// check, naming what differed; nil when nothing did or no check ran.
func DeterminismReason(d *results.Determinism) *results.Reason {
	if d == nil || len(d.Differed) == 0 {
		return nil
	}
	var names []string
	var ids []string
	for _, x := range d.Differed {
		if !x.Canary {
			ids = append(ids, x.ID)
		}
		if len(names) < maxNamed {
			names = append(names, describeDifference(x))
		}
	}
	how := fmt.Sprintf("other processes, PYTHONHASHSEED %d then %d, another order", d.HashSeeds[0], d.HashSeeds[1])
	switch d.Asked {
	case results.DeterminismModel:
		how = "the model asked again with the judge cache off, another order"
	case results.DeterminismPythonModel:
		how = fmt.Sprintf("other processes, PYTHONHASHSEED %d then %d, the model sub-graders asked again with the judge cache off, another order", d.HashSeeds[0], d.HashSeeds[1])
	}
	if d.ComparedWithRun > 0 {
		how += ", the cases compared with the run too"
	}
	msg := fmt.Sprintf("%d of %d canaries and cases graded twice (%s) differed: %s",
		len(d.Differed), d.Canaries+d.Cases, how, strings.Join(names, "; "))
	if n := len(d.Differed) - len(names); n > 0 {
		msg += fmt.Sprintf("; and %d more", n)
	}
	return &results.Reason{Code: results.ReasonNondeterministicGrader, CaseIDs: ids, Message: msg}
}

func describeDifference(x results.Difference) string {
	kind := "case"
	if x.Canary {
		kind = "canary"
	}
	if x.Run != nil {
		return fmt.Sprintf("%s %s: %s in the run, then %s and %s", kind, x.ID, describeGraded(*x.Run), describeGraded(x.First), describeGraded(x.Second))
	}
	return fmt.Sprintf("%s %s: %s then %s", kind, x.ID, describeGraded(x.First), describeGraded(x.Second))
}

func describeGraded(g results.Graded) string {
	if g.Class == grading.ClassOK && g.Score != nil {
		return fmt.Sprintf("%g", *g.Score)
	}
	return string(g.Class)
}

// determinism holds when the determinism check saw a difference.
func (d *decider) determinism() {
	if r := DeterminismReason(d.ev.Determinism); r != nil {
		d.hold(*r)
	}
}
