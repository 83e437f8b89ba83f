package render

import (
	"fmt"
	"io"
	"strings"
)

// Table draws a terminal table whose cells are all left-aligned and never
// wrapped, as the compare, mutate and shadow text views show them. Every
// cell is made safe to print (Clip to LineRunes): the cells carry names
// and code from the repository, and on a terminal nothing else escapes
// them.
func Table(w io.Writer, header []string, rows [][]string) error {
	safe := func(cells []string) []string {
		out := make([]string, len(cells))
		for i, c := range cells {
			out[i] = Clip(c, LineRunes)
		}
		return out
	}
	clipped := make([][]string, len(rows))
	for i, r := range rows {
		clipped[i] = safe(r)
	}
	if err := (box{header: safe(header), rows: clipped}).write(w); err != nil {
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
// markdown escapes with md and cell instead.) An & is escaped too: GitHub
// decodes "&#x40;team" to a mention after Inert has looked at it.
func MarkdownCell(s string) string {
	if s == "" {
		return "-"
	}
	return strings.NewReplacer(
		`\`, `\\`, "|", `\|`, "`", "\\`", "*", `\*`, "_", `\_`,
		"<", "&lt;", ">", "&gt;", "&", "&amp;", "[", `\[`, "]", `\]`, "\n", " ",
	).Replace(Inert(oneLine(s)))
}
