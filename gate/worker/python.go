package worker

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// Python is a resolved interpreter: the real executable behind whatever name
// the user gave, and the directories it reads its standard library and
// packages from (the sandbox must leave them readable).
type Python struct {
	Executable string   // absolute path of the interpreter binary (sys.executable)
	Prefix     string   // sys.prefix
	BasePrefix string   // sys.base_prefix
	Paths      []string // sys.path entries under -I
	Version    string   // "3.11.7"
	// Worker is worker.py compiled by this interpreter (marshal), or nil
	// (ResolvePython). A pool's processes load it instead of compiling
	// the source again: a quarter of a process's start.
	Worker []byte
}

//go:embed worker.py
var workerPy string

// probeQuote is a Python function that writes a str as a JSON string in
// ASCII, as json.dumps does: importing json costs more than the rest of
// the probe (15 ms of 26), so the probe does without it.
const probeQuote = `def q(s):
    out = []
    for c in s:
        o = ord(c)
        if 0x20 <= o < 0x7f and c != '"' and c != '\\':
            out.append(c)
        elif o > 0xffff:
            o -= 0x10000
            out.append('\\u%04x\\u%04x' % (0xd800 + (o >> 10), 0xdc00 + (o & 0x3ff)))
        else:
            out.append('\\u%04x' % o)
    return '"' + ''.join(out) + '"'
`

// probe prints what ResolvePython needs. It runs under the same -I flag as
// the worker, so Paths is the search path graders really get.
const probe = "import sys\n" + probeQuote + `print('{"executable": %s, "prefix": %s, "base_prefix": %s, "path": [%s], "version": "%d.%d.%d"}' % (
    q(sys.executable), q(sys.prefix), q(sys.base_prefix), ", ".join(q(p) for p in sys.path if p), *sys.version_info[:3]))
if sys.argv[1:] == ["worker"]:
    # The worker's source comes on stdin; an interpreter that cannot
    # compile it leaves the line empty, and its processes get the source.
    try:
        import marshal
        print(marshal.dumps(compile(sys.stdin.buffer.read(), "<string>", "exec")).hex())
    except Exception:
        print()
`

// ResolvePython runs name once to learn the interpreter's real executable and
// search path. Graders are then started with the executable directly: a
// version-manager shim such as pyenv's python3 costs tens of milliseconds per
// start and resolves the version from the caller's environment, which the
// grader's scrubbed environment no longer has.
//
// The probe inherits gradegate's own environment on purpose: it runs only
// gradegate's code, and a shim needs that environment to pick the interpreter.
func ResolvePython(ctx context.Context, name string) (Python, error) {
	return resolvePython(ctx, name, false)
}

// ResolvePythonWorker is ResolvePython that also compiles the worker with
// the interpreter, in the same process: the pools that grade with it then
// start their processes from the compiled code (Python.Worker).
func ResolvePythonWorker(ctx context.Context, name string) (Python, error) {
	return resolvePython(ctx, name, true)
}

func resolvePython(ctx context.Context, name string, withWorker bool) (Python, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return Python{}, fmt.Errorf("python interpreter %q: %w", name, err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, "-I", "-c", probe)
	if withWorker {
		cmd.Args = append(cmd.Args, "worker")
		cmd.Stdin = strings.NewReader(workerPy)
	}
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return Python{}, fmt.Errorf("python interpreter %s: %w: %s", path, err, bytes.TrimSpace(cut(stderr.Bytes(), 2000)))
	}
	answer, compiled, _ := bytes.Cut(stdout.Bytes(), []byte("\n"))
	var worker []byte
	if withWorker {
		if worker, err = hex.DecodeString(string(bytes.TrimSpace(compiled))); err != nil {
			return Python{}, fmt.Errorf("python interpreter %s: reading the compiled worker: %w", path, err)
		}
	}
	var got struct {
		Executable string   `json:"executable"`
		Prefix     string   `json:"prefix"`
		BasePrefix string   `json:"base_prefix"`
		Path       []string `json:"path"`
		Version    string   `json:"version"`
	}
	if err := json.Unmarshal(answer, &got); err != nil {
		return Python{}, fmt.Errorf("python interpreter %s: reading its answer: %w", path, err)
	}
	if !filepath.IsAbs(got.Executable) {
		return Python{}, fmt.Errorf("python interpreter %s: sys.executable %q is not an absolute path", path, got.Executable)
	}
	return Python{
		Executable: got.Executable,
		Prefix:     got.Prefix,
		BasePrefix: got.BasePrefix,
		Paths:      got.Path,
		Version:    got.Version,
		Worker:     worker,
	}, nil
}

// readPaths lists what the interpreter must be able to read in the sandbox.
func (py Python) readPaths() []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range append([]string{filepath.Dir(py.Executable), py.Prefix, py.BasePrefix}, py.Paths...) {
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}

func cut(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
