package render

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode"

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
	// What GitHub would turn into a ping, a link or an emoji.
	"ping @octocat and @acme/security-team, mail a@evil.example",
	"see #123, GH-42, gh-7 and acme/repo#9",
	"https://evil.example/login and www.evil.example and HTTP://X.example",
	":smile: :+1: :100: :white_check_mark:",
	// Entities GitHub decodes before it links mentions.
	"&#x40;acme/security-team &#64;octocat &commat;octocat",
}

// dotnetWhitespace is every character .NET's Char.IsWhiteSpace accepts: what
// GitHub's runner trims from the start of a line before it looks for "::".
var dotnetWhitespace = []rune{
	'\t', '\n', '\v', '\f', '\r', ' ', '\u0085', '\u00a0', '\u1680',
	'\u2000', '\u2001', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006', '\u2007', '\u2008', '\u2009', '\u200a',
	'\u2028', '\u2029', '\u202f', '\u205f', '\u3000',
}

func init() {
	// A workflow command behind each whitespace character, at the start of
	// the text and after a newline.
	for _, r := range dotnetWhitespace {
		hostileTexts = append(hostileTexts, string(r)+"::warning::ws", "ok\n"+string(r)+string(r)+"::add-mask::ws")
	}
}

// runnerTrim is what GitHub's runner does to a line before it looks for
// "::": .NET's TrimStart, every Char.IsWhiteSpace character.
func runnerTrim(line string) string {
	return strings.TrimLeftFunc(line, func(r rune) bool { return strings.ContainsRune(string(dotnetWhitespace), r) })
}

// liveMarkup finds, in markdown as GitHub reads it (backslash escapes
// undone), what GitHub would link or render: a mention or team mention, an
// e-mail, an issue reference, a URL, a www. link, an emoji code.
var liveMarkup = regexp.MustCompile(`(?i)@[a-z0-9]|#[0-9]|\bgh-[0-9]|[a-z]://|\bwww\.|:[a-z0-9_+-]*[a-z_+-][a-z0-9_+-]*:|:100:|:1234:`)

var unescapeMarkdown = regexp.MustCompile(`\\(.)`)

// checkInert fails when GitHub would render something in out as a mention,
// a reference, a link or an emoji.
func checkInert(t *testing.T, printer, out string) {
	t.Helper()
	plain := unescapeMarkdown.ReplaceAllString(out, "$1")
	if m := liveMarkup.FindString(plain); m != "" {
		i := strings.Index(plain, m)
		t.Errorf("%s: GitHub would link or render %q: %.80q", printer, m, plain[max(0, i-30):])
	}
}

// checkNoEntities fails when markdown out leaves an entity for GitHub to
// decode, but for the ones the printers write themselves (&lt; &gt; &amp;).
// (A check run's title and an annotation are plain text, decoded by
// nothing.)
func checkNoEntities(t *testing.T, printer, out string) {
	t.Helper()
	for _, m := range liveEntity.FindAllStringSubmatch(out, -1) {
		if e := m[2]; e != "lt" && e != "gt" && e != "amp" {
			t.Errorf("%s: GitHub would decode the entity %q: %.80q", printer, m[0], out)
		}
	}
}

// liveEntity is an HTML entity markdown leaves to be decoded (no backslash
// before its &): GitHub decodes "&#x40;" to "@" and then links a mention.
var liveEntity = regexp.MustCompile(`(^|[^\\])&(#[0-9]+|#[xX][0-9a-fA-F]+|[a-zA-Z][a-zA-Z0-9]*);`)

// TestDotnetWhitespace holds runnerSpace to .NET's Char.IsWhiteSpace.
func TestDotnetWhitespace(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if want := strings.ContainsRune(string(dotnetWhitespace), r); runnerSpace(r) != want {
			t.Errorf("runnerSpace(%U) = %v, want %v", r, !want, want)
		}
	}
}

// checkSafe fails when out holds anything a hostile text could have planted.
func checkSafe(t *testing.T, printer, out string) {
	t.Helper()
	for i, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(runnerTrim(line), "::") {
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
			checkInert(t, "markdown", MarkdownString(res, MarkdownOptions{}))
			checkNoEntities(t, "markdown", MarkdownString(res, MarkdownOptions{}))
			checkSafe(t, "step summary", MarkdownString(res, MarkdownOptions{MaxBytes: 1 << 20}))
			checkInert(t, "step summary", MarkdownString(res, MarkdownOptions{MaxBytes: 1 << 20}))
			checkNoEntities(t, "step summary", MarkdownString(res, MarkdownOptions{MaxBytes: 1 << 20}))
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
			checkInert(t, "validation markdown", vm.String())
			checkNoEntities(t, "validation markdown", vm.String())
			var tb bytes.Buffer
			if err := Table(&tb, []string{"h-" + text}, [][]string{{"cell-" + text}, {text}}); err != nil {
				t.Fatal(err)
			}
			checkSafe(t, "table", tb.String())
			checkSafe(t, "markdown cell", MarkdownCell(text))
			checkInert(t, "markdown cell", MarkdownCell(text))
			checkNoEntities(t, "markdown cell", MarkdownCell(text))
			checkInert(t, "GitHub text", GitHubText(text, LineRunes))
			checkInert(t, "GitHub lines", GitHubLines(text, LineRunes))
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

			// stdout off a terminal: a JSON document with the text in a
			// value, and the text on lines of its own, keep no command,
			// and the JSON its value.
			var stdout bytes.Buffer
			sg := NewStreamGuard(&stdout)
			doc, _ := json.MarshalIndent(map[string]string{"case_id": text}, "", "  ")
			sg.Write(append(doc, '\n'))
			var back map[string]string
			if err := json.Unmarshal(stdout.Bytes(), &back); err != nil || back["case_id"] != strings.ToValidUTF8(text, "\ufffd") {
				t.Errorf("stdout: the JSON document changed: %v: %.80q", err, stdout.String())
			}
			for _, b := range []byte(text + "\n") {
				sg.Write([]byte{b}) // a byte at a time: characters split between Writes
			}
			// (It cuts no line: a command's stdout is bounded by its
			// renderer, and a JSON document must stay whole.)
			checkSafe(t, "stdout", strings.ReplaceAll(stdout.String(), strings.Repeat("L", 5000), ""))
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
