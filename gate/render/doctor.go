package render

import (
	"fmt"
	"io"

	"github.com/gradegate/gradegate/gate/sandbox"
)

// DoctorMarkdown writes `gradegate doctor --format markdown`: the sandbox
// line, then one table row per check of each layer.
func DoctorMarkdown(w io.Writer, rep sandbox.Report) error {
	if _, err := fmt.Fprintf(w, "**%s**\n\n| layer | check | status | detail |\n|---|---|---|---|\n", SandboxLine(rep.Sandbox)); err != nil {
		return err
	}
	for _, c := range rep.Checks {
		if _, err := fmt.Fprintf(w, "| %s | %s | %s | %s |\n", c.Layer, c.Name, c.Status, c.Detail); err != nil {
			return err
		}
	}
	return nil
}
