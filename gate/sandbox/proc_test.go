//go:build linux

package sandbox

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// procAttacks reads what /proc shows of other processes: argv[1] is
// gradegate's pid, argv[2] another process's, whose command line carries
// procSecret. Each line is "name result"; "READ" means it got through.
const procAttacks = `
import os, sys
gate, other = sys.argv[1], sys.argv[2]
def attempt(name, f):
    try:
        got = f()
        print(name, "READ", repr(got)[:60])
    except OSError as e:
        print(name, type(e).__name__)
def read(path):
    with open(path, "rb") as f:
        return f.read()
attempt("init-cmdline", lambda: read("/proc/1/cmdline"))
attempt("gate-cmdline", lambda: read("/proc/%s/cmdline" % gate))
attempt("gate-environ", lambda: read("/proc/%s/environ" % gate))
attempt("gate-status", lambda: read("/proc/%s/status" % gate))
attempt("gate-exe", lambda: os.readlink("/proc/%s/exe" % gate))
attempt("gate-fds", lambda: os.listdir("/proc/%s/fd" % gate))
attempt("other-cmdline", lambda: read("/proc/%s/cmdline" % other))
attempt("other-environ", lambda: read("/proc/%s/environ" % other))
attempt("net-unix", lambda: read("/proc/net/unix"))
attempt("net-tcp", lambda: read("/proc/net/tcp"))
attempt("list-proc", lambda: os.listdir("/proc"))
`

// procSecret is in the command line of the process procAttacks must not read.
const procSecret = "gradegate-proc-secret"

// procAttackNames are the lines procAttacks prints, in order.
var procAttackNames = []string{
	"init-cmdline", "gate-cmdline", "gate-environ", "gate-status", "gate-exe", "gate-fds",
	"other-cmdline", "other-environ", "net-unix", "net-tcp", "list-proc",
}

// startOther starts a process of the caller's uid whose command line holds
// procSecret, for procAttacks to aim at.
func startOther() (*exec.Cmd, error) {
	cmd := exec.Command("/bin/sh", "-c", "exec sleep 60 # "+procSecret, procSecret)
	cmd.Env = []string{"GRADEGATE_SECRET=" + procSecret}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd, nil
}

// checkProcAttacks checks procAttacks' output: every attempt refused.
func checkProcAttacks(t *testing.T, out string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(procAttackNames) {
		t.Fatalf("grader printed:\n%s\nwant %d lines", out, len(procAttackNames))
	}
	for i, l := range lines {
		name, res, _ := strings.Cut(l, " ")
		if name != procAttackNames[i] || res != "PermissionError" {
			t.Errorf("grader: %s; want %s PermissionError", l, procAttackNames[i])
		}
	}
}

// TestHostileProc: a grader reads nothing of other processes from /proc
// (command lines, environments, descriptors, /proc/net, the list of pids),
// whether it runs under its own uid (gradegate as root) or under
// gradegate's (gradegate as a user, with another process of that user
// beside it).
func TestHostileProc(t *testing.T) {
	t.Run("own uid", func(t *testing.T) {
		s := newSandbox(t)
		other, err := startOther()
		if err != nil {
			t.Fatal(err)
		}
		defer func() { other.Process.Kill(); other.Wait() }()
		r := runPython(t, s, Spec{Slot: 1, MemoryMB: 1024}, procAttacks, strconv.Itoa(os.Getpid()), strconv.Itoa(other.Process.Pid))
		if r.err != nil {
			t.Fatalf("%v: %s", r.err, r.stderr)
		}
		checkProcAttacks(t, r.stdout)
	})
	t.Run("gradegate's uid", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to run gradegate as another user")
		}
		var r procResult
		runHelperAs(t, helperRun{name: "proc", uid: nobody}, &r)
		if r.GraderUID != nobody {
			t.Fatalf("grader ran as uid %d, want gradegate's %d", r.GraderUID, nobody)
		}
		checkProcAttacks(t, r.Grader)
		checkProcDoctor(t, r.Checks)
	})
}

// procResult is what the "proc" helper found.
type procResult struct {
	GraderUID int     `json:"grader_uid"`
	Grader    string  `json:"grader"`
	Checks    []Check `json:"checks"`
}

