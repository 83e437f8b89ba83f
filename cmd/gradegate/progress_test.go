package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

func TestProgressChoice(t *testing.T) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	tests := []struct {
		name   string
		env    map[string]string
		format format
		stderr any
		want   string
	}{
		{"json never shows progress", map[string]string{"GITHUB_ACTIONS": "true"}, formatJSON, &bytes.Buffer{}, "none"},
		{"GitHub Actions logs lines", map[string]string{"GITHUB_ACTIONS": "true"}, formatHuman, &bytes.Buffer{}, "lines"},
		{"not a terminal outside Actions", nil, formatHuman, devnull, "none"},
		{"a buffer outside Actions", nil, formatMarkdown, &bytes.Buffer{}, "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &app{getenv: func(k string) string { return tt.env[k] }, now: time.Now}
			switch w := tt.stderr.(type) {
			case *bytes.Buffer:
				a.stderr, a.tty = w, w
			case *os.File:
				a.stderr, a.tty = w, w
			}
			got := "none"
			switch a.progress(tt.format).(type) {
			case *lineProgress:
				got = "lines"
			case *barProgress:
				got = "bar"
			}
			if got != tt.want {
				t.Errorf("progress = %s, want %s", got, tt.want)
			}
		})
	}
}

// In GitHub Actions a line is written once per period, with the count,
// the rate and the time left, and once more at the end.
func TestLineProgress(t *testing.T) {
	var out bytes.Buffer
	clock := time.Unix(0, 0)
	p := &lineProgress{w: &out, now: func() time.Time { return clock }, every: 10 * time.Second}
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
