//go:build linux

package worker

import (
	"context"
	"os"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
)

// TestPythonOnPath: a grader that runs `python` (an execution-based
// grader, in the sandbox) gets the grading interpreter, for both
// isolation modes; the folder goes with the pool.
func TestPythonOnPath(t *testing.T) {
	sb, py := sandboxed(t)
	const src = `import subprocess, sys

def grade(sample, item):
    for name in ("python", "python3"):
        out = subprocess.run([name, "-c", "import sys; print(sys.version_info[:2], 6 * 7)"], capture_output=True, text=True, timeout=20)
        if out.returncode != 0 or out.stdout.strip() != "%s 42" % (tuple(sys.version_info[:2]),):
            raise RuntimeError("%s: %r %r" % (name, out.stdout, out.stderr))
    return 1.0
`
	for _, isolation := range []string{IsolationWorker, IsolationCase} {
		t.Run(isolation, func(t *testing.T) {
			p := newPool(t, py, src, func(c *Config) {
				c.Sandbox = sb
				c.Isolation = isolation
				c.TimeoutSeconds = 30
			})
			got, err := p.Grade(context.Background(), []grading.Task{task("a", map[string]any{})})
			if err != nil {
				t.Fatal(err)
			}
			if got[0].Class != grading.ClassOK {
				t.Fatalf("%s: %+v (output %q)", got[0].Class, got[0].Error, got[0].Output)
			}
			dir := p.commands
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("the command folder %s outlived its pool: %v", dir, err)
			}
		})
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"/usr/bin/python3": "'/usr/bin/python3'", "/opt/it's/python": `'/opt/it'\''s/python'`} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
