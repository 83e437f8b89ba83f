package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// hostileTexts are what a grader, a dataset or a manifest can put in front
// of a printer: GitHub workflow commands in both forms, on a line of their
// own or after a newline, terminal escapes, bidi and invisible characters,
// and a value far longer than any output needs.
var hostileTexts = []string{
	"::add-mask::secret",
	"::stop-commands::tok",
	"::error file=.github/workflows/ci.yml,line=1::owned",
	"  ::warning::indented",
	"##[error]legacy",
	"fine\n::error::after a newline",
	"fine\r\n##[group]after a CRLF",
	"\u202eevil-esac",
	"a\u2066b\u2069c",
	"zero\u200bwidth\ufeff",
	"\x1b[31mred\x1b[0m\x07",
	strings.Repeat("L", 5000),
}

// checkSafe fails when out holds anything a hostile text could have planted.
func checkSafe(t *testing.T, printer, out string) {
	t.Helper()
	for i, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " \t"), "::") {
			t.Errorf("%s: line %d starts a workflow command: %.120q", printer, i+1, line)
		}
		if strings.Contains(line, "##[") {
			t.Errorf("%s: line %d holds a legacy workflow command: %.120q", printer, i+1, line)
		}
		if strings.ContainsAny(line, "\x1b\x07\r\u202e\u2066\u2069\u200b\ufeff") {
			t.Errorf("%s: line %d holds a control or invisible character: %.120q", printer, i+1, line)
		}
	}
	if strings.Contains(out, strings.Repeat("L", LineRunes+1)) {
		t.Errorf("%s: a 5000-character value went out whole", printer)
	}
}

// hostileResult puts text into every field a printer shows.
func hostileResult(text string) *results.Results {
	cases := passingCases()
	setCase(cases, "cancel-shipped-002", func(c *results.CaseResult) {
		c.CaseID = "id-" + text
		c.Slices = append(c.Slices, "slice-"+text)
		c.Family = "family-" + text
		failCase(0)(c)
		c.Reason = "reason-" + text
	})
	setCase(cases, "conflict-003", errorCase(grading.CaseError{Class: grading.ClassGraderException, Type: "T" + text, Message: "message-" + text, Line: 3}))
	setCase(cases, "conflict-006", func(c *results.CaseResult) { omitCase(c); c.Reason = "omitted-" + text })
	res := build(cases, 1, map[string]string{"ineligible_shipped": results.VerdictHold})
	res.Verdict = results.VerdictHold
	res.Manifest.Name = "name-" + text
	res.Slices = append(res.Slices, results.SliceResult{Name: "slice-" + text, Status: results.VerdictHold})
	res.Reasons = append(res.Reasons, results.Reason{Code: results.ReasonCanaryFailed, Message: "reason-" + text, Slice: "slice-" + text, CaseIDs: []string{"id-" + text}})
	res.Warnings = append(res.Warnings, results.Warning{Code: "w", Message: "warning-" + text})
	res.Findings = append(res.Findings, manifest.Finding{Code: "dataset_invalid", Severity: manifest.SeverityHold, File: "file-" + text, Line: 2, CaseID: "id-" + text, Message: "finding-" + text})
	res.Canaries = append(res.Canaries, results.CanaryResult{Name: "canary-" + text, Expect: f64(0), Got: f64(1), Class: grading.ClassOK, Status: results.StatusFail, Message: "canary-message-" + text})
	return res
}

// TestPrintersNeutraliseHostileText feeds each hostile text through every
// printer of results: human, markdown (the step summary and the check run
// summary), validation, and the guard on stderr.
func TestPrintersNeutraliseHostileText(t *testing.T) {
	for _, text := range hostileTexts {
		t.Run(strings.ToValidUTF8(text[:min(len(text), 20)], "?"), func(t *testing.T) {
			res := hostileResult(text)
			var human bytes.Buffer
			if err := Human(&human, res, Options{}); err != nil {
				t.Fatal(err)
			}
			checkSafe(t, "human", human.String())
			checkSafe(t, "markdown", MarkdownString(res, MarkdownOptions{}))
			checkSafe(t, "step summary", MarkdownString(res, MarkdownOptions{MaxBytes: 1 << 20}))
			v := &Validation{Schema: ValidationSchema, Findings: res.Findings, Warnings: res.Findings}
			var vh, vm bytes.Buffer
			if err := ValidationHuman(&vh, v, Options{}); err != nil {
				t.Fatal(err)
			}
			if err := ValidationMarkdown(&vm, v, MarkdownOptions{}); err != nil {
				t.Fatal(err)
			}
			checkSafe(t, "validation human", vh.String())
			checkSafe(t, "validation markdown", vm.String())
			checkSafe(t, "markdown cell", MarkdownCell(text))
			var stderr bytes.Buffer
			g := NewGuard(&stderr, LineRunes)
			// A message as a command prints it, and the same text split
			// across writes.
			g.Write([]byte("gradegate run: grader.py: " + text + "\n"))
			for _, part := range strings.SplitAfter(text, ":") {
				g.Write([]byte(part))
			}
			g.Write([]byte("\n"))
			checkSafe(t, "stderr", stderr.String())
		})
	}
}

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"plain", 100, "plain"},
		{"two\nlines", 100, "two lines"},
		{"::error::x", 100, ": :error: :x"},
		{"a ##[group] b", 100, "a # #[group] b"},
		{"\u202eevil", 100, `\u202eevil`},
		{"esc\x1b[31m", 100, `esc\x1b[31m`},
		{"zw\u200b\ufeff", 100, `zw\u200b\ufeff`},
		{strings.Repeat("é", 12), 10, strings.Repeat("é", 10) + "… (12 characters)"},
	} {
		if got := Clip(tc.in, tc.n); got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
