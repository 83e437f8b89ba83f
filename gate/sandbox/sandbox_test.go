//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gradegate/gradegate/gate/sandbox/confine"
)

// newSandbox returns a layered Sandbox whose launcher is this test binary
// (see TestMain).
func newSandbox(t testing.TB) *Sandbox {
	t.Helper()
	s, err := New(WithLauncher(os.Args[0]))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var pythonOnce = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
})

// python returns an interpreter the slot uids can execute: the python3 on
// PATH, or, when that one is out of their reach (pyenv under /root, mode
// 0700), a system one.
func python(t testing.TB, s *Sandbox) string {
	t.Helper()
	py, err := pythonOnce()
	if err != nil {
		t.Skipf("no python3: %v", err)
	}
	first := s.CheckInterpreter(py)
	if first == nil {
		return py
	}
	for _, alt := range []string{"/usr/local/bin/python3", "/usr/bin/python3"} {
		if _, err := os.Stat(alt); err == nil && s.CheckInterpreter(alt) == nil {
			t.Logf("using %s: %v", alt, first)
			return alt
		}
	}
	t.Skipf("no interpreter reachable by the grader uids: %v", first)
	return ""
}

// graderEnv is the allowlisted environment a worker would give a grader.
func graderEnv(scratch string) []string {
	return []string{"PATH=/usr/bin:/bin", "HOME=" + scratch, "TMPDIR=" + scratch, "LC_ALL=C.UTF-8"}
}

type result struct {
	stdout, stderr string
	err            error
}

// runPython runs code with the interpreter in a fresh scratch directory of
// slot and returns what it printed.
func runPython(t *testing.T, s *Sandbox, spec Spec, code string, args ...string) result {
	t.Helper()
	dir, cleanup, err := s.Scratch(spec.Slot)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cleanup(); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	spec.ScratchDir = dir
	argv := append([]string{python(t, s), "-I", "-S", "-c", code}, args...)
	cmd := s.Command(spec, argv, graderEnv(dir))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = runContext(ctx, cmd)
	// Whatever the grader left running in its group goes too.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	return result{stdout.String(), stderr.String(), err}
}

func TestStatusIsMeasured(t *testing.T) {
	s := newSandbox(t)
	st := s.Status()
	t.Logf("sandbox: %s", s)
	if !st.Seccomp || !st.Rlimits || st.Unsandboxed {
		t.Errorf("Status() = %+v, want seccomp and rlimits on", st)
	}
	if want := min(confine.KernelLandlockABI(), confine.MaxLandlockABI); st.LandlockABI != want {
		t.Errorf("LandlockABI = %d, want the kernel's %d", st.LandlockABI, want)
	}
	if os.Geteuid() != 0 {
		if st.UID != -1 {
			t.Errorf("UID = %d, want -1 (unchanged)", st.UID)
		}
	} else if st.UID < BaseUID || (st.UID-BaseUID)%UIDBlockSize != 0 || st.UID != s.SlotUID(0) {
		t.Errorf("UID = %d, want the first uid of a block from %d (SlotUID(0) = %d)", st.UID, BaseUID, s.SlotUID(0))
	}
	if got := s.probe.FDs; !slices.Equal(got, []int{0, 1, 2, 3, 4}) {
		t.Errorf("probe descriptors = %v, want 0-4", got)
	}
	if !slices.Equal(s.probe.Env, probeEnv) {
		t.Errorf("probe environment = %q, want %q", s.probe.Env, probeEnv)
	}
}

func TestUnsandboxed(t *testing.T) {
	s, err := New(WithLauncher(os.Args[0]), WithUnsandboxed(true))
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Status(); !st.Unsandboxed || st.Seccomp || st.UID != -1 {
		t.Errorf("Status() = %+v, want unsandboxed", st)
	}
	t.Setenv("GITHUB_TOKEN", "ghs_secret")
	r := runPython(t, s, Spec{}, `import os, socket; socket.socket(socket.AF_INET).close(); print(sorted(os.environ))`)
	if r.err != nil {
		t.Fatalf("%v: %s", r.err, r.stderr)
	}
	// Unsandboxed still means an allowlisted environment.
	if want := "['HOME', 'LC_ALL', 'PATH', 'TMPDIR']\n"; r.stdout != want {
		t.Errorf("environment = %s, want %s", r.stdout, want)
	}
}

