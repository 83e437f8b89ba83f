package lint

import (
	"fmt"

	"github.com/gradegate/gradegate/manifest"
)

// CodeScaleUnset warns that a Python grader scores outside [0, 1] with no
// grader.range: a return of 5 or -0.5 then passes without comment.
const CodeScaleUnset = "score_scale_unset"

// Scale warns when a Python grader's pass_threshold or a canary's expect
// lies outside [0, 1] and grader.range is not set, so the scale the grader
// scores on is not written down and nothing bounds its returns.
func Scale(m *manifest.Manifest) []manifest.Finding {
	g := m.Grader
	if g.Judge != nil || g.Range != nil {
		return nil
	}
	var out []manifest.Finding
	if outsideUnit(g.PassThreshold) {
		out = append(out, manifest.Finding{Code: CodeScaleUnset, Severity: manifest.SeverityWarn, File: m.File, Line: m.Line("grader.pass_threshold"),
			Message: fmt.Sprintf("pass_threshold %g is outside [0, 1] and grader.range is not set: set range: [min, max] so a return outside the grader's scale is an invalid_return", g.PassThreshold)})
	}
	for _, c := range m.Canaries {
		if c.Expect != nil && outsideUnit(*c.Expect) {
			out = append(out, manifest.Finding{Code: CodeScaleUnset, Severity: manifest.SeverityWarn, File: c.File, Line: c.Line,
				Message: fmt.Sprintf("canary %q expects %g, outside [0, 1], and grader.range is not set: set range: [min, max] to bound the grader's returns", c.Name, *c.Expect)})
		}
	}
	return out
}

func outsideUnit(f float64) bool { return f < 0 || f > 1 }
