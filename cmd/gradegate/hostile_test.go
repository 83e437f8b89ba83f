//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gradegate/gradegate/gate/digest"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// noLandlockArg, as the first argument of this test binary run as
// gradegate, makes the landlock_* syscalls fail with ENOSYS for it and
// every process it starts, as on a kernel without Landlock. Only the test
// binary knows it.
const noLandlockArg = "__test-no-landlock"

func init() {
	if len(os.Args) > 1 && os.Args[1] == noLandlockArg {
		if err := denyLandlock(); err != nil {
			fmt.Fprintln(os.Stderr, "denying Landlock:", err)
			os.Exit(3)
		}
		os.Args = append(os.Args[:1], os.Args[2:]...)
	}
}

// denyLandlock installs a seccomp filter on every thread under which the
// landlock_* syscalls fail with ENOSYS.
func denyLandlock() error {
	jeq := func(nr uint32, skip uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: nr, Jt: skip}
	}
	f := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // syscall number
		jeq(unix.SYS_LANDLOCK_CREATE_RULESET, 3),
		jeq(unix.SYS_LANDLOCK_ADD_RULE, 2),
		jeq(unix.SYS_LANDLOCK_RESTRICT_SELF, 1),
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog))); errno != 0 {
		return errno
	}
	return nil
}

// The unprivileged user and its docker group of the non-root settings.
const (
	hostileUser  = 50000
	hostileGroup = 50001
	// landlockUser is the unprivileged user of the runs without Landlock.
	landlockUser = 50002
)

// hostileSecrets are in gradegate's environment; none may reach a grader,
// the results or the output.
var hostileSecrets = map[string]string{
	"GITHUB_TOKEN":          "ghs_hostile_test_token",
	"OPENAI_API_KEY":        "sk-hostile-test-key",
	"ACTIONS_RUNTIME_TOKEN": "actions-hostile-test",
}

// The secrets the world plants outside the grader's reach.
const (
	checkoutToken = "c2VjcmV0LWNoZWNrb3V0LXRva2Vu" // in .git/config's extraheader
	shellSecret   = "ghs_shell_secret"             // in the parent shell's environment
	eventSecret   = "event-payload-secret"
)

// hostileWorld is what a CI runner leaves around gradegate: a workspace
// whose .git/config holds the checkout token, the event payload, the
// GITHUB_ENV file, the shell that started gradegate, a docker.sock whose
// group gradegate's user may be in, a 0600 socket of that user, an
// abstract socket and a loopback listener. owner is gradegate's uid.
type hostileWorld struct {
	dir      string
	vars     map[string]string
	accepted atomic.Int32
	shell    *exec.Cmd
	// escapes are the paths outside scratch the write attacks aim at, and
	// sleep the argument of the outliving child: each world has its own,
	// so worlds can run side by side.
	escapes []string
	sleep   string
}

// worlds numbers the hostile worlds of this test process.
var worlds atomic.Int32

