package mutate

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestExcerpt(t *testing.T) {
	long := "return score(" + strings.Repeat("argument_one, ", 60) + "x == 1" + strings.Repeat(", argument_two", 60) + ")"
	mutated := strings.Replace(long, "x == 1", "x != 1", 1)
	b, a := excerpt(long, mutated)
	if !strings.Contains(b, "x == 1") || !strings.Contains(a, "x != 1") {
		t.Errorf("excerpt lost the change: %q / %q", b, a)
	}
	for _, s := range []string{b, a} {
		if n := utf8.RuneCountInString(s); n > maxStatement+2*excerptContext+2 {
			t.Errorf("excerpt is %d characters: %q", n, s)
		}
		if !strings.HasPrefix(s, "…") || !strings.HasSuffix(s, "…") {
			t.Errorf("excerpt %q does not mark both cuts", s)
		}
	}
	if b, a := excerpt("x == 1", "x != 1"); b != "x == 1" || a != "x != 1" {
		t.Errorf("short pair changed: %q / %q", b, a)
	}
	m := Mutant{Original: long, Mutated: mutated}
	if d := diffText(m); utf8.RuneCountInString(d) > 2*(maxStatement+2*excerptContext+2)+8 {
		t.Errorf("diffText is %d characters", utf8.RuneCountInString(d))
	}
}
