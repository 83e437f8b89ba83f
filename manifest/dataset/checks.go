package dataset

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gradegate/gradegate/manifest"
)

// missingControls reports each mandatory slice whose labeled cases do not
// include both a 1 and a 0: without a human-labeled negative the slice
// cannot show a false pass, and without a positive it cannot show a false
// fail. The finding holds only under gate.require_controls.
func (r *Reader) missingControls() []manifest.Finding {
	sev := manifest.SeverityWarn
	if r.m.Gate.RequireControls {
		sev = manifest.SeverityHold
	}
	var out []manifest.Finding
	for _, rule := range r.m.Gate.Slices {
		if !rule.Mandatory {
			continue
		}
		cc := r.controls[rule.Name]
		cases, pos, neg := cc.cases, cc.pos, cc.neg
		var msg string
		switch {
		case cases == 0:
			msg = "has no cases, so it has no labeled controls"
		case pos+neg == 0:
			msg = fmt.Sprintf("has %d cases and none carries %s", cases, r.fields.Label)
		case neg == 0:
			msg = fmt.Sprintf("has only positive labels (%d labeled 1): no negative control, so a grader that passes everything goes unnoticed", pos)
		case pos == 0:
			msg = fmt.Sprintf("has only negative labels (%d labeled 0): no positive control, so a grader that fails everything goes unnoticed", neg)
		default:
			continue
		}
		line := rule.Line
		if line == 0 {
			line = r.m.Line("gate.slices." + rule.Name)
		}
		out = append(out, manifest.Finding{
			Code: CodeMissingControls, Severity: sev,
			File: r.m.File, Line: line,
			Message: fmt.Sprintf("mandatory slice %q %s", rule.Name, msg),
		})
	}
	return out
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
