package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"time"
)

// scriptTimeout bounds one RunScript. gradegate's scripts parse a grader in
// milliseconds; the bound only keeps a wedged interpreter from stalling the
// command.
const scriptTimeout = time.Minute

// scriptStderrLimit bounds how much of the interpreter's stderr an error
// quotes.
const scriptStderrLimit = 2000

// RunScript runs one of gradegate's own Python scripts (not a grader) with
// the interpreter python: `python -I -S -B -c script args...`, stdin on its
// standard input, and decodes the JSON it prints into out. The script must
// only parse what it is given, never import or execute it: it runs outside
// the sandbox.
//
// The error says the interpreter could not run the script, or that its
// answer is not JSON; either quotes the script's stderr, cut to a bound.
func RunScript(ctx context.Context, python, script string, stdin []byte, out any, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, scriptTimeout)
	defer cancel()

	var stdout, stderr bytes.Buffer
	// -I: no PYTHON* variables, user site or script directory on sys.path;
	// -S: no site module (the scripts import only the standard library, and
	// no .pth file of site-packages runs; a third of a short script's time);
	// -B: no .pyc written anywhere. The environment is empty: the script runs
	// no user code, but there is no reason to hand it gradegate's secrets.
	cmd := exec.CommandContext(ctx, python, append([]string{"-I", "-S", "-B", "-c", script}, args...)...)
	cmd.Env = []string{}
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	// A grandchild holding the pipes open must not keep Wait from returning.
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("running %s: %w", python, ctx.Err())
		}
		return fmt.Errorf("running %s: %w: %s", python, err, stderrText(stderr.Bytes()))
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		return fmt.Errorf("reading the answer of %s: %w: %s", python, err, stderrText(stderr.Bytes()))
	}
	return nil
}

// stderrText is a script's stderr for an error message: trimmed, and cut to
// scriptStderrLimit bytes with "…" when longer.
func stderrText(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > scriptStderrLimit {
		return string(b[:scriptStderrLimit]) + "…"
	}
	return string(b)
}
