//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gradegate/gradegate/gate"
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
	DoctorAfter     bool   `json:"doctor_after"`
	UID             int    `json:"uid"`
}

// rootlessResult is what the "rootless" helper found.
type rootlessResult struct {
	Err        string       `json:"err"`
	Status     gate.Sandbox `json:"status"`
	SlotUID    int          `json:"slot_uid"`
	CapsClear  bool         `json:"caps_clear"`
	Securebits int          `json:"securebits"`
	GraderCaps string       `json:"grader_caps"`
	Boundary   bool         `json:"boundary"`
	Failed     []string     `json:"failed"`
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
		r.After = fmt.Sprint(err)
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
		cmd := s.Command(Spec{ScratchDir: dir}, []string{"/bin/grep", "^Cap", "/proc/self/status"}, nil)
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
	}
	return fmt.Errorf("no helper %q", name)
}

// helper runs the helper name in a copy of this test binary through
// wrapper (e.g. unshare), as uid when uid >= 0 (which needs root), and
// decodes its JSON result into out. fake, when not nil, holds the match
// and exit code of a fakeLauncherIn to use as the helper's launcher.
func helper(t *testing.T, name string, wrapper []string, uid int, fake []any, out any) {
	t.Helper()
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
	cmd.Env = []string{helperEnv + "=" + name, launcherEnv + "=" + launcher, "PATH=/usr/bin:/bin", "TMPDIR=" + os.TempDir()}
	if uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
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
