package render

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// In GitHub Actions a line is written once per period, with the count,
// the rate and the time left, and once more at the end.
func TestLineProgress(t *testing.T) {
	var out bytes.Buffer
	clock := time.Unix(0, 0)
	p := NewLineProgress(&out, func() time.Time { return clock }, 10*time.Second)
	p.Start(1000)
	for i := 1; i <= 1000; i++ {
		clock = clock.Add(50 * time.Millisecond) // 20 cases a second
		p.Graded(i)
	}
	p.Finish()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// 50 s of grading: a line every 10 s (checked every 64 cases) and the last.
	if len(lines) < 4 || len(lines) > 6 {
		t.Fatalf("%d lines:\n%s", len(lines), out.String())
	}
	if !strings.Contains(lines[0], "of 1000 cases (20/s, about") || !strings.Contains(lines[0], "s left)") {
		t.Errorf("first line = %q", lines[0])
	}
	if want := "gradegate: graded 1000 of 1000 cases (20/s)"; lines[len(lines)-1] != want {
		t.Errorf("last line = %q, want %q", lines[len(lines)-1], want)
	}
}
