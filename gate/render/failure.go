package render

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gradegate/gradegate/manifest"
)

// Finding codes of a command that stopped before it could decide anything.
const (
	// CodeInputError is a problem with the command line, the manifest or a
	// file it names that the user can fix (exit 2): a typo in a path, a key
	// that does not exist, a value out of range.
	CodeInputError = "input_error"
	// CodeToolError is a failure of gradegate itself or of its sandbox
	// (exit 3).
	CodeToolError = "tool_error"
)

// FailureSchema names the document a command other than validate writes
// with --format json when it stops on its input or its own failure.
const FailureSchema = "gradegate.failure/v1"

// Failure is what a command writes on stdout with --format json when
// it cannot produce its usual document: the command, its exit code and each
// problem as a finding. validate writes its own document (gradegate.validate/v1)
// with the problems as findings instead, since that is what it reports.
type Failure struct {
	Schema   string             `json:"schema"` // gradegate.failure/v1
	Command  string             `json:"command"`
	ExitCode int                `json:"exit_code"`
	Findings []manifest.Finding `json:"findings"`
}

// FailureFindings turns every problem (the leaves of a joined error) into a
// finding, with the file and line of the problems that have one.
func FailureFindings(problems []error, code int) []manifest.Finding {
	var out []manifest.Finding
	for _, e := range problems {
		f := manifest.Finding{Code: CodeToolError, Severity: manifest.SeverityHold, Message: e.Error()}
		if errors.Is(e, manifest.ErrInput) {
			f.Code = CodeInputError
		}
		var me *manifest.Error
		if errors.As(e, &me) && me.Error() == e.Error() {
			// The position goes in its fields; the message keeps the key.
			f.File, f.Line = me.File, me.Line
			f.Message = strings.TrimPrefix(e.Error(), positionPrefix(me))
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		out = append(out, manifest.Finding{Code: CodeToolError, Severity: manifest.SeverityHold, Message: fmt.Sprintf("exit %d", code)})
	}
	return out
}

// positionPrefix is the "file:line: " an *Error's message starts with.
func positionPrefix(e *manifest.Error) string {
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d: ", e.File, e.Line)
	case e.File != "":
		return e.File + ": "
	case e.Line > 0:
		return fmt.Sprintf("line %d: ", e.Line)
	}
	return ""
}

// FailureMarkdown is the markdown of a command that stopped: one bullet per
// problem, with its place. inputError says the problems are the user's to
// fix (exit 2) rather than gradegate's.
func FailureMarkdown(w io.Writer, cmd string, code int, inputError bool, findings []manifest.Finding) error {
	var b strings.Builder
	what := "unusable input"
	if !inputError {
		what = "gradegate failed"
	}
	fmt.Fprintf(&b, "## ❌ %s: %s (exit %d)\n\n", cmd, what, code)
	for _, f := range findings {
		b.WriteString("- " + MarkdownCell(FormatFinding(f)) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
