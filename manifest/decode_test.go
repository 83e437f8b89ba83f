package manifest

import (
	"fmt"
	"strings"
	"testing"
)

// aliasBomb is a manifest whose canary sample nests levels of
// `&lN [*lN-1, ...]`, each level width times the one before.
func aliasBomb(levels, width int) string {
	var b strings.Builder
	b.WriteString(strings.Replace(minimal, "    sample: {output_text: \"ok\"}\n", "", 1))
	b.WriteString("  - name: bomb\n    expect: 1.0\n    item: {expected: 1}\n    sample:\n")
	fmt.Fprintf(&b, "      l0: &l0 [%s]\n", strings.TrimSuffix(strings.Repeat("lol, ", width), ", "))
	for i := 1; i < levels; i++ {
		fmt.Fprintf(&b, "      l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), width), ", "))
	}
	return b.String()
}

func TestParseRefusesAliasExpansion(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		want string // "" when the document must parse
	}{
		{"nine levels of nine", aliasBomb(9, 9), "aliases expand the document past"},
		{"seven levels of nine", aliasBomb(7, 9), "aliases expand the document past"},
		{"an anchor reused a few times", aliasBomb(2, 3), ""},
		{"an anchor that contains itself", minimal + "  - name: loop\n    expect: 1.0\n    item: {expected: 1}\n    sample: &me {a: [*me]}\n", "contains an alias to itself"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc), "gradegate.yaml")
			if tc.want == "" {
				if err != nil && strings.Contains(err.Error(), "alias") {
					t.Fatalf("Parse refused a modest alias: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestMessagesCutValues: a value a message quotes is cut with its length
// noted, and its control characters escaped, so a 900 KB value costs a line.
func TestMessagesCutValues(t *testing.T) {
	long := strings.Repeat("x", 900_000)
	for _, tc := range []struct {
		name, from, to string
	}{
		{"enum value", "  sha256: \"" + hexB + "\"\n", "  sha256: \"" + hexB + "\"\n  contract: " + long + "\n"},
		{"unknown key", "  sha256: \"" + hexB + "\"\n", "  sha256: \"" + hexB + "\"\n  " + long + ": 1\n"},
		{"key with a newline", "  sha256: \"" + hexB + "\"\n", "  sha256: \"" + hexB + "\"\n  \"a\\n::error::owned\": 1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(strings.Replace(minimal, tc.from, tc.to, 1)), "gradegate.yaml")
			if err == nil {
				t.Fatal("Parse accepted the manifest")
			}
			msg := err.Error()
			if len(msg) > 2000 {
				t.Errorf("message is %d bytes: %.200s", len(msg), msg)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("message holds a newline: %q", msg)
			}
			if strings.Contains(msg, "xxxxx") && !strings.Contains(msg, "(900000 characters)") {
				t.Errorf("cut value does not say its length: %.300s", msg)
			}
		})
	}
}
