package render

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/clipperhouse/displaywidth"
)

// align is how a column's cells sit in their width.
type align uint8

const (
	left align = iota
	right
)

// box is a terminal table drawn with box-drawing lines: a header row, then
// the rows, every cell padded by a space on each side, never wrapped. A
// cell's text is trimmed of surrounding white space, and a line break in
// it starts another line of the same row; a tab is a space. Widths count display columns
// (two for a wide character, none for a combining mark or a colour code),
// by the same rules wherever the report is printed: the locale and the
// terminal do not change them.
type box struct {
	header []string
	align  []align // per column; left for a column it does not name
	rows   [][]string
}

// write draws the table on w.
func (t box) write(w io.Writer) error {
	cols := len(t.header)
	for _, r := range t.rows {
		cols = max(cols, len(r))
	}
	widths := make([]int, cols)
	header := cellLines(t.header, cols, widths)
	rows := make([][][]string, len(t.rows))
	for i, r := range t.rows {
		rows[i] = cellLines(r, cols, widths)
	}
	var b strings.Builder
	rule := func(l, mid, r string) {
		b.WriteString(l)
		for i, wd := range widths {
			if i > 0 {
				b.WriteString(mid)
			}
			b.WriteString(strings.Repeat("─", wd+2))
		}
		b.WriteString(r)
		b.WriteByte('\n')
	}
	line := func(cells [][]string, header bool) {
		height := 1
		for _, c := range cells {
			height = max(height, len(c))
		}
		for k := range height {
			b.WriteString("│")
			for i, c := range cells {
				text := ""
				if k < len(c) {
					text = c[k]
				}
				pad := strings.Repeat(" ", widths[i]-textWidth(text))
				b.WriteByte(' ')
				if !header && i < len(t.align) && t.align[i] == right {
					b.WriteString(pad)
					b.WriteString(text)
				} else {
					b.WriteString(text)
					b.WriteString(pad)
				}
				b.WriteString(" │")
			}
			b.WriteByte('\n')
		}
	}
	rule("┌", "┬", "┐")
	line(header, true)
	if len(rows) > 0 {
		rule("├", "┼", "┤")
	}
	for _, r := range rows {
		line(r, false)
	}
	rule("└", "┴", "┘")
	_, err := io.WriteString(w, b.String())
	return err
}

// cellLines splits a row's cells into their trimmed lines, cols cells in
// all (a short row gets empty ones), and widens widths to fit them.
func cellLines(row []string, cols int, widths []int) [][]string {
	out := make([][]string, cols)
	for i := range cols {
		text := ""
		if i < len(row) {
			text = row[i]
		}
		lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(text, "\t", " ")), "\n")
		for k, l := range lines {
			l = strings.TrimSpace(l)
			lines[k] = l
			widths[i] = max(widths[i], textWidth(l))
		}
		out[i] = lines
	}
	return out
}

// textWidth is the display width of s: colour and other terminal control
// sequences (CSI and OSC) take no columns, nor do other controls.
func textWidth(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] == '\x1b' {
			i += escapeLen(s[i:])
			continue
		}
		if s[i] < 0x80 {
			if s[i] >= 0x20 && s[i] != 0x7f {
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += displaywidth.Options{}.Rune(r)
		i += size
	}
	return n
}

// escapeLen is the length of the terminal control sequence at the start of
// s (which starts with ESC): a CSI sequence (ESC [, parameter bytes,
// intermediate bytes, a final byte) or an OSC one (ESC ], ended by BEL or
// ESC \). An ESC that starts neither is one byte of no width.
func escapeLen(s string) int {
	if len(s) < 2 {
		return 1
	}
	switch s[1] {
	case '[':
		i := 2
		for i < len(s) && s[i] >= 0x30 && s[i] <= 0x3f {
			i++
		}
		for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
			i++
		}
		if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
			return i + 1
		}
	case ']':
		for i := 2; i < len(s); i++ {
			switch {
			case s[i] == '\a':
				return i + 1
			case s[i] == '\x1b' && i+1 < len(s) && s[i+1] == '\\':
				return i + 2
			}
		}
	}
	return 1
}
