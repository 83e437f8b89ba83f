package verdict

import (
	"fmt"

	"github.com/gradegate/gradegate/gate/results"
)

// WarnBuiltinCanariesOff: gate.builtin_canaries is switched off; the
// warning carries the reason written for it.
const WarnBuiltinCanariesOff = "builtin_canaries_off"

func (d *decider) canaries() {
	if sw := d.g.BuiltinCanaries; sw.Off {
		where := ""
		if sw.Line > 0 {
			where = fmt.Sprintf(" (line %d)", sw.Line)
		}
		d.warn(results.Warning{Code: WarnBuiltinCanariesOff, Message: fmt.Sprintf(
			"gate.builtin_canaries is switched off%s: no built-in refusal or empty answer was graded; reason: %s", where, sw.Reason)})
	}
	for _, c := range d.ev.Canaries {
		if c.Status == results.StatusPass || c.DerivedFrom != "" {
			continue // a derived canary's verdict is metamorphic's
		}
		what := "canary"
		if c.BuiltIn {
			what = "built-in canary"
		}
		d.hold(results.Reason{Code: results.ReasonCanaryFailed, CaseIDs: []string{c.Name},
			Message: fmt.Sprintf("%s %q failed: %s", what, c.Name, c.Message)})
	}
}
