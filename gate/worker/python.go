package worker

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
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
	// siteDirs are the folders the site module looks in for packages,
	// existing or not (the probe cache's stamps).
	siteDirs []string
	// compiling, when not nil, is the worker the probe is still compiling
	// (ResolveOptions.Ahead); Worker is then nil and workerCode waits.
	compiling *compiledWorker
}

// compiledWorker is worker.py as a probe compiles it after its answer.
type compiledWorker struct {
	done chan struct{} // closed once code and err are set
	code []byte        // nil when the interpreter could not compile it
	err  error
}

// compiledAhead says whether the pool's processes start from the compiled
// worker (the boot script): it is there, or on its way.
func (py Python) compiledAhead() bool { return len(py.Worker) > 0 || py.compiling != nil }

// workerCode is the compiled worker, once the probe still compiling it
// has (ResolveOptions.Ahead); nil when the interpreter could not compile
// it, and its processes compile the source themselves.
func (py Python) workerCode(ctx context.Context) ([]byte, error) {
	c := py.compiling
	if c == nil {
		return py.Worker, nil
	}
	select {
	case <-c.done:
		return c.code, c.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
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
//
// site lists the folders the site module looks for packages in, those that
// do not exist too: the probe cache stamps them, so a folder created by a
// first install is seen.
const probe = "import sys\n" + probeQuote + `try:
    import site
    sd = [p for p in site.getsitepackages() if isinstance(p, str)]
except Exception:
    sd = []
print('{"executable": %s, "prefix": %s, "base_prefix": %s, "path": [%s], "version": "%d.%d.%d", "site": [%s]}' % (
    q(sys.executable), q(sys.prefix), q(sys.base_prefix), ", ".join(q(p) for p in sys.path if p), *sys.version_info[:3], ", ".join(q(p) for p in sd)))
if sys.argv[1:] == ["worker"]:
    # The answer goes out before the compile: the pools start on it.
    sys.stdout.flush()
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
// The probe runs with the locale the graders get and nothing else of
// gradegate's environment (probeEnvironment): the interpreter runs its
// site-packages' .pth files and sitecustomize before the probe's first line,
// and those are not gradegate's code. A shim (a script) is the exception:
// it needs the environment to pick the interpreter.
func ResolvePython(ctx context.Context, name string) (Python, error) {
	return Resolve(ctx, name, ResolveOptions{})
}

// ResolvePythonWorker is ResolvePython that also compiles the worker with
// the interpreter, in the same process: the pools that grade with it then
// start their processes from the compiled code (Python.Worker).
func ResolvePythonWorker(ctx context.Context, name string) (Python, error) {
	return Resolve(ctx, name, ResolveOptions{Worker: true})
}

// ResolveOptions say how Resolve finds and asks an interpreter.
type ResolveOptions struct {
	// Getenv is the environment a version manager's shim would read
	// (PYENV_VERSION, PYENV_DIR); nil reads the process's.
	Getenv func(string) string
	// Dir is the directory a shim would run in (pyenv looks for
	// .python-version from there up); "" is the working directory.
	Dir string
	// CacheDir keeps the probe's answers (CacheDir); "" asks the
	// interpreter every time.
	CacheDir string
	// Worker compiles the worker too (Python.Worker).
	Worker bool
	// Ahead, with Worker, returns once the interpreter has answered,
	// before it has compiled the worker: a pool's processes then start
	// (the sandbox's launcher, the interpreter's own start) while it
	// compiles, and are sent the code when it is there. Without a kept
	// answer that compile is most of the probe.
	Ahead bool
}

func (o ResolveOptions) getenv(key string) string {
	if o.Getenv == nil {
		return os.Getenv(key)
	}
	return o.Getenv(key)
}

// Resolve is ResolvePython with options: LocatePython, then ProbePython.
func Resolve(ctx context.Context, name string, o ResolveOptions) (Python, error) {
	path, err := LocatePython(name, o)
	if err != nil {
		return Python{}, err
	}
	return ProbePython(ctx, path, o)
}

// LocatePython is the file an interpreter name starts: its path on PATH
// or, for a pyenv shim whose choice can be read from the version files
// without running it, the interpreter the shim would run. It starts no
// process.
func LocatePython(name string, o ResolveOptions) (string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("python interpreter %q: %w", name, err)
	}
	if !filepath.IsAbs(path) {
		if path, err = filepath.Abs(path); err != nil {
			return "", fmt.Errorf("python interpreter %q: %w", name, err)
		}
	}
	dir := o.Dir
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return path, nil
		}
	}
	if target, ok := pyenvShimTarget(path, o.getenv, dir); ok {
		return target, nil
	}
	return path, nil
}

// ProbePython asks the interpreter at path (LocatePython) what ResolvePython
// returns, or takes the answer from o.CacheDir when one was kept for this
// very file and the folders it reads have not changed since (probeCache).
func ProbePython(ctx context.Context, path string, o ResolveOptions) (Python, error) {
	cache := probeCache{dir: o.CacheDir}
	if py, ok := cache.load(path, o.Worker); ok {
		return py, nil
	}
	var source io.Reader
	if o.Worker {
		source = strings.NewReader(workerPy)
	}
	py, err := runProbe(ctx, path, cache, source)
	if err != nil || !o.Worker || o.Ahead {
		return py, err
	}
	if py.Worker, err = py.workerCode(ctx); err != nil {
		return Python{}, err
	}
	py.compiling = nil
	return py, nil
}

// runProbe runs the probe with the interpreter at path and returns at its
// answer line, once the probe has ended; with source (worker.py, which the
// probe reads on stdin and compiles), the compiled worker, the line after
// the answer, follows in Python.compiling instead, and the probe ends
// meanwhile. What it learnt is kept in cache when the probe has ended.
func runProbe(ctx context.Context, path string, cache probeCache, source io.Reader) (Python, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, "-I", "-c", probe)
	cmd.Env = probeEnvironment(path)
	withWorker := source != nil
	if withWorker {
		cmd.Args = append(cmd.Args, "worker")
		cmd.Stdin = source
	}
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Python{}, fmt.Errorf("python interpreter %s: %w", path, err)
	}
	if err := cmd.Start(); err != nil {
		return Python{}, fmt.Errorf("python interpreter %s: %w", path, err)
	}
	r := bufio.NewReader(stdout)
	// wait ends the probe: what it printed is read to the end first.
	wait := func() ([]byte, error) {
		rest, rerr := io.ReadAll(r)
		if err := cmd.Wait(); err != nil {
			return nil, fmt.Errorf("python interpreter %s: %w: %s", path, err, bytes.TrimSpace(cut(stderr.Bytes(), 2000)))
		}
		if rerr != nil {
			return nil, fmt.Errorf("python interpreter %s: %w", path, rerr)
		}
		return rest, nil
	}
	answer, err := r.ReadBytes('\n')
	answer = bytes.TrimSuffix(answer, []byte("\n"))
	py, perr := parseProbe(path, answer, nil, false)
	if err != nil || perr != nil || !withWorker {
		// No answer to go on: how the process ended says why, before
		// what the answer lacks.
		if _, werr := wait(); werr != nil {
			return Python{}, werr
		}
		if perr == nil {
			cache.store(path, false, py, answer, nil)
		}
		return py, perr
	}
	c := &compiledWorker{done: make(chan struct{})}
	py.compiling = c
	go func() {
		defer close(c.done)
		rest, err := wait()
		if err != nil {
			c.err = err
			return
		}
		compiled := bytes.TrimSpace(rest)
		full, err := parseProbe(path, answer, compiled, true)
		if err != nil {
			c.err = err
			return
		}
		c.code = full.Worker
		cache.store(path, true, full, answer, compiled)
	}()
	return py, nil
}

// probeEnvironment is the probe's environment: the locale variables the
// graders get (environment), so that it decodes the search path as they
// will, and none of gradegate's own, which holds its tokens
// (GITHUB_TOKEN, OPENAI_API_KEY): what runs first in an interpreter, its
// site-packages' .pth files and sitecustomize, may come from a pull
// request's requirements, and under -I no variable changes the search path.
// A script (a version manager's shim) gets gradegate's environment (nil):
// it reads it to pick the interpreter.
func probeEnvironment(path string) []string {
	if isScript(path) {
		return nil
	}
	return []string{"LANG=C.UTF-8", "LC_ALL=C.UTF-8"}
}

// parseProbe reads the probe's answer line and, withWorker, its compiled
// worker in hex.
func parseProbe(path string, answer, compiled []byte, withWorker bool) (Python, error) {
	var worker []byte
	if withWorker {
		var err error
		if worker, err = hex.DecodeString(string(compiled)); err != nil {
			return Python{}, fmt.Errorf("python interpreter %s: reading the compiled worker: %w", path, err)
		}
		if len(worker) == 0 {
			worker = nil
		}
	}
	var got struct {
		Executable string   `json:"executable"`
		Prefix     string   `json:"prefix"`
		BasePrefix string   `json:"base_prefix"`
		Path       []string `json:"path"`
		Version    string   `json:"version"`
		Site       []string `json:"site"`
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
		siteDirs:   got.Site,
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
