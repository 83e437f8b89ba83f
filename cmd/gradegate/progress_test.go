package main

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/gradegate/gradegate/gate/render"
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
			case *render.LineProgress:
				got = "lines"
			case *render.BarProgress:
				got = "bar"
			}
			if got != tt.want {
				t.Errorf("progress = %s, want %s", got, tt.want)
			}
		})
	}
}
