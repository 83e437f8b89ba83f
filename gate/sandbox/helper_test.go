//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gradegate/gradegate/gate/grading"

	"github.com/gradegate/gradegate/gate/sandbox/confine"
)

// launcherEnv passes a helper the launcher to build its Sandboxes with.
const launcherEnv = "GRADEGATE_SANDBOX_TEST_LAUNCHER"

// secretsResult is what the "secrets" helper found.
type secretsResult struct {
	Before          string `json:"before"`            // New's error before ProtectSelf
	BeforeExposed   bool   `json:"before_exposed"`    // it wraps ErrSecretsExposed
	DoctorBefore    bool   `json:"doctor_before"`     // Report.SecretsProtected before
	DoctorCheckFail bool   `json:"doctor_check_fail"` // the environ check failed before
	FDScan          string `json:"fd_scan"`           // closeOnExecFromProc after ProtectSelf
	After           string `json:"after"`             // New's error after ProtectSelf
	AfterExposed    bool   `json:"after_exposed"`     // it wraps ErrSecretsExposed
	AfterNoFS       bool   `json:"after_no_fs"`       // it wraps ErrNoFilesystemBoundary
	DoctorAfter     bool   `json:"doctor_after"`
	UID             int    `json:"uid"`
}

// rootlessResult is what the "rootless" helper found.
type rootlessResult struct {
	Err        string          `json:"err"`
	Status     grading.Sandbox `json:"status"`
	SlotUID    int             `json:"slot_uid"`
	CapsClear  bool            `json:"caps_clear"`
	Securebits int             `json:"securebits"`
	GraderCaps string          `json:"grader_caps"`
	Boundary   bool            `json:"boundary"`
	Failed     []string        `json:"failed"`
}

