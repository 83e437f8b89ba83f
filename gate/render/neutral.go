package render

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file is the neutralising layer every printer of untrusted text ends
// in: what GitHub's runner would read as a workflow command in a log line,
// and what GitHub's markdown would turn into a mention, a reference, a link
// or an emoji.

// workflowCommands breaks the two forms GitHub's runner reads as a command:
// "::name ...::" at the start of a line (after any whitespace) and "##[name]"
// anywhere in a line.
var workflowCommands = strings.NewReplacer("::", ": :", "##[", "# #[")

func neutralize(s string) string {
	for strings.Contains(s, "::") || strings.Contains(s, "##[") {
		s = workflowCommands.Replace(s)
	}
	return s
}

// runnerSpace reports whether GitHub's runner trims r from the start of a
// log line before it looks for "::": the runner calls .NET's
// String.TrimStart, which removes every character Char.IsWhiteSpace accepts
// (U+0009-000D, U+0020, U+0085, U+00A0, U+1680, U+2000-200A, U+2028, U+2029,
// U+202F, U+205F, U+3000). That is exactly Go's unicode.IsSpace; a test
// holds the two to the same list.
func runnerSpace(r rune) bool { return unicode.IsSpace(r) }

// Guard is the printer of a whole output stream that a log may show, such
// as gradegate's stderr and, off a terminal, its stdout: every line is cut
// to a bound (saying how long it was), its control and invisible characters
// are escaped (tabs stay), a workflow command at its start ("::" after any
// whitespace the runner trims) or anywhere in it ("##[") is broken, and
// newlines stay line breaks. gradegate's own messages pass unchanged. Each
// Write is handled as it comes (but for a character split between two
// Writes), so nothing waits for a flush.
type Guard struct {
	w     io.Writer
	limit int  // runes a line may keep; 0 keeps every rune
	json  bool // escapes are JSON's (\u001b), which a JSON document keeps
	sgr   bool // color sequences (ESC [ digits m) pass: PassColors
	// The state of the line being written, which may span several Writes.
	runes   int  // runes of the line so far
	blank   bool // the line so far is only whitespace
	hashes  int  // trailing '#' of the line so far, for "##[" across Writes
	colon   bool // the line so far is whitespace and one ':'
	partial []byte
	buf     []byte
}

// NewGuard returns a Guard writing to w, cutting lines at limit runes.
func NewGuard(w io.Writer, limit int) *Guard {
	return &Guard{w: w, limit: limit, blank: true}
}

// NewStreamGuard returns a Guard for a command's stdout: it cuts no line,
// and everything it changes it writes as a JSON escape of the same
// character ("##[" as `##\u005b`, a control as `\u001b`), so a JSON
// document passes through with the same value while the log shows no
// command. (A JSON document never starts a line inside a string, and never
// holds a raw control, so only "##[" ever changes in one.)
func NewStreamGuard(w io.Writer) *Guard {
	return &Guard{w: w, blank: true, json: true}
}

// PassColors lets the guard write SGR color sequences (ESC "[" digits and
// ";" then "m") as they are, for output colored on purpose (--color always,
// CLICOLOR_FORCE). No such sequence can start a workflow command, and it
// leaves the line's state as it was: "::" after one still counts as the
// start of the line.
func (g *Guard) PassColors() { g.sgr = true }

// sgrLen is the length of the SGR sequence s starts with, or 0.
func sgrLen(s []byte) int {
	if len(s) < 3 || s[0] != 0x1b || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s) && i < 64; i++ {
		switch c := s[i]; {
		case c == 'm':
			return i + 1
		case c != ';' && (c < '0' || c > '9'):
			return 0
		}
	}
	return 0
}

// plainByte marks the printable ASCII characters that have no part in a
// workflow command and that the runner does not trim: Write passes a run
// of them as it is.
var plainByte = func() (t [256]bool) {
	for c := 0x21; c < 0x7f; c++ {
		t[c] = c != ':' && c != '#' && c != '['
	}
	return t
}()

// Write writes p through the guard. It reports len(p) on success, however
// much the guard changed.
func (g *Guard) Write(p []byte) (int, error) {
	b := g.buf[:0]
	s := p
	if len(g.partial) > 0 {
		s = append(g.partial, p...)
		g.partial = nil
	}
	for len(s) > 0 {
		c := s[0]
		if plainByte[c] {
			// The common case: printable ASCII characters with no part in
			// a command, taken as a run.
			n := 1
			for n < len(s) && plainByte[s[n]] {
				n++
			}
			keep := n
			if g.limit > 0 {
				keep = max(0, min(n, g.limit-g.runes))
			}
			b = append(b, s[:keep]...)
			g.runes += n
			g.blank, g.colon, g.hashes = false, false, 0
			s = s[n:]
			continue
		}
		if c == 0x1b && g.sgr {
			if n := sgrLen(s); n > 0 {
				b = append(b, s[:n]...)
				s = s[n:]
				continue
			}
		}
		if !utf8.FullRune(s) {
			// The rest of the character comes with the next Write.
			g.partial = append([]byte(nil), s...)
			break
		}
		r, size := utf8.DecodeRune(s)
		if r == utf8.RuneError && size == 1 {
			r = -1 // an invalid byte, escaped below
		}
		s = s[size:]
		if r == '\n' {
			if g.limit > 0 && g.runes > g.limit {
				b = fmt.Appendf(b, "… (%d characters)", g.runes)
			}
			b = append(b, '\n')
			g.runes, g.blank, g.hashes, g.colon = 0, true, 0, false
			continue
		}
		g.runes++
		if g.limit > 0 && g.runes > g.limit {
			continue
		}
		switch {
		case r == ':' && (g.blank || g.colon):
			if g.colon {
				// "::" opening the line: a workflow command.
				if g.json {
					b = append(b, `\u003a`...)
				} else {
					b = append(b, " :"...)
				}
				g.colon = false
			} else {
				b = append(b, ':')
				g.colon = true
			}
			g.blank, g.hashes = false, 0
			continue
		case r == '[' && g.hashes >= 2:
			if g.json {
				b = append(b, `\u005b`...)
			} else {
				b = append(b, " ["...)
			}
			g.hashes = 0
			g.blank, g.colon = false, false
			continue
		}
		if r == '#' {
			g.hashes++
		} else {
			g.hashes = 0
		}
		if r == '\t' || r == ' ' || runnerSpace(r) && !escaped(r) {
			// Whitespace the runner trims: "::" after it still opens
			// the line.
			b = utf8.AppendRune(b, r)
			g.colon = false
			continue
		}
		g.blank, g.colon = false, false
		if r == '\r' && !g.json {
			b = append(b, `\r`...)
			continue
		}
		b = appendEscaped(b, r, g.json)
	}
	g.buf = b[:0]
	if _, err := g.w.Write(b); err != nil {
		return 0, err
	}
	return len(p), nil
}

