//go:build linux

package worker

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gradegate/gradegate/gate/grading"
)

// fakeProbe writes an interpreter that answers the probe with answer, then
// waits until its gate (a FIFO) is opened and prints second, and exits with
// code; the FIFO's path is returned.
func fakeProbe(t *testing.T, answer, second string, code int) (python, gate string) {
	t.Helper()
	dir := t.TempDir()
	gate = filepath.Join(dir, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	python = filepath.Join(dir, "python3")
	script := "#!/bin/sh\ncat >/dev/null\nprintf '%s\\n' '" + answer + "'\nread x < '" + gate + "'\n"
	if second != "" {
		script += "printf '%s\\n' '" + second + "'\n"
	}
	script += "echo 'probe says goodbye' >&2\nexit " + string(rune('0'+code)) + "\n"
	mustWrite(t, python, script, 0o755)
	return python, gate
}

// release opens the fake probe's gate, so it prints the rest and exits.
func release(t *testing.T, gate string) {
	t.Helper()
	f, err := os.OpenFile(gate, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("go\n")
	f.Close()
}

// probeAheadOf is ProbePython with Ahead, guarded against a probe that
// waits for the compile: the fake one would never finish then.
func probeAheadOf(t *testing.T, probe func() (Python, error)) (Python, error) {
	t.Helper()
	type result struct {
		py  Python
		err error
	}
	done := make(chan result, 1)
	go func() {
		py, err := probe()
		done <- result{py, err}
	}()
	select {
	case r := <-done:
		return r.py, r.err
	case <-time.After(30 * time.Second):
		t.Fatal("ProbePython with Ahead waited for the compiled worker")
		return Python{}, nil
	}
}

// aheadOf is ProbePython of path with Ahead.
func aheadOf(path string) func() (Python, error) {
	return func() (Python, error) {
		return ProbePython(context.Background(), path, ResolveOptions{Worker: true, Ahead: true})
	}
}

// TestProbeAhead: with Ahead, the interpreter's answer comes back while the
// probe still compiles the worker; the code follows (or the probe's failure
// does), and a probe that never answered fails as before.
func TestProbeAhead(t *testing.T) {
	const answer = `{"executable": "/usr/bin/python3", "prefix": "/usr", "base_prefix": "/usr", "path": ["/usr/lib/python3.11"], "version": "3.11.2", "site": []}`
	t.Run("the code follows", func(t *testing.T) {
		path, gate := fakeProbe(t, answer, "00ff", 0)
		py, err := probeAheadOf(t, aheadOf(path))
		if err != nil {
			t.Fatal(err)
		}
		if py.Executable != "/usr/bin/python3" || py.Version != "3.11.2" || py.Worker != nil || !py.compiledAhead() {
			t.Fatalf("answer %+v", py)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := py.workerCode(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("workerCode before the compile ended: %v, want it to wait", err)
		}
		release(t, gate)
		code, err := py.workerCode(context.Background())
		if err != nil || string(code) != "\x00\xff" {
			t.Fatalf("workerCode = %x, %v", code, err)
		}
	})
	t.Run("no code", func(t *testing.T) {
		path, gate := fakeProbe(t, answer, "", 0)
		py, err := probeAheadOf(t, aheadOf(path))
		if err != nil {
			t.Fatal(err)
		}
		release(t, gate)
		if code, err := py.workerCode(context.Background()); code != nil || err != nil {
			t.Fatalf("an interpreter that could not compile: %x, %v", code, err)
		}
	})
	t.Run("fails after answering", func(t *testing.T) {
		path, gate := fakeProbe(t, answer, "00", 1)
		py, err := probeAheadOf(t, aheadOf(path))
		if err != nil {
			t.Fatal(err)
		}
		release(t, gate)
		if _, err := py.workerCode(context.Background()); err == nil || !strings.Contains(err.Error(), "exit status 1") || !strings.Contains(err.Error(), "probe says goodbye") {
			t.Fatalf("workerCode = %v, want the probe's exit and stderr", err)
		}
	})
	t.Run("no answer", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "python3")
		mustWrite(t, path, "#!/bin/sh\ncat >/dev/null\necho 'no such thing' >&2\nexit 1\n", 0o755)
		if _, err := probeAheadOf(t, aheadOf(path)); err == nil || !strings.Contains(err.Error(), "no such thing") {
			t.Fatalf("ProbePython = %v, want the probe's failure", err)
		}
	})
	t.Run("a real interpreter", func(t *testing.T) {
		// The source is held back until the answer is in: the probe must
		// send its answer before it reads and compiles the worker.
		want := python(t)
		r, w := io.Pipe()
		got, err := probeAheadOf(t, func() (Python, error) { return runProbe(context.Background(), want.Executable, probeCache{}, r) })
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			io.WriteString(w, workerPy)
			w.Close()
		}()
		code, err := got.workerCode(context.Background())
		if err != nil || string(code) != string(want.Worker) {
			t.Fatalf("the compiled worker differs from ResolvePythonWorker's (%d and %d bytes): %v", len(code), len(want.Worker), err)
		}
	})
}

