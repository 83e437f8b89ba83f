package worker

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
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
	answer, stderr, err := runScript(ctx, python, script, stdin, args)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("reading the answer of %s: %w: %s", python, err, stderrText(stderr))
	}
	return nil
}

// runScript runs the script as RunScript says and returns what it printed
// on stdout and stderr.
func runScript(ctx context.Context, python, script string, stdin []byte, args []string) (stdout, stderr []byte, err error) {
	ctx, cancel := context.WithTimeout(ctx, scriptTimeout)
	defer cancel()

	var out, errOut bytes.Buffer
	// -I: no PYTHON* variables, user site or script directory on sys.path;
	// -S: no site module (the scripts import only the standard library, and
	// no .pth file of site-packages runs; a third of a short script's time);
	// -B: no .pyc written anywhere. The environment is empty: the script runs
	// no user code, but there is no reason to hand it gradegate's secrets.
	cmd := exec.CommandContext(ctx, python, append([]string{"-I", "-S", "-B", "-c", script}, args...)...)
	cmd.Env = []string{}
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout = &out
	cmd.Stderr = &errOut
	// A grandchild holding the pipes open must not keep Wait from returning.
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("running %s: %w", python, ctx.Err())
		}
		return nil, nil, fmt.Errorf("running %s: %w: %s", python, err, stderrText(errOut.Bytes()))
	}
	return out.Bytes(), errOut.Bytes(), nil
}

// ScriptCache keeps the answers of gradegate's own scripts that depend on
// nothing but the interpreter and what they are given (the grader lint:
// the source, the script and its arguments), in the user's cache folder
// (CacheDir), as the probe's are kept: a file of the user's own, mode 0600,
// read only while the interpreter is the file it was kept for. A script
// whose answer depends on anything else (what is installed) must not use
// it.
type ScriptCache struct {
	Dir string // "" runs the script every time
}

// Run is RunScript through the cache.
func (c ScriptCache) Run(ctx context.Context, python, script string, stdin []byte, out any, args ...string) error {
	if c.Dir == "" {
		return RunScript(ctx, python, script, stdin, out, args...)
	}
	h := sha256.New()
	for _, part := range append([]string{python, script, string(stdin)}, args...) {
		fmt.Fprintf(h, "%d:%s", len(part), part)
	}
	file := filepath.Join(c.Dir, hex.EncodeToString(h.Sum(nil)[:16])+".json")
	if b, ok := readOwnFile(file, probeCacheMax); ok {
		var e scriptEntry
		if json.Unmarshal(b, &e) == nil && e.Python == python && slices.Equal(e.Stamps, interpreterStamps(python)) &&
			json.Unmarshal(e.Answer, out) == nil {
			return nil
		}
	}
	answer, stderr, err := runScript(ctx, python, script, stdin, args)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("reading the answer of %s: %w: %s", python, err, stderrText(stderr))
	}
	if !isScript(python) {
		if b, err := json.Marshal(scriptEntry{Python: python, Stamps: interpreterStamps(python), Answer: answer}); err == nil && len(b) <= probeCacheMax {
			writeOwnFile(c.Dir, file, b)
		}
	}
	return nil
}

// scriptEntry is one kept script answer.
type scriptEntry struct {
	Python string          `json:"python"`
	Stamps []fileStamp     `json:"stamps"`
	Answer json.RawMessage `json:"answer"`
}

// interpreterStamps are the stamps of the interpreter file at python, the
// link and what it links to.
func interpreterStamps(python string) []fileStamp {
	return []fileStamp{stampOf(python, true), stampOf(python, false)}
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
