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
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/sandbox/confine"
	"golang.org/x/sys/unix"
)

// Doctor tries every layer from inside a sandboxed child and reports each
// check. It always applies every layer the machine allows, also when s was
// made WithUnsandboxed(true) (which the CLI does when New refuses with
// ErrNoNetworkBoundary); only s's launcher and scratch root are used. s may
// be nil. python, when not "", is an interpreter to also try the main checks
// with, as a grader would meet them.
func Doctor(ctx context.Context, s *Sandbox, python string) Report {
	d := &Sandbox{scratchRoot: os.TempDir(), probeMemMB: 4096, slots: UIDBlockSize}
	if s != nil {
		d.launcher, d.scratchRoot, d.uidLockDir = s.launcher, s.scratchRoot, s.uidLockDir
	}
	// d reserves a uid block of its own while it probes.
	defer d.Close()
	rep := Report{Schema: "gradegate.doctor/v1", Kernel: kernelRelease(), Sandbox: grading.Sandbox{UID: -1}}
	add := func(layer, name string, st CheckStatus, format string, args ...any) {
		rep.Checks = append(rep.Checks, Check{Name: name, Layer: layer, Status: st, Detail: fmt.Sprintf(format, args...)})
	}
	if d.launcher == "" {
		exe, err := os.Executable()
		if err != nil {
			add("launcher", "locate the launcher", CheckFail, "%v", err)
			return rep
		}
		d.launcher = exe
	}
	if err := closeInheritedOnExec(); err != nil {
		add("environment", "inherited descriptors", CheckFail, "%v", err)
	}
	dropped, err := d.discover(ctx)
	for _, e := range dropped {
		add("launcher", "layer dropped", CheckSkip, "%v", e)
	}
	if err != nil {
		add("launcher", "launch a sandboxed probe", CheckFail, "%v", err)
		return rep
	}
	p := d.probe
	rep.Sandbox = d.status
	rep.NetworkBoundary = p.networkBoundary()
	rep.SecretsProtected = p.secretsProtected()
	rep.FilesystemBoundary = d.status.LandlockABI > 0
	unixSockets := d.landlockABI >= unixSocketsABI
	add("launcher", "launch a sandboxed probe", CheckOK, "%s", StatusString(d.status))

	// seccomp
	if p.Seccomp == "2" && p.NoNewPrivs == "1" {
		add("seccomp", "filter installed", CheckOK, "Seccomp: 2 (filter), NoNewPrivs: 1")
	} else {
		add("seccomp", "filter installed", CheckFail, "Seccomp: %q, NoNewPrivs: %q", p.Seccomp, p.NoNewPrivs)
	}
	for _, sock := range p.Sockets {
		name := sock.Name + " socket"
		switch {
		case sock.Name == "AF_UNIX" && unixSockets && sock.Err == "":
			add("seccomp", name+" allowed", CheckOK, "created; Landlock ABI %d confines it", d.landlockABI)
		case sock.Name == "AF_UNIX" && unixSockets:
			add("seccomp", name+" allowed", CheckFail, "%s", sock.Err)
		case sock.Name == "AF_UNIX" && sock.Err != "":
			add("seccomp", name+" refused", CheckOK, "%s: without Landlock ABI %d nothing would keep a UNIX socket from reaching sockets outside the grader's own; socketpair stays", sock.Err, unixSocketsABI)
		case sock.Name == "AF_UNIX":
			add("seccomp", name+" refused", CheckFail, "created without Landlock ABI %d", unixSocketsABI)
		case sock.Err != "":
			add("seccomp", name+" refused", CheckOK, "%s", sock.Err)
		default:
			add("seccomp", name+" refused", CheckFail, "created")
		}
	}
	for _, c := range p.Syscalls {
		if c.Err != "" {
			add("seccomp", c.Name+" refused", CheckOK, "%s", c.Err)
		} else {
			add("seccomp", c.Name+" refused", CheckFail, "succeeded")
		}
	}

	// landlock
	switch {
	case p.LandlockABI > 0:
		add("landlock", "ruleset enforced", CheckOK, "ABI %d (kernel ABI %d)", p.LandlockABI, p.KernelLandlockABI)
	default:
		add("landlock", "ruleset enforced", CheckFail, "%s", p.filesystemDetail(d.landlockDetail))
	}
	if p.WriteInside == "" {
		add("landlock", "write inside scratch", CheckOK, "created")
	} else {
		add("landlock", "write inside scratch", CheckFail, "%s", p.WriteInside)
	}
	for _, w := range p.WriteOutside {
		if w.Err != "" {
			add("landlock", "write to "+w.Name+" refused", CheckOK, "%s", w.Err)
		} else {
			add("landlock", "write to "+w.Name+" refused", CheckFail, "created")
		}
	}

	for _, o := range p.ProcOther {
		name := "read " + o.Name + " refused"
		if o.Name == "the list of /proc" {
			name = "list /proc refused"
		}
		if o.Err != "" {
			add("landlock", name, CheckOK, "%s", o.Err)
		} else {
			add("landlock", name, CheckFail, "read: a grader sees what /proc shows of every process on the machine")
		}
	}
	add("landlock", "what /proc still shows", CheckSkip, "%s", procStillShown(p.LandlockABI > 0))

	for _, u := range p.UnixConnect {
		name := "connect to a UNIX socket outside scratch refused"
		if strings.HasPrefix(u.Name, "@") {
			name = "connect to another process's abstract UNIX socket refused"
		}
		if u.Err != "" {
			add("landlock", name, CheckOK, "%s", u.Err)
		} else {
			add("landlock", name, CheckFail, "connected (Landlock ABI %d): a grader would reach sockets such as /var/run/docker.sock", p.LandlockABI)
		}
	}

	// process: what keeps a grader off other processes and off the
	// metadata of files outside scratch, and which mechanism holds it.
	rep.ProcessBoundary = len(p.reached()) == 0
	for _, x := range p.Reach {
		mech := reachMechanism(x.Name, d)
		if x.Err != "" {
			add("process", x.Name+" refused", CheckOK, "%s (%s)", x.Err, mech)
		} else {
			add("process", x.Name+" refused", CheckFail, "succeeded (%s)", mech)
		}
	}
	switch {
	case p.OwnChild == "":
		add("process", "signal its own child by pid", CheckOK, "killed (%s)", ownChildMechanism(d))
	case strings.HasPrefix(p.OwnChild, "start: "):
		add("process", "signal its own child by pid", CheckSkip, "%s", p.OwnChild)
	default:
		add("process", "signal its own child by pid", CheckSkip, "%s: graders here cannot signal their children by pid (subprocess's kill and terminate fail); gradegate already runs under a seccomp filter with a listener, so the signal supervisor cannot attach", p.OwnChild)
	}
	if d.signalsBySeccomp() {
		add("process", "signals to its own children", CheckSkip, "below Landlock ABI %d and without a uid of its own, the seccomp filter holds the signal boundary: kill(pid) of a grader's own children goes through gradegate's signal supervisor (seccomp user notification, pidfd), its process group and its first process it may signal directly, and tkill, tgkill and sigqueue to other pids, pidfd_send_signal and F_SETOWN are refused; with Landlock ABI %d or a uid of its own (root) none of this is needed", signalScopeABI, signalScopeABI)
	}

	// uid
	switch {
	case d.setUID && p.UID == d.SlotUID(0) && p.EUID == p.UID && p.GID == p.UID && len(p.Groups) == 0:
		add("uid", "own uid per slot", CheckOK, "uid=%d gid=%d, no supplementary groups; uids %d-%d reserved for this process", p.UID, p.GID, p.UID, p.UID+d.Slots()-1)
	case d.setUID:
		add("uid", "own uid per slot", CheckFail, "uid=%d euid=%d gid=%d groups=%v", p.UID, p.EUID, p.GID, p.Groups)
	case os.Geteuid() == 0:
		add("uid", "own uid per slot", CheckFail, "running as root but the uid switch is unavailable (%s): graders keep uid %d without capabilities", d.uidDetail, p.UID)
	default:
		add("uid", "own uid per slot", CheckSkip, "gradegate is not root: graders keep uid %d", p.UID)
	}
	switch {
	case len(p.Groups) == 0:
		add("uid", "no supplementary groups", CheckOK, "none")
	case !reachesSockets(p):
		add("uid", "no supplementary groups", CheckSkip, "graders keep the groups %v of gradegate's user, which only a privileged gradegate can drop; sockets they open (such as a docker group's /var/run/docker.sock) stay out of reach all the same", p.Groups)
	default:
		add("uid", "no supplementary groups", CheckFail, "graders keep the groups %v and can connect UNIX sockets outside their own", p.Groups)
	}
	if p.ParentEnviron != "" {
		add("uid", "gradegate's /proc/<pid>/environ unreadable", CheckOK, "%s", p.ParentEnviron)
	} else {
		add("uid", "gradegate's /proc/<pid>/environ unreadable", CheckFail, "readable")
	}

	// capabilities
	privileged := os.Geteuid() == 0
	if p.capsCleared(privileged) {
		add("capabilities", "no capabilities", CheckOK, "CapEff %s CapPrm %s CapInh %s CapAmb %s CapBnd %s, securebits %#x", p.CapEff, p.CapPrm, p.CapInh, p.CapAmb, p.CapBnd, p.Securebits)
	} else {
		add("capabilities", "no capabilities", CheckFail, "CapEff %s CapPrm %s CapInh %s CapAmb %s CapBnd %s, securebits %#x", p.CapEff, p.CapPrm, p.CapInh, p.CapAmb, p.CapBnd, p.Securebits)
	}
	if p.UID == 0 {
		if p.Securebits >= 0 && p.Securebits&confine.GraderSecurebits == confine.GraderSecurebits {
			add("capabilities", "uid 0 regains nothing on execve", CheckOK, "securebits %#x (noroot, no_setuid_fixup, locked)", p.Securebits)
		} else {
			add("capabilities", "uid 0 regains nothing on execve", CheckFail, "securebits %#x; only no_new_privs and the empty bounding set hold", p.Securebits)
		}
	}

	// rlimits
	for _, l := range d.limits(d.probeSpec("")) {
		got, ok := p.limitMatches(l)
		st := CheckOK
		if !ok {
			st = CheckFail
		}
		add("rlimits", "RLIMIT_"+l.Name, st, "want %d, soft %d hard %d", l.Value, got.Soft, got.Hard)
	}

	// environment and descriptors
	if slices.Equal(p.Env, probeEnv) {
		add("environment", "environment is exactly the allowlist", CheckOK, "%s", strings.Join(p.Env, " "))
	} else {
		add("environment", "environment is exactly the allowlist", CheckFail, "got %d variables: %s", len(p.Env), strings.Join(p.Env, " "))
	}
	if slices.Equal(p.FDs, []int{0, 1, 2, 3, 4}) {
		add("environment", "descriptors are 0-2 and ExtraFiles", CheckOK, "%v", p.FDs)
	} else {
		add("environment", "descriptors are 0-2 and ExtraFiles", CheckFail, "%v", p.FDs)
	}

	if python == "" {
		add("python", "interpreter in the sandbox", CheckSkip, "no interpreter given")
		return rep
	}
	d.pythonChecks(ctx, python, add)
	return rep
}

