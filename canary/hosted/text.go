package hosted

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// maxDetailLines bounds how much of a hosted traceback the text table shows;
// the JSON keeps all of it (up to maxDetailsBytes).
const maxDetailLines = 8

// WriteText writes the report as a plain-text parity table
// (name | expect | local | hosted | parity), then the details of every row
// that has any, then the overall status.
func (r *Report) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	sha := r.Grader.SHA256
	if len(sha) > 12 {
		sha = sha[:12]
	}
	fmt.Fprintf(ew, "hosted parity: grader %s (%s", cell(r.Grader.Name), cell(r.Grader.Type))
	if r.Grader.ImageTag != "" {
		fmt.Fprintf(ew, ", image_tag %s", cell(r.Grader.ImageTag))
	}
	fmt.Fprintf(ew, ", sha256 %s) at %s\n", sha, r.BaseURL)
	if r.Validate.OK {
		fmt.Fprintf(ew, "validate: ok%s\n", attemptsSuffix(r.Validate.Attempts))
	} else {
		fmt.Fprintf(ew, "validate: FAILED: %s%s\n", r.Validate.Error, attemptsSuffix(r.Validate.Attempts))
	}
	fmt.Fprintln(ew)

	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tEXPECT\tLOCAL\tHOSTED\tPARITY")
	for _, row := range r.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", cell(row.Name), expectText(row), localText(row.Local), hostedText(row), parityText(row))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	for _, row := range r.Rows {
		lines := detailLines(row)
		if len(lines) == 0 {
			continue
		}
		fmt.Fprintf(ew, "\n%s:\n", cell(row.Name))
		for _, l := range lines {
			fmt.Fprintf(ew, "  %s\n", l)
		}
	}

	fmt.Fprintln(ew)
	if r.OK() {
		fmt.Fprintf(ew, "parity: pass (%s agree", plural(len(r.Rows)-len(r.NotComparable), "canary"))
		if n := len(r.NotComparable); n > 0 {
			fmt.Fprintf(ew, "; %d not comparable: %s", n, strings.Join(r.NotComparable, ", "))
		}
		fmt.Fprintln(ew, ")")
	} else {
		fmt.Fprintf(ew, "parity: FAIL (%s)\n", plural(len(r.Problems), "problem"))
		for _, p := range r.Problems {
			fmt.Fprintf(ew, "  - %s\n", oneLine(p))
		}
	}
	return ew.err
}

func expectText(row Row) string {
	switch {
	case row.ExpectError:
		return "error"
	case row.Expect == nil:
		return "—"
	case row.Tolerance > 0:
		return num(*row.Expect) + " ±" + num(row.Tolerance)
	}
	return num(*row.Expect)
}

func localText(l *Local) string {
	switch {
	case l == nil:
		return "—"
	case l.Errored:
		return "error (" + cell(orUnknown(l.Class)) + ")"
	case l.Got == nil:
		return "no score"
	}
	return num(*l.Got)
}

func hostedText(row Row) string {
	h := row.Hosted
	switch {
	case !row.Comparable:
		return "not sent"
	case h == nil:
		return "no answer"
	case h.RuntimeError:
		return "error (raised)"
	case h.Errored:
		return "error (" + strings.Join(h.ErrorFlags, ",") + ")"
	}
	return num(h.Reward)
}

func parityText(row Row) string {
	switch {
	case !row.Comparable:
		return "not comparable"
	case row.OK():
		return "ok"
	case row.Hosted == nil:
		return "FAIL: no hosted answer"
	}
	var against []string
	if !row.AgreeExpect {
		against = append(against, "expect")
	}
	if !row.AgreeLocal {
		against = append(against, "local")
	}
	return "FAIL: differs from " + strings.Join(against, " and ")
}

func detailLines(row Row) []string {
	var out []string
	if row.Error != "" {
		out = append(out, "error: "+oneLine(row.Error))
	}
	if d := strings.TrimRight(row.HostedErrorDetails, "\n"); d != "" {
		out = append(out, "hosted error details:")
		lines := strings.Split(d, "\n")
		if len(lines) > maxDetailLines {
			// The end of a traceback names the exception; keep that part.
			n := len(lines) - maxDetailLines
			lines = append([]string{fmt.Sprintf("… %d lines cut", n)}, lines[n:]...)
		}
		for _, l := range lines {
			out = append(out, "  "+strings.ReplaceAll(l, "\t", "    "))
		}
	}
	for _, n := range row.Notes {
		out = append(out, "note: "+oneLine(n))
	}
	if len(row.Attempts) > 1 || (len(row.Attempts) == 1 && row.Attempts[0].Error != "") {
		out = append(out, "attempts:")
		for i, a := range row.Attempts {
			out = append(out, fmt.Sprintf("  %d. %s", i+1, attemptText(a)))
		}
	}
	return out
}

func attemptText(a Attempt) string {
	s := a.Endpoint
	if a.Status != 0 {
		s += " HTTP " + strconv.Itoa(a.Status)
	}
	if a.Error != "" {
		s += ": " + oneLine(a.Error)
	}
	if a.Wait > 0 {
		s += fmt.Sprintf(" (retried after %s)", a.Wait)
	}
	return s
}

func attemptsSuffix(as []Attempt) string {
	if len(as) <= 1 {
		return ""
	}
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = attemptText(a)
	}
	return fmt.Sprintf(" after %d attempts (%s)", len(as), strings.Join(parts, "; "))
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if strings.HasSuffix(word, "y") {
		return strconv.Itoa(n) + " " + strings.TrimSuffix(word, "y") + "ies"
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// num formats a score as the shortest decimal that reads back the same.
func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// cell keeps a value on one table line and out of the column separators.
func cell(s string) string {
	return strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(s)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// errWriter keeps the first write error so the text can be written without
// checking every line.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
