package verdict

import (
	"fmt"
	"strings"

	"github.com/gradegate/gradegate/gate/results"
)

// extraRows warns that the dataset has more rows than it says it intends.
func (d *decider) extraRows() {
	if d.ev.ExtraRows > 0 {
		d.warn(results.Warning{Code: WarnIntendedCasesSurplus, Message: fmt.Sprintf(
			"the dataset has %d more rows than dataset.intended_cases; every row is graded and counted as intended",
			d.ev.ExtraRows)})
	}
}

// omitted applies max_omitted to the overall count; the mandatory-slice half
// of the rule is applied per slice.
func (d *decider) omitted(c results.Counts) {
	if c.Omitted == 0 {
		return
	}
	parts := d.t.overall.omitted.parts()
	if d.ev.NotInDataset > 0 {
		parts = append(parts, fmt.Sprintf("%d %s (dataset.intended_cases is %d but only %d rows exist)",
			d.ev.NotInDataset, results.OmittedNotInDataset, c.Intended, c.Intended-d.ev.NotInDataset))
	}
	msg := fmt.Sprintf("%d intended %s omitted, max_omitted is %d: %s",
		c.Omitted, plural(c.Omitted, "case", "cases"), d.g.MaxOmitted, strings.Join(parts, "; "))
	if c.Omitted > d.g.MaxOmitted {
		d.hold(results.Reason{Code: results.ReasonOmittedCases, CaseIDs: d.t.overall.omitted.ids, Message: msg})
	} else {
		d.warn(results.Warning{Code: WarnOmittedCases, Message: msg})
	}
}

// errored applies max_errors to the overall count; the mandatory-slice half
// of the rule is applied per slice.
func (d *decider) errored(c results.Counts) {
	if c.Errored == 0 {
		return
	}
	e := &d.t.overall.error
	msg := fmt.Sprintf("%d %s could not be graded, max_errors is %d: %s",
		c.Errored, plural(c.Errored, "case", "cases"), d.g.MaxErrors, strings.Join(e.parts(), "; "))
	if c.Errored > d.g.MaxErrors {
		d.hold(results.Reason{Code: results.ReasonUnevaluableCases, CaseIDs: e.ids, Message: msg})
	} else {
		d.warn(results.Warning{Code: WarnUnevaluableCases, Message: msg})
	}
}