// pythonScript tries, from Python, what the probe tries from Go.
const pythonScript = `
import json, os, socket, sys
r = {"uid": os.getuid()}
def attempt(name, f):
    try:
        f()
        r[name] = ""
    except OSError as e:
        r[name] = e.__class__.__name__ + ": " + (e.strerror or str(e))
attempt("AF_INET", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).close())
attempt("AF_INET6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM).close())
attempt("AF_UNIX", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close())
attempt("socketpair", lambda: [s.close() for s in socket.socketpair()])
def read(path):
    with open(path, "rb") as f:
        f.read()
attempt("proc_other", lambda: read("/proc/1/cmdline"))
attempt("proc_self", lambda: read("/proc/self/status"))
attempt("proc_list", lambda: os.listdir("/proc"))
def outside():
    p = os.path.join(os.path.dirname(os.getcwd()), "gradegate-doctor-%d" % os.getpid())
    open(p, "w").close()
    os.unlink(p)
attempt("write_outside", outside)
def inside():
    with open("inside", "w") as f:
        f.write("x")
attempt("write_inside", inside)
json.dump(r, sys.stdout)
`

func (d *Sandbox) pythonChecks(ctx context.Context, python string, add func(layer, name string, st CheckStatus, format string, args ...any)) {
	if err := d.CheckInterpreter(python); err != nil {
		add("python", "interpreter reachable by the grader uid", CheckFail, "%v", err)
		return
	}
	add("python", "interpreter reachable by the grader uid", CheckOK, "%s", python)
	dir, cleanup, err := d.Scratch(0)
	if err != nil {
		add("python", "interpreter in the sandbox", CheckFail, "%v", err)
		return
	}
	defer cleanup()
	cmd := d.Command(Spec{Slot: 0, ScratchDir: dir, MemoryMB: 1024, CPUSeconds: 10}, []string{python, "-I", "-S", "-c", pythonScript}, []string{"LC_ALL=C.UTF-8"})
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &limitedWriter{w: &stdout, n: 64 << 10}
	cmd.Stderr = &limitedWriter{w: &stderr, n: 64 << 10}
	if err := runContext(ctx, cmd); err != nil {
		add("python", "interpreter in the sandbox", CheckFail, "%v: %s", err, strings.TrimSpace(stderr.String()))
		return
	}
	var r map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		add("python", "interpreter in the sandbox", CheckFail, "output %q: %v", stdout.String(), err)
		return
	}
	add("python", "interpreter in the sandbox", CheckOK, "runs as uid %v", r["uid"])
	refused := func(key, name string, isLayer bool) {
		v, _ := r[key].(string)
		switch {
		case v != "":
			add("python", name+" refused", CheckOK, "%s", v)
		case isLayer:
			add("python", name+" refused", CheckFail, "succeeded")
		default:
			add("python", name+" refused", CheckSkip, "succeeded; no Landlock: file permissions only")
		}
	}
	refused("AF_INET", "AF_INET socket", true)
	refused("AF_INET6", "AF_INET6 socket", true)
	refused("write_outside", "write outside scratch", d.landlockABI > 0)
	refused("proc_other", "read /proc/1/cmdline", d.landlockABI > 0)
	refused("proc_self", "read its own /proc/self/status", d.landlockABI > 0)
	refused("proc_list", "list /proc", d.landlockABI > 0)
	if d.landlockABI >= unixSocketsABI {
		refused("AF_UNIX", "AF_UNIX socket", false)
	} else {
		refused("AF_UNIX", "AF_UNIX socket", true)
	}
	for _, k := range []struct{ key, name string }{{"socketpair", "socketpair works"}, {"write_inside", "write inside scratch works"}} {
		if v, _ := r[k.key].(string); v == "" {
			add("python", k.name, CheckOK, "done")
		} else {
			add("python", k.name, CheckFail, "%s", v)
		}
	}
}

