package mutate

import "unicode/utf8"

// maxStatement is how many characters of a mutated statement a table shows;
// a longer one (a multi-line call flattened to one line) is cut to the part
// around the change.
const maxStatement = 100

// excerptContext is how many characters are kept on each side of a change.
const excerptContext = 40

// excerpt cuts a long before/after pair to the same window around where
// they differ, marking each cut with "…". Short pairs are returned as they
// are.
func excerpt(before, after string) (string, string) {
	if utf8.RuneCountInString(before) <= maxStatement && utf8.RuneCountInString(after) <= maxStatement {
		return before, after
	}
	b, a := []rune(before), []rune(after)
	prefix := 0
	for prefix < len(b) && prefix < len(a) && b[prefix] == a[prefix] {
		prefix++
	}
	suffix := 0
	for suffix < len(b)-prefix && suffix < len(a)-prefix && b[len(b)-1-suffix] == a[len(a)-1-suffix] {
		suffix++
	}
	start := max(prefix-excerptContext, 0)
	cut := func(r []rune) string {
		end := min(len(r)-suffix+excerptContext, len(r))
		// The changed part itself is kept whole up to maxStatement.
		end = min(end, start+maxStatement+2*excerptContext)
		s := string(r[start:end])
		if start > 0 {
			s = "…" + s
		}
		if end < len(r) {
			s += "…"
		}
		return s
	}
	return cut(b), cut(a)
}

// diffText is a mutant's one-line diff, cut like excerpt.
func diffText(m Mutant) string {
	before, after := m.lines()
	before, after = excerpt(before, after)
	return "- " + before + " / + " + after
}
