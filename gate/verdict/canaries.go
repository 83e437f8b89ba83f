package verdict

import (
	"fmt"

	"github.com/gradegate/gradegate/gate/results"
)

func (d *decider) canaries() {
	for _, c := range d.ev.Canaries {
		if c.Status == results.StatusPass {
			continue
		}
		d.hold(results.Reason{Code: results.ReasonCanaryFailed, CaseIDs: []string{c.Name},
			Message: fmt.Sprintf("canary %q failed: %s", c.Name, c.Message)})
	}
}
