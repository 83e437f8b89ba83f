package sandbox

import (
	"errors"
	"strings"
	"testing"
)

// TestNotAvailable: the refusal on a system without the sandbox matches
// ErrNotAvailable and says, in one line, why (the layers are Linux's) and
// what to do instead (--unsandboxed, or the Action).
func TestNotAvailable(t *testing.T) {
	for _, goos := range []string{"darwin", "windows"} {
		t.Run(goos, func(t *testing.T) {
			err := NotAvailable(goos)
			if !errors.Is(err, ErrNotAvailable) {
				t.Errorf("NotAvailable(%q) does not match ErrNotAvailable", goos)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("the message spans lines: %q", msg)
			}
			for _, want := range []string{"on " + goos + ":", "seccomp", "Landlock", "uids", "--unsandboxed", "no memory limit", "gradegate Action", "Linux container"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
		})
	}
}