func TestScratch(t *testing.T) {
	s := newSandbox(t)
	dir, cleanup, err := s.Scratch(3)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("mode = %v, want 0700", fi.Mode().Perm())
	}
	st := fi.Sys().(*syscall.Stat_t)
	if want := s.SlotUID(3); want >= 0 && (int(st.Uid) != want || int(st.Gid) != want) {
		t.Errorf("owner = %d:%d, want %d", st.Uid, st.Gid, want)
	}
	// A grader may leave a directory nobody can write.
	locked := filepath.Join(dir, "locked")
	if err := os.MkdirAll(filepath.Join(locked, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	if err := cleanup(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("scratch directory still there: %v", err)
	}
}

func TestReadPaths(t *testing.T) {
	tests := []struct {
		name        string
		interpreter string
		want        []string
		notWant     []string
	}{
		{"prefix of a bin directory", "/opt/py/bin/python3", []string{"/opt/py/bin/python3", "/opt/py"}, nil},
		{"never the root", "/bin/python3", []string{"/bin/python3"}, []string{"/"}},
		{"no prefix outside bin", "/opt/tool/python", []string{"/opt/tool/python"}, []string{"/opt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := readPaths(tt.interpreter, []string{"/srv/grader.py"})
			for _, w := range append(tt.want, "/srv/grader.py", "/usr") {
				if !slices.Contains(got, w) {
					t.Errorf("readPaths missing %s: %v", w, got)
				}
			}
			for _, n := range tt.notWant {
				if slices.Contains(got, n) {
					t.Errorf("readPaths contains %s: %v", n, got)
				}
			}
		})
	}
}

func TestLaunchRejectsBadSpec(t *testing.T) {
	for _, args := range [][]string{nil, {"{"}, {"{", "--", "/bin/true"}, {"{}", "x", "/bin/true"}} {
		cmd := exec.Command(os.Args[0], append([]string{LauncherArg}, args...)...)
		cmd.Env = launchEnv(t, nil) // as Command starts it: the spec is what it refuses
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != confine.ExitLaunchUsage || !strings.Contains(stderr.String(), "gradegate launcher:") {
			t.Errorf("launcher %q: %v, %q; want exit %d", args, err, stderr.String(), confine.ExitLaunchUsage)
		}
		if strings.Contains(stderr.String(), "GOGC") {
			t.Errorf("launcher %q refused its environment, not its spec: %q", args, stderr.String())
		}
	}
}

// launchEnv is confine.Env's environment for a grader's env.
func launchEnv(t *testing.T, env []string) []string {
	t.Helper()
	e, err := confine.Env(env)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestLaunchRefusesGCOn: a launcher whose collector is on (GOGC=off not
// the first GOGC of its environment, as confine.Env makes it) refuses a
// spec it would otherwise run, and a grader it runs gets the environment
// without the entry; Command refuses a grader environment that sets GOGC
// itself, which would turn the launcher's collector back on.
func TestLaunchRefusesGCOn(t *testing.T) {
	s := newSandbox(t)
	dir, cleanup, err := s.Scratch(0)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	ls := s.launchSpec(Spec{ScratchDir: dir}, "/usr/bin/env")
	for _, tt := range []struct {
		name string
		env  []string
		code int
		out  string
	}{
		{"as Command starts it", launchEnv(t, []string{"A=1", "B=2"}), 0, "A=1\nB=2\n"},
		{"no GOGC", []string{"A=1"}, confine.ExitLaunchUsage, ""},
		{"another GOGC", []string{"GOGC=50", "A=1"}, confine.ExitLaunchUsage, ""},
	} {
		cmd := exec.Command(os.Args[0], LauncherArg, ls.Encode(), "--", "/usr/bin/env")
		cmd.Env, cmd.Dir = tt.env, dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // as Command does
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if code != tt.code || stdout.String() != tt.out {
			t.Errorf("%s: exit %d, printed %q, %q; want exit %d and %q", tt.name, code, stdout.String(), stderr.String(), tt.code, tt.out)
		}
		if tt.code != 0 && !strings.Contains(stderr.String(), "started without GOGC=off") {
			t.Errorf("%s: stderr %q does not say why", tt.name, stderr.String())
		}
	}
	cmd := s.Command(Spec{ScratchDir: dir}, []string{"/usr/bin/env"}, []string{"A=1", "GOGC=50"})
	if err := cmd.Run(); err == nil || !strings.Contains(err.Error(), "GOGC") {
		t.Errorf("Command with GOGC in the grader's environment: %v, want an error that names GOGC", err)
	}
}

func TestLaunchFailsClosedOnLimits(t *testing.T) {
	s := newSandbox(t)
	dir, cleanup, err := s.Scratch(0)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	ls := s.launchSpec(Spec{ScratchDir: dir}, "/bin/true")
	ls.Limits = append(ls.Limits, confine.Rlimit{Name: "BOGUS", Resource: 1000, Value: 1})
	cmd := exec.Command(os.Args[0], LauncherArg, ls.Encode(), "--", "/bin/true")
	cmd.Env = launchEnv(t, nil)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != confine.ExitLaunchRlimit {
		t.Errorf("launch with a bad limit: %v, %q; want exit %d", err, stderr.String(), confine.ExitLaunchRlimit)
	}
}

// fakeLauncher writes a launcher script that fails with code when its spec
// (the second argument) contains match, and otherwise runs this test binary.
func fakeLauncher(t *testing.T, match string, code int) string {
	t.Helper()
	return fakeLauncherIn(t, t.TempDir(), os.Args[0], match, code)
}

// fakeLauncherIn is fakeLauncher writing into dir and running binary.
func fakeLauncherIn(t *testing.T, dir, binary, match string, code int) string {
	t.Helper()
	script := filepath.Join(dir, "launcher")
	body := fmt.Sprintf("#!/bin/sh\ncase \"$2\" in *%s*) echo 'gradegate launcher: refused by the test' >&2; exit %d;; esac\nexec %s \"$@\"\n", match, code, binary)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

func TestNewRefusesWithoutNetworkBoundary(t *testing.T) {
	_, err := New(WithLauncher(fakeLauncher(t, `'"seccomp":true'`, confine.ExitLaunchSeccomp)))
	if !errors.Is(err, ErrNoNetworkBoundary) {
		t.Fatalf("New = %v, want ErrNoNetworkBoundary", err)
	}
	// --unsandboxed still works, and says so.
	s, err := New(WithLauncher(fakeLauncher(t, `'"seccomp":true'`, confine.ExitLaunchSeccomp)), WithUnsandboxed(true))
	if err != nil || !s.Status().Unsandboxed {
		t.Fatalf("New(unsandboxed) = %v, %v", s, err)
	}
	rep := Doctor(context.Background(), s, "")
	if rep.NetworkBoundary {
		t.Errorf("Doctor reports a network boundary: %+v", rep.Checks)
	}
}

func TestNewRefusesWithoutLandlock(t *testing.T) {
	if confine.KernelLandlockABI() == 0 {
		t.Skip("no Landlock on this kernel")
	}
	launcher := fakeLauncher(t, `'"landlock":{'`, confine.ExitLaunchLandlock)
	_, err := New(WithLauncher(launcher))
	if !errors.Is(err, ErrNoFilesystemBoundary) || errors.Is(err, ErrNoNetworkBoundary) || !strings.Contains(err.Error(), "enforcing it failed") {
		t.Fatalf("New = %v, want ErrNoFilesystemBoundary saying enforcing failed", err)
	}
	s, err := New(WithLauncher(launcher), WithUnsandboxed(true))
	if err != nil || !s.Status().Unsandboxed {
		t.Fatalf("New(unsandboxed) = %v, %v", s, err)
	}
	if rep := Doctor(context.Background(), s, ""); rep.FilesystemBoundary {
		t.Errorf("Doctor reports a filesystem boundary: %+v", rep.Checks)
	}
}

func TestNewDropsRefusedUIDSwitch(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: only root switches uids")
	}
	s, err := New(WithLauncher(fakeLauncher(t, `'"uid":6'`, confine.ExitLaunchCredentials)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if st := s.Status(); st.UID != -1 || !st.Seccomp {
		t.Errorf("Status() = %+v, want seccomp with the uid unchanged", st)
	}
	if uid := s.SlotUID(1); uid != -1 {
		t.Errorf("SlotUID(1) = %d, want -1", uid)
	}
}
