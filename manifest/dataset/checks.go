package dataset

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gradegate/gradegate/manifest"
)

// duplicateIDs reports each case_id written on more than one line, once,
// naming every line; ids are reported in order of first appearance.
func duplicateIDs(rows []row) []manifest.Finding {
	lines := map[string][]int{}
	var order []string
	for _, r := range rows {
		if !r.hasID {
			continue
		}
		if _, seen := lines[r.ID]; !seen {
			order = append(order, r.ID)
		}
		lines[r.ID] = append(lines[r.ID], r.Line)
	}
	var out []manifest.Finding
	for _, id := range order {
		ls := lines[id]
		if len(ls) < 2 {
			continue
		}
		out = append(out, manifest.Finding{
			Code: CodeDuplicateCaseID, Severity: manifest.SeverityHold,
			File: rows[0].File, Line: ls[0], CaseID: id,
			Message: fmt.Sprintf("case_id %q is on %d lines: %s", id, len(ls), joinInts(ls)),
		})
	}
	return out
}

// missingControls reports each mandatory slice whose labeled cases do not
// include both a 1 and a 0: without a human-labeled negative the slice
// cannot show a false pass, and without a positive it cannot show a false
// fail. The finding holds only under gate.require_controls.
func (l *loader) missingControls(rows []row) []manifest.Finding {
	sev := manifest.SeverityWarn
	if l.m.Gate.RequireControls {
		sev = manifest.SeverityHold
	}
	var out []manifest.Finding
	for _, rule := range l.m.Gate.Slices {
		if !rule.Mandatory {
			continue
		}
		var cases, pos, neg int
		for _, r := range rows {
			if !slices.Contains(r.Slices, rule.Name) {
				continue
			}
			cases++
			if r.Label != nil {
				if *r.Label == 1 {
					pos++
				} else {
					neg++
				}
			}
		}
		var msg string
		switch {
		case cases == 0:
			msg = "has no cases, so it has no labeled controls"
		case pos+neg == 0:
			msg = fmt.Sprintf("has %d cases and none carries %s", cases, l.fields.Label)
		case neg == 0:
			msg = fmt.Sprintf("has only positive labels (%d labeled 1): no negative control, so a grader that passes everything goes unnoticed", pos)
		case pos == 0:
			msg = fmt.Sprintf("has only negative labels (%d labeled 0): no positive control, so a grader that fails everything goes unnoticed", neg)
		default:
			continue
		}
		line := rule.Line
		if line == 0 {
			line = l.m.Line("gate.slices." + rule.Name)
		}
		out = append(out, manifest.Finding{
			Code: CodeMissingControls, Severity: sev,
			File: l.m.File, Line: line,
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