// runHelper runs the helper name (see helperEnv) and writes its result as
// JSON to w.
func runHelper(name string, w io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	launcher := os.Getenv(launcherEnv)
	switch name {
	case "secrets":
		// launcher refuses Landlock, and this process is not root: the
		// probe keeps this process's uid and nothing else guards the
		// environment.
		var r secretsResult
		r.UID = os.Getuid()
		_, err := New(WithLauncher(launcher))
		r.Before, r.BeforeExposed = fmt.Sprint(err), errors.Is(err, ErrSecretsExposed)
		un, err := New(WithLauncher(launcher), WithUnsandboxed(true))
		if err != nil {
			return err
		}
		rep := Doctor(ctx, un, "")
		r.DoctorBefore = rep.SecretsProtected
		for _, c := range rep.Checks {
			if strings.Contains(c.Name, "environ unreadable") {
				r.DoctorCheckFail = c.Status == CheckFail
			}
		}
		if err := ProtectSelf(); err != nil {
			return err
		}
		r.FDScan = fmt.Sprint(closeOnExecFromProc())
		s, err := New(WithLauncher(launcher))
		r.After, r.AfterExposed, r.AfterNoFS = fmt.Sprint(err), errors.Is(err, ErrSecretsExposed), errors.Is(err, ErrNoFilesystemBoundary)
		if err == nil {
			s.Close()
		}
		r.DoctorAfter = Doctor(ctx, un, "").SecretsProtected
		return json.NewEncoder(w).Encode(r)
	case "rootless":
		var r rootlessResult
		s, err := New(WithLauncher(launcher))
		if err != nil {
			r.Err = err.Error()
			return json.NewEncoder(w).Encode(r)
		}
		defer s.Close()
		r.Status, r.SlotUID = s.Status(), s.SlotUID(0)
		r.CapsClear, r.Securebits = s.probe.capsCleared(true), s.probe.Securebits
		dir, cleanup, err := s.Scratch(0)
		if err != nil {
			return err
		}
		defer cleanup()
		cmd := s.Command(Spec{ScratchDir: dir}, []string{"/usr/bin/python3", "-I", "-S", "-c", pythonCaps + "print('\\n'.join(lines))"}, nil)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("grader: %w: %s", err, out)
		}
		r.GraderCaps = string(out)
		rep := Doctor(ctx, s, "")
		r.Boundary = rep.NetworkBoundary
		for _, c := range rep.Checks {
			if c.Status == CheckFail {
				r.Failed = append(r.Failed, c.Name+": "+c.Detail)
			}
		}
		return json.NewEncoder(w).Encode(r)
	case "boundaries":
		var r boundariesResult
		r.KernelABI = confine.KernelLandlockABI()
		s, err := New(WithLauncher(launcher))
		if err == nil {
			s.Close()
		}
		r.Err = fmt.Sprint(err)
		r.NoFilesystem, r.NoNetwork = errors.Is(err, ErrNoFilesystemBoundary), errors.Is(err, ErrNoNetworkBoundary)
		un, err := New(WithLauncher(launcher), WithUnsandboxed(true))
		if err != nil {
			return err
		}
		r.Unsandboxed = un.Status().Unsandboxed
		rep := Doctor(ctx, un, "")
		r.DoctorFilesystem = rep.FilesystemBoundary
		var text strings.Builder
		if err := rep.WriteText(&text); err != nil {
			return err
		}
		r.DoctorText = text.String()
		return json.NewEncoder(w).Encode(r)
	case "sockets":
		// A grader of this helper's uid and groups tries the sockets the
		// test left for it (see TestHostileSocketsNonRoot).
		var r socketsResult
		s, err := New(WithLauncher(launcher))
		if err != nil {
			return err
		}
		defer s.Close()
		r.Groups, _ = os.Getgroups()
		own, closeOwn, err := ownSocket()
		if err != nil {
			return err
		}
		defer closeOwn()
		dir, cleanup, err := s.Scratch(1)
		if err != nil {
			return err
		}
		defer cleanup()
		argv := []string{"/usr/bin/python3", "-I", "-S", "-c", socketAttacks, os.Getenv("GRADEGATE_TEST_DOCKER_SOCK"), own, os.Getenv("GRADEGATE_TEST_ABSTRACT"), os.Getenv("GRADEGATE_TEST_DGRAM")}
		cmd := s.Command(Spec{Slot: 1, ScratchDir: dir, MemoryMB: 1024}, argv, graderEnv(dir))
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("grader: %w: %s", err, out)
		}
		r.Grader = string(out)
		for _, c := range Doctor(ctx, s, "").Checks {
			if c.Name == "no supplementary groups" {
				r.GroupsCheck = string(c.Status) + ": " + c.Detail
			}
		}
		return json.NewEncoder(w).Encode(r)
	case "reach":
		var opts []Option
		if abi, err := strconv.Atoi(os.Getenv(abiOptionEnv)); err == nil {
			opts = append(opts, withLandlockABI(abi))
		}
		r, err := reachRun(ctx, launcher, opts...)
		if err != nil {
			return err
		}
		return json.NewEncoder(w).Encode(r)
	case "proc":
		r, err := procHelper(ctx, launcher)
		if err != nil {
			return err
		}
		return json.NewEncoder(w).Encode(r)
	}
	return fmt.Errorf("no helper %q", name)
}

// boundariesResult is what the "boundaries" helper found.
type boundariesResult struct {
	KernelABI        int    `json:"kernel_abi"`
	Err              string `json:"err"`
	NoFilesystem     bool   `json:"no_filesystem"`
	NoNetwork        bool   `json:"no_network"`
	Unsandboxed      bool   `json:"unsandboxed"`
	DoctorFilesystem bool   `json:"doctor_filesystem"`
	DoctorText       string `json:"doctor_text"`
}

// socketsResult is what the "sockets" helper found.
type socketsResult struct {
	Groups      []int  `json:"groups"`
	Grader      string `json:"grader"`
	GroupsCheck string `json:"groups_check"`
}

