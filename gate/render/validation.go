package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gradegate/gradegate/manifest"
)

// ValidationSchema is the schema name of the validate command's JSON output.
const ValidationSchema = "gradegate.validate/v1"

// Validation is what `gradegate validate` reports: findings that would hold,
// and warnings that never do.
type Validation struct {
	Schema   string             `json:"schema"` // ValidationSchema
	Findings []manifest.Finding `json:"findings"`
	Warnings []manifest.Finding `json:"warnings"`
}

// MarshalJSON writes the schema name when it was left empty and empty lists
// as [] rather than null, so readers of the document need no special cases.
func (v Validation) MarshalJSON() ([]byte, error) {
	type plain Validation
	p := plain(v)
	if p.Schema == "" {
		p.Schema = ValidationSchema
	}
	if p.Findings == nil {
		p.Findings = []manifest.Finding{}
	}
	if p.Warnings == nil {
		p.Warnings = []manifest.Finding{}
	}
	return json.Marshal(p)
}

// validationSummary is "2 findings, 1 warning" or "no findings".
func validationSummary(v *Validation) string {
	if len(v.Findings) == 0 && len(v.Warnings) == 0 {
		return "no findings"
	}
	s := plural(len(v.Findings), "finding", "findings")
	if len(v.Warnings) > 0 {
		s += ", " + plural(len(v.Warnings), "warning", "warnings")
	}
	return s
}

// ValidationHuman writes the validate command's report for a terminal: each
// finding as "file:line: code: message (case_id)", findings that hold first,
// then warnings, then a count.
func ValidationHuman(w io.Writer, v *Validation, opts Options) error {
	if v == nil {
		return errors.New("render: no validation report")
	}
	ew := &errWriter{w: w}
	p := newPalette(opts.Color)
	list := func(title string, fs []manifest.Finding) {
		if len(fs) == 0 {
			return
		}
		ew.printf("%s\n", p.title.Sprintf("%s (%d)", title, len(fs)))
		for _, f := range fs {
			ew.printf("%s\n", oneLine(FormatFinding(f)))
		}
		ew.printf("\n")
	}
	list("Findings", v.Findings)
	list("Warnings", v.Warnings)
	word := p.bigPass.Sprint("OK")
	if len(v.Findings) > 0 {
		word = p.bigHold.Sprint("HOLD")
	}
	ew.printf("%s  validate: %s\n", word, validationSummary(v))
	if ew.err != nil {
		return fmt.Errorf("render: writing validation report: %w", ew.err)
	}
	return nil
}

// ValidationMarkdown writes the validate command's report as markdown. With
// opts.MaxBytes set, warnings are cut before findings.
func ValidationMarkdown(w io.Writer, v *Validation, opts MarkdownOptions) error {
	if v == nil {
		return errors.New("render: no validation report")
	}
	mark := "✅"
	if len(v.Findings) > 0 {
		mark = "❌"
	}
	secs := []mdSection{{head: fmt.Sprintf("## %s validate: %s\n", mark, validationSummary(v))}}
	if len(v.Findings) > 0 {
		secs = append(secs, findingSection("Findings", v.Findings, 0, rankFinding-1, "findings", "the JSON output"))
	}
	if len(v.Warnings) > 0 {
		secs = append(secs, findingSection("Warnings", v.Warnings, 0, rankFinding, "warnings", "the JSON output"))
	}
	if opts.RunURL != "" {
		secs = append(secs, mdSection{rows: []mdRow{{fmt.Sprintf("\n<sub>[workflow run](%s)</sub>\n", opts.RunURL), rankFooter}}})
	}
	return writeString(w, layout(secs, opts, "The full report is in the JSON output (--format json)"))
}

// findingSection lists findings as markdown list items, at most
// markdownFindLimit of them; others counts findings of severity warn that
// are left out on purpose, and where names the document that has them all.
func findingSection(title string, fs []manifest.Finding, others, rank int, what, where string) mdSection {
	shown := fs[:min(len(fs), markdownFindLimit)]
	unlisted := len(fs) - len(shown)
	s := mdSection{
		head: fmt.Sprintf("\n### %s (%d)\n\n", title, len(fs)),
		what: what,
		tail: func(cut int) string {
			var b strings.Builder
			if n := unlisted + cut; n > 0 {
				fmt.Fprintf(&b, "\n_… and %d more in %s_\n", n, where)
			}
			if others > 0 {
				fmt.Fprintf(&b, "\n_(and %s of severity warn, under Warnings)_\n", plural(others, "finding", "findings"))
			}
			return b.String()
		},
	}
	for _, f := range shown {
		s.rows = append(s.rows, mdRow{"- " + md(FormatFinding(f)) + "\n", rank})
	}
	return s
}