func newHostileWorld(t *testing.T, owner int) *hostileWorld {
	t.Helper()
	n := worlds.Add(1)
	w := &hostileWorld{dir: searchableTempDir(t), vars: map[string]string{}, sleep: strconv.Itoa(3700 + int(n))}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Chmod(w.dir, 0o755))
	tag := fmt.Sprintf("%d-%d", os.Getpid(), n)
	w.escapes = []string{"/tmp/gradegate-hostile-escape-" + tag, "/dev/shm/gradegate-hostile-escape-" + tag}
	for _, p := range w.escapes {
		os.Remove(p) // left by an earlier run
	}
	ws := filepath.Join(w.dir, "workspace")
	must(os.MkdirAll(filepath.Join(ws, ".git"), 0o755))
	must(os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic "+checkoutToken+"\n"), 0o644))
	must(os.WriteFile(filepath.Join(ws, "README.md"), []byte("the workspace\n"), 0o644))
	event := filepath.Join(w.dir, "event.json")
	must(os.WriteFile(event, []byte(`{"secret": "`+eventSecret+`"}`), 0o644))
	githubEnv := filepath.Join(w.dir, "github_env")
	must(os.WriteFile(githubEnv, nil, 0o644))
	must(os.Chown(githubEnv, owner, owner))

	// The shell that started gradegate: same user, every step secret in
	// its environment.
	w.shell = exec.Command("/bin/sleep", "300")
	w.shell.Env = []string{"GITHUB_TOKEN=" + shellSecret}
	if owner != 0 {
		w.shell.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(owner), Gid: uint32(owner)}}
	}
	must(w.shell.Start())
	t.Cleanup(func() { _ = w.shell.Process.Kill(); _ = w.shell.Wait() })

	listen := func(name string) {
		go func() {
			ln, err := net.Listen("unix", name)
			if err != nil {
				return
			}
			t.Cleanup(func() { ln.Close() })
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				w.accepted.Add(1)
				c.Close()
			}
		}()
	}
	sockDir := filepath.Join(w.dir, "run")
	must(os.Mkdir(sockDir, 0o755))
	docker := filepath.Join(sockDir, "docker.sock")
	own := filepath.Join(sockDir, "agent.sock")
	for _, s := range []struct {
		path     string
		uid, gid int
		mode     os.FileMode
	}{{docker, 0, hostileGroup, 0o660}, {own, owner, owner, 0o600}} {
		ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: s.path, Net: "unix"})
		must(err)
		t.Cleanup(func() { ln.Close() })
		must(os.Chown(s.path, s.uid, s.gid))
		must(os.Chmod(s.path, s.mode))
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				w.accepted.Add(1)
				c.Close()
			}
		}()
	}
	abstract := "gradegate-hostile-" + tag
	listen("@" + abstract)

	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	t.Cleanup(func() { tcp.Close() })
	go func() {
		for {
			c, err := tcp.Accept()
			if err != nil {
				return
			}
			w.accepted.Add(1)
			c.Close()
		}
	}()

	w.vars = map[string]string{
		"WORKSPACE":   ws,
		"EVENT":       event,
		"GITHUB_ENV":  githubEnv,
		"SHELLPID":    strconv.Itoa(w.shell.Process.Pid),
		"DOCKER_SOCK": docker,
		"OWN_SOCK":    own,
		"ABSTRACT":    abstract,
	}
	w.vars["PORT"] = strconv.Itoa(tcp.Addr().(*net.TCPAddr).Port)
	return w
}

// searchableTempDir is a temporary directory every uid may search
// (t.TempDir's parent is private to root).
func searchableTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "gradegate-hostile-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// suiteOptions narrow the hostile suite: only keeps just these cases, drop
// leaves these out, and timeout replaces timeout_seconds. determinism keeps
// the determinism check's case sample, under which every attack is graded
// twice more, by fresh processes; without it only the canaries are graded
// twice (gate.determinism.sample: 0).
type suiteOptions struct {
	only, drop  []string
	timeout     int
	determinism bool
}

func (o suiteOptions) keep(id string) bool {
	return (o.only == nil || slices.Contains(o.only, id)) && !slices.Contains(o.drop, id)
}

// diskCase writes past the 1 GiB scratch budget: more than a second of
// disk writes, so it runs on its own, with a longer timeout.
const diskCase = "disk"