// WriteText writes the report as a plain text table.
func (r Report) WriteText(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "kernel: %s\n", r.Kernel)
	fmt.Fprintf(&b, "sandbox: %s\n\n", StatusString(r.Sandbox))
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LAYER\tCHECK\tSTATUS\tDETAIL")
	for _, c := range r.Checks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Layer, c.Name, c.Status, oneLine(c.Detail))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.NetworkBoundary {
		fmt.Fprintln(&b, "\nnetwork boundary: established")
	} else {
		fmt.Fprintln(&b, "\nnetwork boundary: NOT established; gradegate refuses to grade here unless --unsandboxed")
	}
	if r.FilesystemBoundary {
		fmt.Fprintln(&b, "filesystem boundary: established")
	} else {
		fmt.Fprintln(&b, "filesystem boundary: NOT established (no Landlock); gradegate refuses to grade here unless --unsandboxed")
	}
	if r.ProcessBoundary {
		fmt.Fprintf(&b, "process boundary: established (signals: %s; limits, priorities, file metadata, inotify, abstract sockets, memfd: seccomp; cgroups: landlock)\n", orUnknown(r.Sandbox.Signals))
	} else {
		fmt.Fprintf(&b, "process boundary: NOT established; gradegate refuses to grade here unless --unsandboxed (%s)\n", processBoundaryAdvice)
	}
	if r.SecretsProtected {
		fmt.Fprintln(&b, "gradegate's environment: out of the graders' reach")
	} else {
		fmt.Fprintln(&b, "gradegate's environment: READABLE by graders; gradegate refuses to grade here unless --unsandboxed")
	}
	_, err := w.Write(b.Bytes())
	return err
}

