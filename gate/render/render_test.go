package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/<name>.golden, or rewrites the file
// under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

func TestHuman(t *testing.T) {
	for _, sc := range scenarios() {
		for _, colored := range []bool{false, true} {
			name := "human_" + sc.name
			if colored {
				name += "_color"
			}
			t.Run(name, func(t *testing.T) {
				res := sc.res()
				var buf bytes.Buffer
				if err := Human(&buf, res, Options{Color: colored}); err != nil {
					t.Fatal(err)
				}
				out := buf.String()
				if got := strings.Contains(out, "\x1b["); got != colored {
					t.Errorf("color codes present = %v, want %v", got, colored)
				}
				plain := stripANSI(out)
				first := strings.SplitN(plain, "\n", 2)[0]
				if want := strings.ToUpper(res.Verdict) + "  order-summary"; !strings.HasPrefix(first, want) {
					t.Errorf("first line %q does not start with %q", first, want)
				}
				if !strings.Contains(plain, SandboxLine(res.Sandbox)+"\n") {
					t.Errorf("no sandbox line %q", SandboxLine(res.Sandbox))
				}
				if got := strings.Contains(plain, "UNSANDBOXED: graders ran without isolation"); got != res.Sandbox.Unsandboxed {
					t.Errorf("unsandboxed line present = %v, want %v", got, res.Sandbox.Unsandboxed)
				}
				for _, r := range res.Reasons {
					if !strings.Contains(plain, r.Code) {
						t.Errorf("reason %s missing", r.Code)
					}
				}
				golden(t, name, buf.Bytes())
			})
		}
	}
}

func TestHumanSections(t *testing.T) {
	var buf bytes.Buffer
	if err := Human(&buf, holdResult(), Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	tests := []struct {
		name string
		want string
	}{
		{"sandbox line", "sandbox: uid=60001 seccomp=on landlock=abi7 rlimits=on\n"},
		{"overall below its minimum", "85.7%"},
		{"error with grader line", "KeyError: 'expected_total_cents'"},
		{"more cases than shown", "… and 2 more in the results JSON"},
		{"hold finding", "grader.py:3: import_not_in_image: import requests: requests is not in image 2025-05-08"},
		{"warn findings counted", "1 finding of severity warn"},
		{"reason case ids", "cases: cancel-shipped-005, conflict-003, happy-004, happy-007, happy-009 and 1 more"},
		{"multi-line message on one line", "'USD|EUR mismatch'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(out, tt.want) {
				t.Errorf("output lacks %q:\n%s", tt.want, out)
			}
		})
	}
	order := []string{"HOLD  order-summary", "Reasons (6)", "Counts", "Slices", "Canaries (1 of 4 failed)", "boolean-total-one-cent",
		"passed (3): equivalent-serialization, wrong-currency, corrupt-fixture", "Worst cases", "Findings", "Warnings (1)"}
	rest := out
	for _, s := range order {
		i := strings.Index(rest, s)
		if i < 0 {
			t.Errorf("%q is missing, or not after what comes before it", s)
			continue
		}
		rest = rest[i+len(s):]
	}
}

func TestWorstCasesOrder(t *testing.T) {
	var got []string
	for _, c := range worstCases(holdResult()) {
		got = append(got, c.Status+" "+c.CaseID)
	}
	want := []string{
		// errors, those in a mandatory slice first
		"error cancel-shipped-005", "error conflict-003",
		"error happy-004", "error happy-007", "error happy-009", "error happy-011",
		// omitted
		"omitted conflict-006", "omitted happy-012",
		// failures in a mandatory slice, then the others
		"fail cancel-shipped-002",
		"fail happy-002", "fail tone-003", "fail tone-006",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("worst cases (-want +got):\n%s", diff)
	}
}

func TestMarkdown(t *testing.T) {
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			res := sc.res()
			var buf bytes.Buffer
			opts := MarkdownOptions{RunURL: "https://github.com/acme/shop/actions/runs/42"}
			if err := Markdown(&buf, res, opts); err != nil {
				t.Fatal(err)
			}
			if got := MarkdownString(res, opts); got != buf.String() {
				t.Error("MarkdownString differs from Markdown")
			}
			if strings.Contains(buf.String(), "Cut to fit") {
				t.Error("cut without MaxBytes")
			}
			golden(t, "markdown_"+sc.name, buf.Bytes())
		})
	}
}