// suite copies the hostile suite into a new folder owned by owner, with
// the world's paths in its cases and grader.isolation set, and pins the
// new digests as `gradegate pin` would. It returns the manifest's path.
func (w *hostileWorld) suite(t *testing.T, isolation string, owner int, o suiteOptions) string {
	t.Helper()
	src := filepath.Join("..", "..", "testdata", "examples", "hostile")
	dir, err := os.MkdirTemp(w.dir, "suite-"+isolation+"-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"GRADER": filepath.Join(dir, "grader.py")}
	for k, v := range w.vars {
		vars[k] = v
	}
	for _, name := range []string{"gradegate.yaml", "grader.py", "cases.jsonl"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "gradegate.yaml" {
			b = bytes.Replace(b, []byte("  memory_mb: 256\n"), []byte("  memory_mb: 256\n  isolation: "+isolation+"\n"), 1)
			if o.timeout > 0 {
				b = bytes.Replace(b, []byte("  timeout_seconds: 3\n"), []byte(fmt.Sprintf("  timeout_seconds: %d\n", o.timeout)), 1)
			}
			if !o.determinism {
				b = bytes.Replace(b, []byte("\ngate:\n"), []byte("\ngate:\n  determinism: {sample: 0}\n"), 1)
			}
		}
		if name == "cases.jsonl" {
			var kept [][]byte
			for _, line := range bytes.SplitAfter(b, []byte("\n")) {
				var c struct {
					Item struct {
						CaseID string `json:"case_id"`
					} `json:"item"`
				}
				if json.Unmarshal(line, &c) == nil && o.keep(c.Item.CaseID) {
					kept = append(kept, line)
				}
			}
			b = bytes.Join(kept, nil)
			b = bytes.ReplaceAll(b, []byte(`"port": 9`), []byte(`"port": `+vars["PORT"]))
			b = bytes.ReplaceAll(b, []byte(`"sleep": "371"`), []byte(`"sleep": "`+w.sleep+`"`))
			b = bytes.ReplaceAll(b, []byte(`"/tmp/gradegate-hostile-escape"`), []byte(`"`+w.escapes[0]+`"`))
			b = bytes.ReplaceAll(b, []byte(`"/dev/shm/gradegate-hostile-escape"`), []byte(`"`+w.escapes[1]+`"`))
			for k, v := range vars {
				b = bytes.ReplaceAll(b, []byte("@"+k+"@"), []byte(v))
			}
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	digests := map[string]string{}
	for section, name := range map[string]string{"dataset": "cases.jsonl", "grader": "grader.py"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		d, err := manifest.Digest(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		digests[section] = d
	}
	path := filepath.Join(dir, "gradegate.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := manifest.Pin(data, digests)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pinned, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, path, filepath.Join(dir, "grader.py"), filepath.Join(dir, "cases.jsonl")} {
		if err := os.Chown(p, owner, owner); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

type hostileCase struct {
	caseID string
	status string
	class  grading.Class
}

// hostileCases is how every case of the suite must end when the sandbox
// holds, under Landlock ABI landlockABI.
func hostileCases(isolation string, landlockABI int) []hostileCase {
	// Under isolation: case the grader's parent is its own worker, which
	// shares its uid and process group: killing it is a crash of the
	// grader's own making, not a breach. Under isolation: worker the parent
	// is gradegate itself, which the sandbox protects.
	killGate := grading.ClassSandboxViolation
	if isolation == "case" {
		killGate = grading.ClassWorkerCrash
	}
	// Below Landlock ABI 9 the sandbox refuses the UNIX socket itself;
	// from ABI 9 the grader gets one, and Landlock refuses the connect.
	unixSocket := grading.ClassSandboxViolation
	if landlockABI >= 9 {
		unixSocket = grading.ClassGraderException
	}
	return []hostileCase{
		{"honest-pass", results.StatusPass, grading.ClassOK},
		{"honest-fail", results.StatusFail, grading.ClassOK},
		{"connect", results.StatusError, grading.ClassSandboxViolation},
		{"secrets", results.StatusPass, grading.ClassOK}, // it raises if it finds any
		{"parent-environ", results.StatusError, grading.ClassSandboxViolation},
		{"write-outside", results.StatusError, grading.ClassSandboxViolation},
		{"memory", results.StatusError, grading.ClassMemoryExceeded},
		{"fork-bomb", results.StatusError, grading.ClassSandboxViolation},
		{"busy-loop", results.StatusError, grading.ClassTimeout},
		{"outlive", results.StatusPass, grading.ClassOK},
		{"exit", results.StatusError, grading.ClassWorkerCrash},
		{"segfault", results.StatusError, grading.ClassWorkerCrash},
		{"kill-gate", results.StatusError, killGate},
		{"flood", results.StatusPass, grading.ClassOK},
		{"forge", results.StatusFail, grading.ClassOK},
		{"big-file", results.StatusError, grading.ClassSandboxViolation},
		{"setsid", results.StatusError, grading.ClassGraderException},
		{"read-git-config", results.StatusError, grading.ClassGraderException},
		{"read-event", results.StatusError, grading.ClassGraderException},
		{"read-workspace", results.StatusError, grading.ClassGraderException},
		{"shell-environ", results.StatusError, grading.ClassSandboxViolation},
		{"proc-cmdline", results.StatusError, grading.ClassSandboxViolation},
		{"proc-net-unix", results.StatusError, grading.ClassSandboxViolation},
		{"github-env", results.StatusError, grading.ClassSandboxViolation},
		{"rewrite-grader", results.StatusError, grading.ClassSandboxViolation},
		{"write-shm", results.StatusError, grading.ClassSandboxViolation},
		{"docker-sock", results.StatusError, unixSocket},
		{"own-socket", results.StatusError, unixSocket},
		{"abstract-socket", results.StatusError, unixSocket},
		{"sysv-shm", results.StatusError, grading.ClassGraderException},
		{"mq", results.StatusError, grading.ClassGraderException},
		{"memory-total", results.StatusError, grading.ClassMemoryExceeded},
		{"disk", results.StatusError, grading.ClassSandboxViolation},
		{"honest-after", results.StatusPass, grading.ClassOK},
	}
}

// check checks a finished run: every case ended as it must, nothing
// reached a socket or a listener, no secret reached the results or the
// output, and nothing outside scratch changed.
func (w *hostileWorld) check(t *testing.T, isolation string, o suiteOptions, manifestPath, resultsPath, stdout string) {
	t.Helper()
	res := readResultsFile(t, resultsPath)
	byID := map[string]results.CaseResult{}
	for _, c := range res.Cases {
		byID[c.CaseID] = c
	}
	var want []hostileCase
	for _, c := range hostileCases(isolation, res.Sandbox.LandlockABI) {
		if o.keep(c.caseID) {
			want = append(want, c)
		}
	}
	if len(byID) != len(want) {
		t.Errorf("results hold %d cases, want %d", len(byID), len(want))
	}
	for _, tt := range want {
		t.Run(tt.caseID, func(t *testing.T) {
			c, ok := byID[tt.caseID]
			if !ok {
				t.Fatal("case missing from the results")
			}
			// A fork bomb of Python processes may first pass the total
			// memory bound instead of the process limit: refused either way.
			forkBomb := tt.caseID == "fork-bomb" && c.Status == results.StatusError && c.Class == grading.ClassMemoryExceeded
			if (c.Status != tt.status || c.Class != tt.class) && !forkBomb {
				msg := ""
				if c.Error != nil {
					msg = c.Error.Message
				}
				t.Errorf("status %s class %s (%s), want status %s class %s; output:\n%s", c.Status, c.Class, msg, tt.status, tt.class, c.Output)
			}
		})
	}
	if n := w.accepted.Load(); n != 0 {
		t.Errorf("listeners outside the sandbox accepted %d connections from the grader", n)
	}
	for _, p := range w.escapes {
		if _, err := os.Stat(p); err == nil {
			os.Remove(p)
			t.Errorf("the grader wrote %s outside its scratch directory", p)
		}
	}
	if b, err := os.ReadFile(w.vars["GITHUB_ENV"]); err != nil || len(b) != 0 {
		t.Errorf("GITHUB_ENV now holds %q (%v)", b, err)
	}
	grader, err := os.ReadFile(filepath.Join(filepath.Dir(manifestPath), "grader.py"))
	if err != nil || bytes.Contains(grader, []byte("lambda sample, item: 1.0")) {
		t.Errorf("the grader rewrote its own file (%v)", err)
	}
	if flood := byID["flood"].Output; len(flood) > 64<<10 {
		t.Errorf("flood kept %d bytes of output, want it bounded", len(flood))
	}
	if left := processesMatching("sleep\x00" + w.sleep + "\x00"); len(left) > 0 {
		t.Errorf("a grader's child outlived the gate: pids %v", left)
	}
	raw, err := os.ReadFile(resultsPath)
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{checkoutToken, shellSecret, eventSecret}
	for _, v := range hostileSecrets {
		secrets = append(secrets, v)
	}
	for _, v := range secrets {
		if bytes.Contains(raw, []byte(v)) || strings.Contains(stdout, v) {
			t.Errorf("secret %q reached the results or the output", v)
		}
	}
	if sb := res.Sandbox; !sb.Seccomp || !sb.Rlimits || sb.LandlockABI == 0 || sb.Unsandboxed {
		t.Errorf("sandbox block %+v, want seccomp, Landlock and rlimits in force", sb)
	}
	if d := res.Determinism; o.determinism && (d == nil || d.Cases != len(want)) {
		t.Errorf("determinism check %+v, want every case graded twice more", d)
	}
}

// TestHostileGraders runs the hostile suite (testdata/examples/hostile: one
// attack on the sandbox per case) through the whole gate, as `gradegate run`
// does as root, with secrets in the gate's own environment and a world of
// secrets, sockets and listeners around it. Every attack must end
// classified, the cases after it must still be graded, the gate must live
// to write its results, and nothing may leak. Under the default isolation
// the determinism check grades every attack twice more.
func TestHostileGraders(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the sandbox gives graders their own uid only when gradegate runs as root (CI runs as root)")
	}
	t.Parallel()
	bin := gradegateBinary(t)
	for _, isolation := range []string{"worker", "case"} {
		// One after the other: the first, with its determinism check, is the
		// longest test of the package and starts as early as it can.
		t.Run("isolation="+isolation, func(t *testing.T) {
			w := newHostileWorld(t, 0)
			opts := suiteOptions{drop: []string{diskCase}, determinism: isolation == "worker"}
			manifestPath := w.suite(t, isolation, 0, opts)
			resultsPath := filepath.Join(resultsDir(t, 0), "results.json")
			code, stdout, stderr := runGradegate(t, bin, 0, "run", manifestPath, "--results", resultsPath, "--format", "json")
			if code != exitHold {
				t.Fatalf("exit %d, want %d (hold)\nstderr:\n%s", code, exitHold, stderr)
			}
			w.check(t, isolation, opts, manifestPath, resultsPath, stdout)
			if sb := readResultsFile(t, resultsPath).Sandbox; sb.UID < 60000 {
				t.Errorf("sandbox block %+v, want the graders' own uid", sb)
			}
		})
	}
}

// gradegateBinary copies this test binary, which acts as gradegate under
// that name (see TestMain), into a directory every uid can search.
func gradegateBinary(t *testing.T) string {
	t.Helper()
	dir := searchableTempDir(t)
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "gradegate")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// runGradegate runs gradegate as uid (with the hostile group) when uid is
// not 0, with the hostile secrets in its environment, and returns its exit
// code, stdout and stderr.
func runGradegate(t *testing.T, bin string, uid int, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TMPDIR=" + os.TempDir(), "HOME=/nonexistent", "NO_COLOR=1"}
	for k, v := range hostileSecrets {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if uid != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{hostileGroup}}}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

// resultsDir is a directory uid may write results to.
func resultsDir(t *testing.T, uid int) string {
	t.Helper()
	dir := searchableTempDir(t)
	if err := os.Chown(dir, uid, uid); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestHostileGradersNonRoot runs the hostile suite through a gradegate that
// runs as an unprivileged user in a docker group that owns the docker.sock
// stand-in, as on a GitHub-hosted runner: graders keep that uid and group,
// and the sandbox must hold all the same: no read of the shell's
// environment, no write to GITHUB_ENV or the grader file, no socket.
func TestHostileGradersNonRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run gradegate as another user with a supplementary group")
	}
	t.Parallel()
	bin := gradegateBinary(t)
	w := newHostileWorld(t, hostileUser)
	opts := suiteOptions{drop: []string{diskCase}}
	manifestPath := w.suite(t, "worker", hostileUser, opts)
	resultsPath := filepath.Join(resultsDir(t, hostileUser), "results.json")
	// One grader process: graders keep gradegate's uid, and a uid's process
	// limit is shared by everything it runs, so a fork bomb in one slot
	// would refuse the forks of whatever case another slot runs meanwhile
	// (memory-total's, when the two overlap).
	code, stdout, stderr := runGradegate(t, bin, hostileUser, "run", manifestPath, "--results", resultsPath, "--format", "json", "--workers", "1")
	if code != exitHold {
		t.Fatalf("exit %d, want %d (hold)\nstderr:\n%s", code, exitHold, stderr)
	}
	w.check(t, "worker", opts, manifestPath, resultsPath, stdout)
	if sb := readResultsFile(t, resultsPath).Sandbox; sb.UID != -1 {
		t.Errorf("sandbox block %+v, want the uid unchanged", sb)
	}
}

// TestHostileGradersWithoutLandlock runs the hostile suite where the
// landlock_* syscalls fail with ENOSYS, as root and as an unprivileged
// user: without a filesystem boundary gradegate refuses to grade (exit 3),
// naming what is missing, and the doctor says so; --unsandboxed grades and
// says so in the results.
func TestHostileGradersWithoutLandlock(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run gradegate as another user")
	}
	t.Parallel()
	bin := gradegateBinary(t)
	// Not hostileUser: a uid's process limit counts every process of that
	// uid, and TestHostileGradersNonRoot's fork bomb runs beside this.
	for _, uid := range []int{0, landlockUser} {
		t.Run("uid="+strconv.Itoa(uid), func(t *testing.T) {
			w := newHostileWorld(t, uid)
			manifestPath := w.suite(t, "worker", uid, suiteOptions{})
			resultsPath := filepath.Join(resultsDir(t, uid), "results.json")
			code, stdout, stderr := runGradegate(t, bin, uid, noLandlockArg, "run", manifestPath, "--results", resultsPath, "--format", "json")
			if code != exitInternal || !strings.Contains(stderr, "filesystem boundary (Landlock) cannot be established") {
				t.Errorf("exit %d, want %d naming the filesystem boundary\nstderr:\n%s", code, exitInternal, stderr)
			}
			if _, err := os.Stat(resultsPath); err == nil {
				t.Error("results written although gradegate refused to grade")
			}
			if w.accepted.Load() != 0 || strings.Contains(stdout, checkoutToken) {
				t.Error("a grader ran")
			}
			code, stdout, stderr = runGradegate(t, bin, uid, noLandlockArg, "doctor")
			if code != exitInternal || !strings.Contains(stdout, "filesystem boundary: NOT established") {
				t.Errorf("doctor: exit %d, want %d reporting no filesystem boundary\nstdout:\n%s\nstderr:\n%s", code, exitInternal, stdout, stderr)
			}
			// Unsandboxed, only the honest cases: a hostile one could kill
			// gradegate itself.
			honest := w.suite(t, "worker", uid, suiteOptions{only: []string{"honest-pass", "honest-fail", "honest-after"}})
			code, _, stderr = runGradegate(t, bin, uid, noLandlockArg, "run", honest, "--results", resultsPath, "--format", "json", "--unsandboxed")
			if code != exitPass {
				t.Fatalf("--unsandboxed: exit %d, want %d\nstderr:\n%s", code, exitPass, stderr)
			}
			if sb := readResultsFile(t, resultsPath).Sandbox; !sb.Unsandboxed {
				t.Errorf("--unsandboxed: sandbox block %+v, want unsandboxed", sb)
			}
		})
	}
}

// TestHostileScratchBudget runs the disk attack through the whole gate:
// past the 1 GiB scratch budget in files each under the file size limit.
func TestHostileScratchBudget(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the sandbox gives graders their own uid only when gradegate runs as root (CI runs as root)")
	}
	// Not in parallel with the other tests: the disk budget is measured
	// every 200 ms from outside, and a grader that writes past it and
	// returns between two measurements under load goes unseen.
	bin := gradegateBinary(t)
	w := newHostileWorld(t, 0)
	opts := suiteOptions{only: []string{"honest-pass", "honest-fail", diskCase, "honest-after"}, timeout: 30}
	manifestPath := w.suite(t, "worker", 0, opts)
	resultsPath := filepath.Join(resultsDir(t, 0), "results.json")
	code, stdout, stderr := runGradegate(t, bin, 0, "run", manifestPath, "--results", resultsPath, "--format", "json")
	if code != exitHold {
		t.Fatalf("exit %d, want %d (hold)\nstderr:\n%s", code, exitHold, stderr)
	}
	w.check(t, "worker", opts, manifestPath, resultsPath, stdout)
	for _, c := range readResultsFile(t, resultsPath).Cases {
		if c.CaseID == diskCase && (c.Error == nil || !strings.Contains(c.Error.Message, "1024 MiB disk budget")) {
			t.Errorf("disk case: %+v, want a message naming the 1 GiB budget", c.Error)
		}
	}
}

// TestGraderHashedAsLoaded: a grader that rewrites its own file to the
// pinned content as soon as it is loaded must not pass the digest check;
// the digest is the one of the bytes the worker loaded.
func TestGraderHashedAsLoaded(t *testing.T) {
	dir := t.TempDir()
	grader := filepath.Join(dir, "grader.py")
	pinnedSrc := "def grade(sample, item):\n    return 0.0\n"
	loaded := fmt.Sprintf("open(%q, \"w\").write(%q)\ndef grade(sample, item):\n    return float(sample[\"output_text\"] == item[\"expected\"])\n", grader, pinnedSrc)
	if err := os.WriteFile(grader, []byte(loaded), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := `{"item": {"case_id": "a", "expected": "x"}, "sample": {"output_text": "x"}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "cases.jsonl"), []byte(cases), 0o644); err != nil {
		t.Fatal(err)
	}
	sha256Of := func(s string) string {
		d, err := manifest.Digest(strings.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	yaml := fmt.Sprintf("version: 1\nname: rewrite\ndataset:\n  path: cases.jsonl\n  sha256: %q\ngrader:\n  type: python\n  source: grader.py\n  sha256: %q\ncanaries:\n  - {name: pos, sample: {output_text: x}, item: {expected: x}, expect: 1.0}\n  - {name: neg, sample: {output_text: y}, item: {expected: x}, expect: 0.0}\ngate:\n  min_pass_rate: 1.0\n", sha256Of(cases), sha256Of(pinnedSrc))
	path := filepath.Join(dir, "gradegate.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	resultsPath := filepath.Join(dir, "results.json")
	var stdout, stderr bytes.Buffer
	// Unsandboxed, so the grader may write its own file at all.
	o := execute(context.Background(), []string{"run", path, "--results", resultsPath, "--format", "json", "--unsandboxed", "--python", "/usr/bin/python3"}, os.Getenv, &stdout, &stderr)
	if b, _ := os.ReadFile(grader); string(b) != pinnedSrc {
		t.Fatalf("the grader did not rewrite itself: %q\nexit %d, stderr:\n%s", b, o.code, stderr.String())
	}
	res := readResultsFile(t, resultsPath)
	held := false
	for _, r := range res.Reasons {
		held = held || r.Code == results.ReasonDigestMismatch
	}
	if o.code != exitHold || !held || digest.NormalizeDigest(res.Digests.Grader) != digest.NormalizeDigest(sha256Of(loaded)) {
		t.Errorf("exit %d, reasons %+v, grader digest %s; want a hold on the digest %s of the bytes loaded\nstderr:\n%s", o.code, res.Reasons, res.Digests.Grader, sha256Of(loaded), stderr.String())
	}
}

// processesMatching lists the pids whose command line contains sub (argv
// joined by NUL bytes).
func processesMatching(sub string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), sub) {
			pids = append(pids, pid)
		}
	}
	return pids
}