// procHelper runs procAttacks as a grader of the helper's uid, aimed at the
// helper (gradegate) and a process of the same uid, and the doctor.
func procHelper(ctx context.Context, launcher string) (procResult, error) {
	var r procResult
	s, err := New(WithLauncher(launcher))
	if err != nil {
		return r, err
	}
	defer s.Close()
	other, err := startOther()
	if err != nil {
		return r, err
	}
	defer func() { other.Process.Kill(); other.Wait() }()
	dir, cleanup, err := s.Scratch(1)
	if err != nil {
		return r, err
	}
	defer cleanup()
	code := "import os; print(os.getuid())\n" + procAttacks
	argv := []string{"/usr/bin/python3", "-I", "-S", "-c", code, strconv.Itoa(os.Getpid()), strconv.Itoa(other.Process.Pid)}
	cmd := s.Command(Spec{Slot: 1, ScratchDir: dir, MemoryMB: 1024}, argv, graderEnv(dir))
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := runContext(ctx, cmd); err != nil {
		return r, err
	}
	uid, rest, _ := strings.Cut(out.String(), "\n")
	r.GraderUID, _ = strconv.Atoi(uid)
	r.Grader = rest
	r.Checks = Doctor(ctx, s, "/usr/bin/python3").Checks
	return r, nil
}

// checkProcDoctor checks that the doctor reports other processes' /proc
// out of reach, and says what stays visible.
func checkProcDoctor(t *testing.T, checks []Check) {
	t.Helper()
	var refused, stays int
	for _, c := range checks {
		if !strings.Contains(c.Name, "/proc") {
			continue
		}
		switch {
		case strings.HasSuffix(c.Name, "refused") && c.Status == CheckOK:
			refused++
		case strings.HasPrefix(c.Name, "what /proc still shows") && c.Status == CheckSkip:
			stays++
		case c.Status == CheckOK:
		default:
			t.Errorf("doctor check %+v", c)
		}
	}
	if refused < 5 || stays != 1 {
		t.Errorf("doctor: %d /proc refusals and %d statements of what stays; want at least 5 and 1", refused, stays)
	}
}

// TestDoctorReportsProc: the doctor tries other processes' /proc from the
// probe and from Python, and states what stays visible.
func TestDoctorReportsProc(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := newSandbox(t)
	checkProcDoctor(t, Doctor(ctx, s, python(t, s)).Checks)
}

// pythonCaps is Python that sets lines to the caller's capability sets as
// /proc/<pid>/status shows them ("CapEff:\t0000000000000000"), from
// capget(2) and prctl(2): a grader cannot read its own /proc. CAPS holds
// the code itself, for a child to run.
const pythonCaps = `
CAPS = r"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
hdr = (ctypes.c_uint32 * 2)(0x20080522, 0)
data = (ctypes.c_uint32 * 6)()
if libc.capget(hdr, data) != 0:
    raise OSError(ctypes.get_errno(), "capget")
def bits(f):
    v = 0
    for c in range(64):
        r = f(ctypes.c_ulong(c))
        if r < 0:
            break
        v |= r << c
    return v
u = ctypes.c_ulong
sets = {
    "CapInh": data[2] | data[5] << 32,
    "CapPrm": data[1] | data[4] << 32,
    "CapEff": data[0] | data[3] << 32,
    "CapBnd": bits(lambda c: libc.prctl(23, c, u(0), u(0), u(0))),
    "CapAmb": bits(lambda c: libc.prctl(47, u(1), c, u(0), u(0))),
}
lines = ["%s:\t%016x" % kv for kv in sets.items()]
"""
exec(CAPS)
`

// TestStatusNeedsProcRefused: Landlock counts as in force (and so as the
// filesystem boundary) only when the probe's reads of other processes'
// /proc were refused, and the refusal to grade names what was readable.
func TestStatusNeedsProcRefused(t *testing.T) {
	refused := []namedResult{{"/proc/1/cmdline", "EACCES"}, {"/proc/net/unix", "EACCES"}, {"the list of /proc", "EACCES"}}
	tests := []struct {
		name    string
		proc    []namedResult
		wantABI int
		detail  string // in filesystemDetail when wantABI is 0
	}{
		{"all refused", refused, 7, ""},
		{"a command line readable", []namedResult{{"/proc/1/cmdline", ""}, refused[1], refused[2]}, 0, "reads of /proc/1/cmdline were not refused"},
		{"the list readable", []namedResult{refused[0], refused[1], {"the list of /proc", ""}}, 0, "reads of the list of /proc were not refused"},
		{"none there", nil, 7, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &probeReport{
				UID: os.Getuid(), EUID: os.Geteuid(), LandlockABI: 7, KernelLandlockABI: 7,
				WriteOutside: []namedResult{{"/tmp", "EACCES"}}, ProcOther: tt.proc,
			}
			st := r.status(&Sandbox{probeMemMB: 4096})
			if st.LandlockABI != tt.wantABI {
				t.Errorf("LandlockABI = %d, want %d", st.LandlockABI, tt.wantABI)
			}
			if d := r.filesystemDetail(""); tt.wantABI == 0 && !strings.Contains(d, tt.detail) {
				t.Errorf("filesystemDetail = %q, want it to contain %q", d, tt.detail)
			}
		})
	}
}
