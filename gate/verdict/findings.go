package verdict

import (
	"fmt"
	"strings"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// isGraderLint reports whether a finding code comes from the grader lint; a
// hold finding with such a code is grader_lint, any other is
// dataset_invalid.
func isGraderLint(code string) bool {
	switch code {
	case "grade_signature", "source_too_large", "sample_unused", "broad_except_constant",
		"import_not_in_image", "reads_environment", "network_import", "no_mutation_site",
		"preprocess_signature":
		return true
	}
	return false
}

// findings turns hold findings into reasons, one per code so a dataset with
// hundreds of schema violations gives one readable line, and warn findings
// into warnings.
func (d *decider) findings() {
	type group struct {
		code  string
		first manifest.Finding
		n     int
		cases []string
		seen  map[string]bool
	}
	var groups []*group
	byCode := map[string]*group{}
	for _, f := range d.ev.Findings {
		if f.Severity != manifest.SeverityHold {
			d.warn(results.Warning{Code: f.Code, Message: findingText(f)})
			continue
		}
		if isGraderLint(f.Code) {
			d.hold(results.Reason{Code: results.ReasonGraderLint, File: f.File, Message: findingText(f)})
			continue
		}
		if f.Code == dataset.CodeMissingControls && d.g.RequireControls && !d.partial {
			// Decide checks require_controls itself, per mandatory slice.
			continue
		}
		g := byCode[f.Code]
		if g == nil {
			g = &group{code: f.Code, first: f, seen: map[string]bool{}}
			byCode[f.Code] = g
			groups = append(groups, g)
		}
		g.n++
		if f.CaseID != "" && !g.seen[f.CaseID] && len(g.cases) < maxReasonIDs {
			g.seen[f.CaseID] = true
			g.cases = append(g.cases, f.CaseID)
		}
	}
	for _, g := range groups {
		msg := findingText(g.first)
		if g.n > 1 {
			msg = fmt.Sprintf("%d %s findings; first: %s", g.n, g.code, msg)
		}
		d.hold(results.Reason{Code: results.ReasonDatasetInvalid, File: g.first.File, CaseIDs: g.cases, Message: msg})
	}
}

// findingText places a finding's message at its position.
func findingText(f manifest.Finding) string {
	var pos string
	switch {
	case f.File != "" && f.Line > 0:
		pos = fmt.Sprintf("%s:%d: ", f.File, f.Line)
	case f.File != "":
		pos = f.File + ": "
	}
	if f.CaseID != "" && !strings.Contains(f.Message, f.CaseID) && !strings.Contains(pos, f.CaseID) {
		pos += f.CaseID + ": "
	}
	return pos + f.Code + ": " + f.Message
}