// ownSocket listens on a 0600 socket of the calling user, in a directory
// only it can search: the user's own socket, such as an ssh-agent's.
func ownSocket() (string, func(), error) {
	dir, err := os.MkdirTemp("", "gradegate-own-sock-")
	if err != nil {
		return "", nil, err
	}
	path := filepath.Join(dir, "agent.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err == nil {
		err = os.Chmod(path, 0o600)
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return path, func() { ln.Close(); os.RemoveAll(dir) }, nil
}

// socketAttacks tries every way to reach a socket the grader did not
// create: argv[1] a stream socket of another owner (a docker.sock
// stand-in), argv[2] one of the grader's own user, argv[3] an abstract
// stream socket, argv[4] a datagram socket, reached by sendto from a fresh
// socket and from a datagram socketpair. A socketpair of stream sockets
// must keep working. Each line is "name result".
const socketAttacks = `
import errno, socket, sys
def name(e):
    return errno.errorcode.get(e.errno, str(e.errno))
def attempt(label, family, kind, addr, send=False):
    try:
        s = socket.socket(family, kind)
    except OSError as e:
        print(label, "socket", name(e))
        return
    try:
        if send:
            s.sendto(b"x", addr)
        else:
            s.connect(addr)
        print(label, "REACHED")
    except OSError as e:
        print(label, name(e))
attempt("docker.sock", socket.AF_UNIX, socket.SOCK_STREAM, sys.argv[1])
attempt("own-0600", socket.AF_UNIX, socket.SOCK_STREAM, sys.argv[2])
attempt("abstract", socket.AF_UNIX, socket.SOCK_STREAM, "\0" + sys.argv[3])
attempt("dgram-sendto", socket.AF_UNIX, socket.SOCK_DGRAM, sys.argv[4], send=True)
try:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    a.sendto(b"x", sys.argv[4])
    print("dgram-pair-sendto REACHED")
except OSError as e:
    print("dgram-pair-sendto", name(e))
a, b = socket.socketpair()
a.send(b"ok")
print("socketpair", b.recv(2).decode())
`

// helper runs the helper name in a copy of this test binary through
// wrapper (e.g. unshare), as uid when uid >= 0 (which needs root), and
// decodes its JSON result into out. fake, when not nil, holds the match
// and exit code of a fakeLauncherIn to use as the helper's launcher.
func helper(t *testing.T, name string, wrapper []string, uid int, fake []any, out any) {
	t.Helper()
	runHelperAs(t, helperRun{name: name, wrapper: wrapper, uid: uid, fake: fake}, out)
}

// helperRun says how to run a helper: see helper; groups are the
// supplementary groups of a helper run as uid, env is added to its
// environment, and noLandlock makes Landlock unavailable to it and to every
// process it starts.
type helperRun struct {
	name       string
	wrapper    []string
	uid        int
	groups     []uint32
	fake       []any
	env        []string
	noLandlock bool
}

func runHelperAs(t *testing.T, h helperRun, out any) {
	t.Helper()
	name, wrapper, uid, fake := h.name, h.wrapper, h.uid, h.fake
	// The copy sits in a directory every uid can search: go test builds
	// into a 0700 one.
	dir, err := os.MkdirTemp("", "gradegate-sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sandbox.test")
	src, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, src, 0o755); err != nil {
		t.Fatal(err)
	}
	launcher := bin
	if fake != nil {
		launcher = fakeLauncherIn(t, dir, bin, fake[0].(string), fake[1].(int))
		if err := os.Chmod(launcher, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	argv := append(append([]string{}, wrapper...), bin)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append([]string{helperEnv + "=" + name, launcherEnv + "=" + launcher, "PATH=/usr/bin:/bin", "TMPDIR=" + os.TempDir()}, h.env...)
	if h.noLandlock {
		cmd.Env = append(cmd.Env, noLandlockEnv+"=1")
	}
	if uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: h.groups}}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if len(wrapper) > 0 && strings.Contains(stderr.String(), wrapper[0]+":") {
			t.Skipf("%s refused: %s", wrapper[0], strings.TrimSpace(stderr.String()))
		}
		t.Fatalf("helper %s: %v: %s", name, err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("helper %s output %q: %v (stderr %s)", name, stdout.String(), err, stderr.String())
	}
}
