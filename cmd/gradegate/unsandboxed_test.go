package main

import (
	"bytes"
	"github.com/gradegate/gradegate/gate"
	"strings"
	"testing"
	"time"

	"github.com/gradegate/gradegate/gate/sandbox"
)

// TestNoSandboxOneLine: on a system without the sandbox (macOS, Windows), a
// grading command without --unsandboxed fails with exit 3 and one line on
// stderr that says why and what to do instead.
func TestNoSandboxOneLine(t *testing.T) {
	for _, tt := range []struct{ cmd, goos string }{{"run", "darwin"}, {"canary", "windows"}, {"mutate", "darwin"}, {"shadow", "windows"}} {
		t.Run(tt.cmd+"/"+tt.goos, func(t *testing.T) {
			var stderr bytes.Buffer
			a := &app{getenv: func(string) string { return "" }, stdout: &bytes.Buffer{}, stderr: &stderr, now: time.Now}
			o := a.fail(tt.cmd, gate.SandboxRefusal(sandbox.NotAvailable(tt.goos)))
			if o.code != exitInternal {
				t.Errorf("exit code %d, want %d", o.code, exitInternal)
			}
			want := "gradegate " + tt.cmd + ": no grader sandbox on " + tt.goos + ": gradegate's sandbox is Linux's seccomp, Landlock and per-grader uids; " +
				"grade here with --unsandboxed (no isolation and no memory limit, and every output says so), or in the gradegate Action, which grades sandboxed in its Linux container\n"
			if got := stderr.String(); got != want {
				t.Errorf("stderr:\n%s\nwant:\n%s", got, want)
			}
			if strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("stderr has %d lines, want one", strings.Count(stderr.String(), "\n"))
			}
		})
	}
}