// TestAheadPools: pools whose interpreter's worker is still being compiled,
// or could not be, start their processes from the boot script and grade
// alike; one whose probe failed does not start.
func TestAheadPools(t *testing.T) {
	const src = "def grade(sample, item):\n    return 1.0 if sample['v'] == item['expected'] else 0.0\n"
	base := python(t)
	pending := func(code []byte, err error) Python {
		py := base
		py.Worker = nil
		c := &compiledWorker{done: make(chan struct{}), code: code, err: err}
		close(c.done)
		py.compiling = c
		return py
	}
	for name, py := range map[string]Python{"compiled": pending(base.Worker, nil), "source": pending(nil, nil)} {
		t.Run(name, func(t *testing.T) {
			p := newPool(t, py, src, nil)
			if p.argv[len(p.argv)-1] != workerBoot {
				t.Fatal("the pool does not start from the boot script")
			}
			got, err := p.Grade(context.Background(), []grading.Task{task("a", map[string]any{"v": 1}), task("b", map[string]any{"v": 2})})
			if err != nil {
				t.Fatal(err)
			}
			if got[0].Score == nil || *got[0].Score != 1 || got[1].Score == nil || *got[1].Score != 0 {
				t.Errorf("outcomes %+v", got)
			}
		})
	}
	t.Run("the probe failed", func(t *testing.T) {
		_, err := New(context.Background(), Config{Source: []byte(src), Workers: 1, Python: pending(nil, errors.New("python interpreter x: exit status 9")), Sandbox: newSandbox(t)})
		if err == nil || !strings.Contains(err.Error(), "exit status 9") {
			t.Fatalf("New = %v, want the probe's failure", err)
		}
	})
}

// TestProbeEnvironment: a .pth file of the interpreter's site-packages, which
// runs before the probe's first line, sees none of gradegate's environment,
// only the graders' locale; a shim still gets the whole environment.
func TestProbeEnvironment(t *testing.T) {
	base := python(t)
	dir := t.TempDir()
	venv := filepath.Join(dir, "venv")
	if out, err := exec.Command(base.Executable, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		t.Skipf("no venv module: %v: %s", err, out)
	}
	sites, _ := filepath.Glob(filepath.Join(venv, "lib", "python*", "site-packages"))
	if len(sites) != 1 {
		t.Fatalf("site-packages of the venv: %v", sites)
	}
	seen := filepath.Join(dir, "seen")
	mustWrite(t, filepath.Join(sites[0], "spy.pth"), "import os; open("+strconv.Quote(seen)+", 'w').write(repr(sorted(os.environ.items())))\n", 0o644)
	t.Setenv("GRADEGATE_TEST_SECRET", "hunter2")
	interpreter := filepath.Join(venv, "bin", "python3")
	for _, ahead := range []bool{false, true} {
		os.Remove(seen)
		py, err := ProbePython(context.Background(), interpreter, ResolveOptions{Worker: true, Ahead: ahead})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := py.workerCode(context.Background()); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(seen)
		if err != nil {
			t.Fatalf("the .pth file did not run: %v", err)
		}
		if want := `[('LANG', 'C.UTF-8'), ('LC_ALL', 'C.UTF-8')]`; !strings.Contains(string(got), want) || strings.Contains(string(got), "hunter2") || strings.Count(string(got), "', '") != 2 {
			t.Errorf("ahead=%v: the .pth file saw %s, want only %s", ahead, got, want)
		}
	}
	shim := filepath.Join(dir, "shim")
	mustWrite(t, shim, "#!/bin/sh\nexec "+interpreter+" \"$@\"\n", 0o755)
	os.Remove(seen)
	if _, err := ProbePython(context.Background(), shim, ResolveOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(seen); !strings.Contains(string(got), "hunter2") {
		t.Errorf("a shim's interpreter saw %s, want gradegate's environment", got)
	}
}