// escaped reports whether r is written as a visible escape rather than as
// itself: a control, an invisible format character, a line or paragraph
// separator. -1 stands for an invalid byte.
func escaped(r rune) bool {
	return r < 0x20 || r == 0x7f || r == utf8.RuneError || r < 0 ||
		unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' || r == '\u0085'
}

// appendEscaped appends r, or a visible escape of it when escaped(r):
// "\x1b" and "\u202e", or JSON's "\u001b" when json is set.
func appendEscaped(b []byte, r rune, json bool) []byte {
	switch {
	case r < 0 || r == utf8.RuneError:
		return append(b, `\ufffd`...)
	case !escaped(r):
		return utf8.AppendRune(b, r)
	case r < 0x80 && !json:
		return fmt.Appendf(b, `\x%02x`, r)
	}
	return fmt.Appendf(b, `\u%04x`, r)
}

// writeEscaped writes r, or a visible escape of it when it is a control or
// an invisible format character.
func writeEscaped(b *strings.Builder, r rune) {
	var a [16]byte
	b.Write(appendEscaped(a[:0], r, false))
}

// wordJoiner is the invisible character Inert puts between a sigil and what
// follows it (U+2060 WORD JOINER: no width, no line break, and unlike a
// zero-width joiner it never fuses two emoji into one).
const wordJoiner = "\u2060"

// Inert makes text that a pull request wrote inert where GitHub renders it
// (a markdown summary or comment, a check run's title, name and
// annotations): it reads the same, but nothing in it pings, links or turns
// into an emoji. GitHub finds each of these by a pattern that needs its
// sigil right before a name, so a word joiner after the sigil breaks it:
//
//   - "@user", "@org/team" and "a@b.example" (a mention, a team mention, an
//     e-mail autolink): after every "@" before a letter or digit;
//   - "#123" and "owner/repo#123": after every "#" before a digit;
//   - "GH-123": after the "-" of "GH-" before a digit (any case);
//   - "https://…", and any other "scheme://": after the ":";
//   - "www.example" (autolinked without a scheme): after "www" (any case);
//   - ":smile:" (an emoji shortcode): after the ":" that opens a run of
//     letters, digits, "_", "+" and "-" closed by another ":".
//
// Inside a code span GitHub links nothing either, but a title and an
// annotation are plain text, where backticks would show: one rule serves
// every output. Inert runs before markdown escaping, on the text as it will
// read.
func Inert(s string) string {
	if !strings.ContainsAny(s, "@#:-wW") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); i++ {
		c := s[i]
		b.WriteByte(c)
		next := byte(0)
		if i+1 < len(s) {
			next = s[i+1]
		}
		switch {
		case c == '@' && isAlnum(next),
			c == '#' && isDigit(next),
			c == '-' && isDigit(next) && i >= 2 && strings.EqualFold(s[i-2:i], "gh"),
			c == ':' && strings.HasPrefix(s[i+1:], "//"),
			c == ':' && shortcode(s[i+1:]),
			(c == 'w' || c == 'W') && i >= 2 && next == '.' && strings.EqualFold(s[i-2:i+1], "www"):
			b.WriteString(wordJoiner)
		}
	}
	return b.String()
}

// shortcode reports whether s starts with the rest of an emoji shortcode:
// one or more of [A-Za-z0-9_+-], then ":". Of the codes made of digits
// alone GitHub knows only ":100:" and ":1234:", so a line number between
// colons ("grader.py:3:") is left as it is.
func shortcode(s string) bool {
	digits := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ':':
			return i > 0 && (!digits || s[:i] == "100" || s[:i] == "1234")
		case isDigit(c):
		case isAlnum(c), c == '_', c == '+', c == '-':
			digits = false
		default:
			return false
		}
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// GitHubText is the printer of untrusted text for GitHub's plain-text
// fields (a check run's title and name, an annotation's title): Clip, then
// Inert.
func GitHubText(s string, n int) string { return Inert(Clip(s, n)) }

// GitHubLines is GitHubText for text whose line breaks matter (an
// annotation's message): Lines, then Inert.
func GitHubLines(s string, n int) string { return Inert(Lines(s, n)) }
