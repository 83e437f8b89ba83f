//go:build linux

package worker

import (
	"context"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
)

// TestSandboxRefusalsClassed: a grader that fails because the sandbox
// refused a UNIX socket (below Landlock ABI 9) or anything under /proc is
// sandbox_violation, with the attempt named, like every other refusal; one
// that catches the refusal is graded, and reopening its own descriptor
// through /proc/self/fd still works.
func TestSandboxRefusalsClassed(t *testing.T) {
	sb, py := sandboxed(t)
	src := `import os, socket
def grade(sample, item):
    kind = sample["kind"]
    if kind == "unix":
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()
    if kind == "unix-caught":
        try:
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()
        except OSError:
            return 0.25
    if kind == "proc-other":
        open("/proc/1/cmdline", "rb").read()
    if kind == "proc-self":
        open("/proc/self/status").read()
    if kind == "own-fd":
        with open("kept", "w") as f:
            f.write("x")
            f.flush()
            with open("/proc/self/fd/%d" % f.fileno()) as again:
                return 0.5 if again.read() == "x" else 0.0
    return 1.0
`
	unixAllowed := sb.Status().LandlockABI >= 9
	type want struct {
		class   grading.Class
		message string // in the error's message
	}
	unix := want{grading.ClassSandboxViolation, "a UNIX socket"}
	if unixAllowed {
		unix = want{grading.ClassOK, ""}
	}
	cases := []struct {
		kind string
		want want
	}{
		{"unix", unix},
		{"unix-caught", want{grading.ClassOK, ""}},
		{"proc-other", want{grading.ClassSandboxViolation, "to open /proc/1/cmdline"}},
		{"proc-self", want{grading.ClassSandboxViolation, "to open /proc/self/status"}},
		{"own-fd", want{grading.ClassOK, ""}},
		{"after", want{grading.ClassOK, ""}},
	}
	for _, isolation := range []string{IsolationWorker, IsolationCase} {
		t.Run(isolation, func(t *testing.T) {
			p := newPool(t, py, src, func(c *Config) { c.Sandbox = sb; c.Isolation = isolation })
			var tasks []grading.Task
			for _, c := range cases {
				tasks = append(tasks, task(c.kind, map[string]any{"kind": c.kind}))
			}
			got, err := p.Grade(context.Background(), tasks)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range cases {
				o := got[i]
				if o.Class != c.want.class {
					t.Errorf("%s: Class = %s, want %s (error %+v)", c.kind, o.Class, c.want.class, o.Error)
					continue
				}
				if c.want.message != "" && (o.Error == nil || !strings.Contains(o.Error.Message, c.want.message)) {
					t.Errorf("%s: Error = %+v, want a message naming %q", c.kind, o.Error, c.want.message)
				}
			}
			if s := got[len(cases)-2].Score; s == nil || *s != 0.5 {
				t.Errorf("own-fd: score %v, want 0.5 (the descriptor reopened through /proc/self/fd)", s)
			}
		})
	}
}