// reachMechanism names what holds the boundary a probeReach call tests.
func reachMechanism(name string, d *Sandbox) string {
	switch {
	case name == "signal gradegate":
		switch d.signalMechanism() {
		case "landlock":
			return fmt.Sprintf("Landlock ABI %d signal scope", d.landlockABI)
		case "uid":
			return "the grader's own uid"
		}
		return "seccomp: the grader's own process group only"
	case strings.HasPrefix(name, "read /sys/fs/cgroup"):
		return "Landlock: /sys/fs/cgroup is not readable"
	case strings.HasSuffix(name, "on gradegate"):
		return "seccomp: pid 0 or the grader's own only"
	}
	return "seccomp: refused everywhere"
}

// ownChildMechanism names what let the probe's kill of its own child
// through.
func ownChildMechanism(d *Sandbox) string {
	switch d.signalMechanism() {
	case "landlock":
		return "inside its Landlock domain"
	case "uid":
		return "its own uid"
	}
	return "served by gradegate's signal supervisor"
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// reachesSockets reports whether the probe connected to a UNIX socket it
// did not create.
func reachesSockets(p *probeReport) bool {
	for _, u := range p.UnixConnect {
		if u.Err == "" {
			return true
		}
	}
	return false
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " | ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func kernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Machine[:])
}

// runContext runs cmd and kills its process group when ctx ends.
func runContext(ctx context.Context, cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		case <-done:
		}
	}()
	err := cmd.Wait()
	close(done)
	if ctx.Err() != nil {
		return errors.Join(ctx.Err(), err)
	}
	return err
}
