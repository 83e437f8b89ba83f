package render

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func TestBox(t *testing.T) {
	tests := []struct {
		name   string
		header []string
		align  []align
		rows   [][]string
		want   string
	}{
		{
			name:   "aligned columns",
			header: []string{"slice", "graded"},
			align:  []align{left, right},
			rows:   [][]string{{"billing", "3"}, {"refunds", "120"}},
			want: `
┌─────────┬────────┐
│ slice   │ graded │
├─────────┼────────┤
│ billing │      3 │
│ refunds │    120 │
└─────────┴────────┘`,
		},
		{
			name:   "no rows: no rule under the header",
			header: []string{"case", "why"},
			want: `
┌──────┬─────┐
│ case │ why │
└──────┴─────┘`,
		},
		{
			name:   "wide, combining and zero-width characters",
			header: []string{"id", "n"},
			align:  []align{left, right},
			rows:   [][]string{{"日本", "1"}, {"e\u0301x", "😀"}, {"a\u200bb", ""}},
			want: "\n" +
				"┌──────┬────┐\n" +
				"│ id   │ n  │\n" +
				"├──────┼────┤\n" +
				"│ 日本 │  1 │\n" +
				"│ e\u0301x   │ 😀 │\n" +
				"│ a\u200bb   │    │\n" +
				"└──────┴────┘",
		},
		{
			name:   "colour and link sequences take no columns",
			header: []string{"status"},
			rows:   [][]string{{"\x1b[32mpass\x1b[0m"}, {"\x1b]8;;https://x\x07fail\x1b]8;;\x1b\\"}, {"held"}},
			want: "\n" +
				"┌────────┐\n" +
				"│ status │\n" +
				"├────────┤\n" +
				"│ \x1b[32mpass\x1b[0m   │\n" +
				"│ \x1b]8;;https://x\x07fail\x1b]8;;\x1b\\   │\n" +
				"│ held   │\n" +
				"└────────┘",
		},
		{
			name:   "trimmed cells, line breaks, tabs and short rows",
			header: []string{"a", "b", "c"},
			align:  []align{right},
			rows:   [][]string{{"  x  ", "one\ntwo"}, {"y\tz"}},
			want: `
┌─────┬─────┬───┐
│ a   │ b   │ c │
├─────┼─────┼───┤
│   x │ one │   │
│     │ two │   │
│ y z │     │   │
└─────┴─────┴───┘`,
		},
		{
			name:   "a lone escape and a control byte are no width",
			header: []string{"h"},
			rows:   [][]string{{"\x1bab\x01"}},
			want: "\n" +
				"┌────┐\n" +
				"│ h  │\n" +
				"├────┤\n" +
				"│ \x1bab\x01 │\n" +
				"└────┘",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := (box{header: tt.header, align: tt.align, rows: tt.rows}).write(&b); err != nil {
				t.Fatal(err)
			}
			if want := strings.TrimPrefix(tt.want, "\n") + "\n"; b.String() != want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), want)
			}
		})
	}
}

func TestTextWidth(t *testing.T) {
	for s, want := range map[string]int{
		"":                    0,
		"abc":                 3,
		"日本語":                 6,
		"e\u0301":             1,
		"\x1b[1;32mok\x1b[0m": 2,
		"\x1b]8;;u\x1b\\l":    1,
		"\x1b[":               1, // an unfinished sequence: ESC is no width, "[" is one
		"\xff":                1,
	} {
		if got := textWidth(s); got != want {
			t.Errorf("textWidth(%q) = %d, want %d", s, got, want)
		}
	}
}

// BenchmarkHuman is the human report of each golden scenario: what a
// command spends after the verdict to print it.
func BenchmarkHuman(b *testing.B) {
	for _, sc := range scenarios() {
		b.Run(sc.name, func(b *testing.B) {
			res := sc.res()
			b.ReportAllocs()
			for b.Loop() {
				if err := Human(io.Discard, res, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