func TestMarkdownEscapes(t *testing.T) {
	out := MarkdownString(holdResult(), MarkdownOptions{})
	tests := []struct {
		name, want string
	}{
		{"pipe and newline in a cell", `'USD\|EUR<br>mismatch'`},
		{"angle brackets", `in \<lambda\>`},
		{"underscores", `expected\_total\_cents`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(out, tt.want) {
				t.Errorf("markdown lacks %q", tt.want)
			}
		})
	}
	// Every table row keeps its column count: no cell leaks a bare "|".
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "| ") && strings.Contains(line, "USD") {
			if n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|"); n != 8 {
				t.Errorf("row has %d bars, want 8: %s", n, line)
			}
		}
	}
}

func TestMarkdownCut(t *testing.T) {
	const runURL = "https://github.com/acme/shop/actions/runs/42"
	full := MarkdownString(holdResult(), MarkdownOptions{RunURL: runURL})
	tests := []struct {
		name     string
		res      func() *results.Results
		maxBytes int
		golden   string
		cut      bool
		// keep must survive any cut.
		keep []string
	}{
		{name: "fits exactly", res: holdResult, maxBytes: len(full)},
		{name: "one byte short", res: holdResult, maxBytes: len(full) - 1, cut: true},
		{name: "small", res: holdResult, maxBytes: 3000, golden: "markdown_hold_cut", cut: true},
		{name: "smaller", res: holdResult, maxBytes: 2200, cut: true},
		{name: "below the parts never cut", res: holdResult, maxBytes: 600, cut: true, keep: []string{"## ❌ HOLD — order-summary"}},
		{name: "tiny", res: holdResult, maxBytes: 40, cut: true, keep: []string{"## ❌ HOLD"}},
		{name: "check run limit", res: hugeResult, maxBytes: MaxCheckRunSummary, cut: true},
	}
	always := []string{"## ❌ HOLD — order-summary", "### Reasons (6)", "`canary_failed`", "`overall_below_threshold`",
		"| slice | rule | intended |"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := MarkdownOptions{MaxBytes: tt.maxBytes, RunURL: runURL}
			var buf bytes.Buffer
			if err := Markdown(&buf, tt.res(), opts); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if len(out) > tt.maxBytes {
				t.Errorf("len = %d, want <= %d", len(out), tt.maxBytes)
			}
			if got := strings.Contains(out, "Cut to fit"); got != tt.cut && tt.maxBytes >= 100 {
				t.Errorf("cut note present = %v, want %v", got, tt.cut)
			}
			if tt.cut && tt.maxBytes >= 600 && !strings.Contains(out, "The full results are in the results JSON") {
				t.Error("cut note does not point at the results JSON")
			}
			keep := always
			if tt.keep != nil {
				keep = tt.keep
			}
			for _, s := range keep {
				if !strings.Contains(out, s) {
					t.Errorf("lost %q", s)
				}
			}
			if tt.golden != "" {
				golden(t, tt.golden, buf.Bytes())
			}
		})
	}
}

// hugeResult has thousands of failing cases and findings: far more than a
// check run summary holds.
func hugeResult() *results.Results {
	res := holdResult()
	for i := range 5000 {
		res.Cases = append(res.Cases, results.CaseResult{
			CaseID: fmt.Sprintf("bulk-%05d", i), Slices: []string{"happy_path"},
			Status: results.StatusError, Class: grading.ClassGraderException,
			Error: &grading.CaseError{Class: grading.ClassGraderException, Type: "ValueError",
				Message: strings.Repeat("a long message | with pipes ", 20), Line: 30},
		})
		res.Findings = append(res.Findings, manifest.Finding{Code: "near_duplicate", Severity: manifest.SeverityHold,
			File: "cases.jsonl", Line: i + 40, CaseID: fmt.Sprintf("bulk-%05d", i), Message: "near duplicate of happy-001"})
	}
	for i := range 2000 {
		res.Slices = append(res.Slices, results.SliceResult{Name: fmt.Sprintf("extra-slice-%04d", i), Status: results.StatusPass, MinPassRate: 0.9})
	}
	return res
}

