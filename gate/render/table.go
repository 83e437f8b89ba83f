package render

import (
	"fmt"
	"io"
	"strings"
)

// Table draws a terminal table whose cells are all left-aligned and never
// wrapped, as the compare, mutate and shadow text views show them.
func Table(w io.Writer, header []string, rows [][]string) error {
	if err := (box{header: header, rows: rows}).write(w); err != nil {
		return fmt.Errorf("table: %w", err)
	}
	return nil
}

// MarkdownCell escapes text for a markdown table cell or list item of the
// compare, mutate and shadow reports: a | would end the cell, and the others
// would start formatting or HTML. A line break becomes a space, and empty
// text reads "-". Like every printer of untrusted text it is cut and its
// controls and workflow commands neutralised (oneLine), and mentions, links
// and emoji codes made inert (Inert). (The results
// markdown escapes with md and cell instead.)
func MarkdownCell(s string) string {
	if s == "" {
		return "-"
	}
	return strings.NewReplacer(
		`\`, `\\`, "|", `\|`, "`", "\\`", "*", `\*`, "_", `\_`,
		"<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`, "\n", " ",
	).Replace(Inert(oneLine(s)))
}
