package lint

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// CodeModelNotPinned is the finding of a model grader whose model is an
// alias (gpt-4o) rather than a dated snapshot (gpt-4o-2024-08-06): the
// alias moves to new snapshots under the grader, and its verdicts with it.
const CodeModelNotPinned = results.CodeModelNotPinned

// snapshotRE matches the dated snapshots OpenAI names models with: a
// -YYYY-MM-DD suffix, or the older -MMDD one (gpt-4-0613).
var snapshotRE = regexp.MustCompile(`-(\d{4}-\d{2}-\d{2}|\d{4})$`)

// sampleTemplateRE finds a template that reads the sample.
var sampleTemplateRE = regexp.MustCompile(`\{\{\s*sample[.\[]`)

// ModelGrader lints a model grader's manifest keys: the model must be a
// dated snapshot (or a fine-tuned model, whose id never moves), and a
// prompt that never reads the sample cannot judge it.
func ModelGrader(m *manifest.Manifest) []manifest.Finding {
	g := m.Grader
	if g.Judge == nil {
		return nil
	}
	var out []manifest.Finding
	model := g.Judge.Model
	if !strings.HasPrefix(model, "ft:") && !snapshotRE.MatchString(model) {
		out = append(out, manifest.Finding{
			Code: CodeModelNotPinned, Severity: manifest.SeverityHold, File: m.File, Line: m.Line("grader.model"),
			Message: fmt.Sprintf("grader.model %q is an alias, not a dated snapshot: the model behind it changes without a change here; pin one such as gpt-4o-2024-08-06", model),
		})
	}
	reads := false
	for _, msg := range g.Judge.Input {
		reads = reads || sampleTemplateRE.MatchString(msg.Content)
	}
	if !reads {
		out = append(out, manifest.Finding{
			Code: CodeSampleUnused, Severity: manifest.SeverityWarn, File: m.File, Line: m.Line("grader.input"),
			Message: "no message of grader.input reads the sample ({{sample.output_text}}, ...): the judge never sees what it grades",
		})
	}
	return out
}