func TestJSONRoundTrip(t *testing.T) {
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			want := sc.res()
			var buf bytes.Buffer
			if err := JSON(&buf, want); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if !strings.HasSuffix(out, "}\n") {
				t.Error("no trailing newline")
			}
			if !strings.HasPrefix(out, "{\n  \"schema\": \"gradegate.results/v1\",\n") {
				t.Errorf("not indented:\n%.80s", out)
			}
			if strings.Contains(out, `\u003c`) {
				t.Error("HTML escaping is on")
			}
			var got results.Results
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			// Raw JSON comes back indented, and a nil judge as the bytes "null".
			sameJSON := cmp.Comparer(func(a, b json.RawMessage) bool {
				norm := func(m json.RawMessage) string {
					if m == nil {
						return "null"
					}
					var c bytes.Buffer
					if err := json.Compact(&c, m); err != nil {
						return "invalid: " + string(m)
					}
					return c.String()
				}
				return norm(a) == norm(b)
			})
			if diff := cmp.Diff(want, &got, sameJSON); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJSONKeepsHTML(t *testing.T) {
	var buf bytes.Buffer
	if err := JSON(&buf, map[string]string{"message": "<lambda> & co"}); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"message\": \"<lambda> & co\"\n}\n"; buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}

type failingWriter struct{}

var errDiskFull = errors.New("disk full")

func (failingWriter) Write([]byte) (int, error) { return 0, errDiskFull }

func TestWriteErrorsWrap(t *testing.T) {
	tests := []struct {
		name   string
		render func() error
	}{
		{"human", func() error { return Human(failingWriter{}, holdResult(), Options{}) }},
		{"markdown", func() error { return Markdown(failingWriter{}, holdResult(), MarkdownOptions{}) }},
		{"json", func() error { return JSON(failingWriter{}, holdResult()) }},
		{"validation human", func() error { return ValidationHuman(failingWriter{}, validationWithFindings(), Options{}) }},
		{"validation markdown", func() error {
			return ValidationMarkdown(failingWriter{}, validationWithFindings(), MarkdownOptions{})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.render(); !errors.Is(err, errDiskFull) {
				t.Errorf("err = %v, want one wrapping %v", err, errDiskFull)
			}
		})
	}
}

func TestNilResults(t *testing.T) {
	if err := Human(&bytes.Buffer{}, nil, Options{}); err == nil {
		t.Error("Human(nil) did not fail")
	}
	if err := Markdown(&bytes.Buffer{}, nil, MarkdownOptions{}); err == nil {
		t.Error("Markdown(nil) did not fail")
	}
	if got := MarkdownString(nil, MarkdownOptions{}); got != "" {
		t.Errorf("MarkdownString(nil) = %q", got)
	}
}

func TestSandboxLine(t *testing.T) {
	tests := []struct {
		name string
		sb   grading.Sandbox
		want string
	}{
		{"every layer", grading.Sandbox{UID: 60001, Seccomp: true, LandlockABI: 7, Rlimits: true},
			"sandbox: uid=60001 seccomp=on landlock=abi7 rlimits=on"},
		{"no landlock", grading.Sandbox{UID: 60001, Seccomp: true, Rlimits: true},
			"sandbox: uid=60001 seccomp=on landlock=off rlimits=on"},
		{"unsandboxed", grading.Sandbox{UID: -1, Unsandboxed: true},
			"sandbox: uid=unchanged seccomp=off landlock=off rlimits=off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SandboxLine(tt.sb); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPercentages(t *testing.T) {
	tests := []struct {
		name string
		rate *float64
		min  float64
		want string
	}{
		{"nothing graded", nil, 0.95, "—"},
		{"one decimal", f64(0.9664), 0.95, "96.6%"},
		{"all passed", f64(1), 1, "100.0%"},
		{"just below a minimum of 100%", f64(0.9996), 1, "99.96%"},
		{"just below 95%", f64(0.94996), 0.95, "94.996%"},
		{"equal to the minimum", f64(0.95), 0.95, "95.0%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pctVs(tt.rate, tt.min); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFormatFinding(t *testing.T) {
	tests := []struct {
		name string
		f    manifest.Finding
		want string
	}{
		{"everything", manifest.Finding{Code: "duplicate_case_id", File: "cases.jsonl", Line: 14, CaseID: "happy-003",
			Message: "case_id happy-003 also on line 9"},
			"cases.jsonl:14: duplicate_case_id: case_id happy-003 also on line 9 (happy-003)"},
		{"no line", manifest.Finding{Code: "source_too_large", File: "grader.py", Message: "312 kB, over 256 kB"},
			"grader.py: source_too_large: 312 kB, over 256 kB"},
		{"no file", manifest.Finding{Code: "missing_controls", Message: "tone has only positive labels"},
			"missing_controls: tone has only positive labels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FormatFinding(tt.f); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestColorEnabled(t *testing.T) {
	file, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	tests := []struct {
		name   string
		getenv func(string) string
		f      *os.File
		want   bool
	}{
		{"no file", env(), nil, false},
		{"not a terminal", env("TERM", "xterm-256color"), file, false},
		{"NO_COLOR", env("NO_COLOR", "1"), file, false},
		{"dumb terminal", env("TERM", "dumb"), file, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ColorEnabled(tt.getenv, tt.f); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func validationWithFindings() *Validation {
	return &Validation{
		Schema: ValidationSchema,
		Findings: []manifest.Finding{
			{Code: "duplicate_case_id", Severity: manifest.SeverityHold, File: "cases.jsonl", Line: 14, CaseID: "happy-003",
				Message: "case_id happy-003 is also on line 9"},
			{Code: "grade_signature", Severity: manifest.SeverityHold, File: "grader.py", Line: 7,
				Message: "grade must take exactly two positional parameters (sample, item); it takes 3"},
		},
		Warnings: []manifest.Finding{
			{Code: "near_duplicate", Severity: manifest.SeverityWarn, File: "cases.jsonl", Line: 22, CaseID: "happy-011",
				Message: "request is 0.91 similar to happy-010's"},
		},
	}
}

func TestValidation(t *testing.T) {
	tests := []struct {
		name string
		v    *Validation
	}{
		{"findings", validationWithFindings()},
		{"clean", &Validation{Schema: ValidationSchema}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var human, markdown bytes.Buffer
			if err := ValidationHuman(&human, tt.v, Options{}); err != nil {
				t.Fatal(err)
			}
			if err := ValidationMarkdown(&markdown, tt.v, MarkdownOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, f := range append(tt.v.Findings, tt.v.Warnings...) {
				if !strings.Contains(human.String(), FormatFinding(f)+"\n") {
					t.Errorf("human output lacks %q", FormatFinding(f))
				}
			}
			golden(t, "validate_human_"+tt.name, human.Bytes())
			golden(t, "validate_markdown_"+tt.name, markdown.Bytes())
		})
	}
}

func TestValidationJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := JSON(&buf, Validation{}); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"schema\": \"gradegate.validate/v1\",\n  \"findings\": [],\n  \"warnings\": []\n}\n"
	if buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}

func TestValidationMarkdownCut(t *testing.T) {
	v := validationWithFindings()
	for i := range 2000 {
		v.Warnings = append(v.Warnings, manifest.Finding{Code: "near_duplicate", Severity: manifest.SeverityWarn,
			File: "cases.jsonl", Line: i + 100, CaseID: fmt.Sprintf("bulk-%04d", i), Message: "near duplicate of bulk-0000"})
	}
	const maxBytes = 1500
	var buf bytes.Buffer
	if err := ValidationMarkdown(&buf, v, MarkdownOptions{MaxBytes: maxBytes}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if len(out) > maxBytes {
		t.Errorf("len = %d, want <= %d", len(out), maxBytes)
	}
	for _, want := range []string{"## ❌ validate: 2 findings, 2001 warnings", "duplicate\\_case\\_id", "Cut to fit"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// stripANSI removes SGR color sequences.
func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && s[j] != 'm' {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func TestHumanKeepsGraderTextInItsCell(t *testing.T) {
	res := holdResult()
	res.Cases[4].Error.Message = "boom\n::error file=grader.py::forged\x1b[2J"
	res.Reasons[0].Message = "line one\n::add-mask::secret"
	var buf bytes.Buffer
	if err := Human(&buf, res, Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Contains(out, "\n::") {
		t.Error("grader text starts a line of its own")
	}
	if strings.Contains(out, "\x1b") {
		t.Error("grader text sends an escape sequence")
	}
}
