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
	"time"
	"unsafe"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/sandbox/confine"
	"golang.org/x/sys/unix"
)

// probeArg, after LauncherArg, runs the probe: the launcher execs itself
// with it once every layer is applied, and the probe reports what a grader
// would meet, as JSON on stdout.
const probeArg = confine.ProbeArg

// probeEnv is the probe's whole environment; the probe reports its own, so
// anything else would show a leak.
var probeEnv = []string{"GRADEGATE_PROBE=1"}

// probeExpect is what the parent tells the probe in its argument.
type probeExpect struct {
	Scratch     string `json:"scratch"`
	LandlockABI int    `json:"landlock_abi"`
	// UnixSocket is a listening pathname UNIX socket outside the
	// scratch directory, writable by everyone, for the probe to try to
	// connect to; "" for none.
	UnixSocket string `json:"unix_socket,omitempty"`
	// AbstractSocket is a listening abstract UNIX socket (without the
	// leading NUL) the probe tries to connect to; "" for none.
	AbstractSocket string `json:"abstract_socket,omitempty"`
}

// probeReport is what the probe measured from inside the sandbox.
type probeReport struct {
	UID        int    `json:"uid"`
	EUID       int    `json:"euid"`
	GID        int    `json:"gid"`
	Groups     []int  `json:"groups"`
	Seccomp    string `json:"seccomp"` // PR_GET_SECCOMP, as /proc/<pid>/status "Seccomp:"; 2 is filter mode
	NoNewPrivs string `json:"no_new_privs"`
	// Capability sets as /proc/<pid>/status shows them (hex), and the
	// securebits (PR_GET_SECUREBITS; -1 when unreadable).
	CapInh     string   `json:"cap_inh"`
	CapPrm     string   `json:"cap_prm"`
	CapEff     string   `json:"cap_eff"`
	CapBnd     string   `json:"cap_bnd"`
	CapAmb     string   `json:"cap_amb"`
	Securebits int      `json:"securebits"`
	Env        []string `json:"env"`
	FDs        []int    `json:"fds"` // open descriptors at start

	// Results are "" for success, else the errno name (EACCES, …).
	Sockets       []namedResult `json:"sockets"`
	Syscalls      []namedResult `json:"syscalls"`
	WriteInside   string        `json:"write_inside"`
	WriteOutside  []namedResult `json:"write_outside"` // ENOENT entries: directory missing
	ParentEnviron string        `json:"parent_environ"`
	// ProcOther are reads of what /proc shows of other processes:
	// pid 1's and gradegate's command lines, /proc/net/unix, the list of
	// pids (see procTargets).
	ProcOther   []namedResult `json:"proc_other"`
	UnixConnect []namedResult `json:"unix_connect"` // the sockets of probeExpect.UnixSocket and AbstractSocket
	Limits      []limitResult `json:"limits"`
	// Reach are the calls that would act on a process or a file outside
	// the grader's own (see probeReach); each must fail.
	Reach []namedResult `json:"reach"`
	// OwnChild is the probe's SIGKILL of a child it started, by pid: ""
	// when it worked, else the errno ("start: …" when no child started).
	OwnChild string `json:"own_child"`

	LandlockABI       int `json:"landlock_abi"` // enforced by the launcher
	KernelLandlockABI int `json:"kernel_landlock_abi"`
}

type namedResult struct {
	Name string `json:"name"`
	Err  string `json:"err"`
}

type limitResult struct {
	Name string `json:"name"`
	Soft uint64 `json:"soft"`
	Hard uint64 `json:"hard"`
}

func (r *probeReport) socket(family string) (string, bool) { return find(r.Sockets, family) }

func find(rs []namedResult, name string) (string, bool) {
	for _, x := range rs {
		if x.Name == name {
			return x.Err, true
		}
	}
	return "", false
}

// networkBoundary reports whether the seccomp filter was in force and
// refused internet sockets.
func (r *probeReport) networkBoundary() bool {
	v4, ok4 := r.socket("AF_INET")
	v6, ok6 := r.socket("AF_INET6")
	return r.Seccomp == "2" && ok4 && ok6 && v4 != "" && v6 != ""
}

func (r *probeReport) networkDetail() string {
	v4, _ := r.socket("AF_INET")
	v6, _ := r.socket("AF_INET6")
	return fmt.Sprintf("seccomp mode %q, AF_INET socket: %s, AF_INET6 socket: %s", r.Seccomp, orCreated(v4), orCreated(v6))
}

func orCreated(err string) string {
	if err == "" {
		return "created"
	}
	return err
}

// filesystemDetail says why no Landlock ruleset is in force; dropped is the
// launcher's failure when enforcing one failed.
func (r *probeReport) filesystemDetail(dropped string) string {
	const risk = "without it graders can read every world-readable file (the workspace, its .git/config with the checkout token, the event payload) and write /tmp and /dev/shm"
	switch {
	case r.KernelLandlockABI == 0:
		return "Landlock is unavailable on this kernel (landlock_create_ruleset failed): " + risk
	case dropped != "":
		return fmt.Sprintf("the kernel offers Landlock ABI %d but enforcing it failed (%s): %s", r.KernelLandlockABI, dropped, risk)
	case r.LandlockABI > 0 && !r.fsConfined():
		var open []string
		for _, w := range r.WriteOutside {
			if w.Err == "" {
				open = append(open, w.Name)
			}
		}
		return fmt.Sprintf("Landlock ABI %d is enforced but writes to %s were not refused", r.LandlockABI, strings.Join(open, ", "))
	case r.LandlockABI > 0 && !r.procConfined():
		var open []string
		for _, p := range r.ProcOther {
			if p.Err == "" {
				open = append(open, p.Name)
			}
		}
		return fmt.Sprintf("Landlock ABI %d is enforced but reads of %s were not refused", r.LandlockABI, strings.Join(open, ", "))
	}
	return "no Landlock ruleset is in force: " + risk
}

// procTarget is something /proc shows of another process: Name as the
// doctor shows it, Path what the probe opens (a directory is listed).
type procTarget struct{ Name, Path string }

// procTargets are what the probe tries to read of other processes through
// /proc; gradegate is gradegate's pid.
func procTargets(gradegate int) []procTarget {
	return []procTarget{
		{"/proc/1/cmdline", "/proc/1/cmdline"},
		{"gradegate's /proc/<pid>/cmdline", fmt.Sprintf("/proc/%d/cmdline", gradegate)},
		{"/proc/net/unix", "/proc/net/unix"},
		{"the list of /proc", "/proc"},
	}
}

// procConfined reports whether every read of another process's /proc
// entries was refused; entries the kernel does not have (ENOENT) are left
// out of ProcOther.
func (r *probeReport) procConfined() bool {
	for _, p := range r.ProcOther {
		if p.Err == "" {
			return false
		}
	}
	return true
}

// procStillShown is what /proc shows a grader whatever gradegate does,
// stated as the doctor reports it; landlock is whether a ruleset is in
// force.
func procStillShown(landlock bool) string {
	if !landlock {
		return "no Landlock ruleset is in force: every world-readable /proc entry (each process's command line and status, /proc/net/unix) is readable"
	}
	return "stat(2) on /proc/<pid> still tells which pids exist and their owners' uids; hiding them needs a /proc of the grader's own (a mount namespace, CAP_SYS_ADMIN), which gradegate does not use"
}

// secretsProtected reports whether the probe failed to read gradegate's
// /proc/<pid>/environ, as a grader would.
func (r *probeReport) secretsProtected() bool { return r.ParentEnviron != "" }

func (r *probeReport) secretsDetail() string {
	if r.secretsProtected() {
		return "gradegate's /proc/<pid>/environ: " + r.ParentEnviron
	}
	return fmt.Sprintf("a grader (uid %d, no Landlock) can read gradegate's /proc/<pid>/environ; gradegate must call sandbox.ProtectSelf at start-up", r.UID)
}

// capsCleared reports whether the probe holds no capability: none
// effective, permitted, inheritable or ambient, and, when it runs as uid 0
// or a privileged launcher started it, an empty bounding set too.
func (r *probeReport) capsCleared(privilegedLauncher bool) bool {
	zero := func(v string) bool { return strings.Trim(v, "0") == "" && v != "" }
	if !zero(r.CapEff) || !zero(r.CapPrm) || !zero(r.CapInh) || !zero(r.CapAmb) {
		return false
	}
	if r.UID == 0 || r.EUID == 0 || privilegedLauncher {
		return zero(r.CapBnd)
	}
	return true
}

// fsConfined reports whether every write outside the scratch directory was
// refused.
func (r *probeReport) fsConfined() bool {
	for _, w := range r.WriteOutside {
		if w.Err == "" {
			return false
		}
	}
	return true
}

// limitsMatch reports whether every limit in want is in force.
func (r *probeReport) limitsMatch(want []confine.Rlimit) bool {
	for _, l := range want {
		if _, ok := r.limitMatches(l); !ok {
			return false
		}
	}
	return true
}

func (r *probeReport) limitMatches(l confine.Rlimit) (limitResult, bool) {
	for _, got := range r.Limits {
		if got.Name == l.Name {
			// A soft limit below the wanted value is stricter still
			// (setLimits keeps a lower hard limit).
			return got, got.Soft <= l.Value && got.Soft != unix.RLIM_INFINITY
		}
	}
	return limitResult{}, false
}

// status turns the measurements into gate.Sandbox.
func (r *probeReport) status(s *Sandbox) grading.Sandbox {
	st := grading.Sandbox{UID: -1, Seccomp: r.networkBoundary(), Rlimits: r.limitsMatch(s.limits(s.probeSpec("")))}
	if r.UID != os.Getuid() && r.UID == r.EUID {
		st.UID = r.UID
	}
	if r.LandlockABI > 0 && r.fsConfined() && r.procConfined() {
		st.LandlockABI = r.LandlockABI
	}
	if len(r.reached()) == 0 {
		st.Signals = s.signalMechanism()
	}
	return st
}

// probeSpec is the Spec of a probe in slot 0.
func (s *Sandbox) probeSpec(scratch string) Spec {
	return Spec{Slot: 0, ScratchDir: scratch, MemoryMB: s.probeMemMB, CPUSeconds: 10}
}

// runProbe launches the probe through the launcher with the layers s is
// configured for and returns what it measured.
func (s *Sandbox) runProbe(ctx context.Context) (*probeReport, error) {
	dir, cleanup, err := s.Scratch(0)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	spec := s.probeSpec(dir)
	ls := s.launchSpec(spec, s.launcher)
	ls.Probe = true
	sock, closeSock, err := probeSocket(s.scratchRoot)
	if err != nil {
		return nil, err
	}
	defer closeSock()
	abstract, closeAbstract, err := abstractSocket()
	if err != nil {
		return nil, err
	}
	defer closeAbstract()
	expect, _ := json.Marshal(probeExpect{Scratch: dir, LandlockABI: s.landlockABI, UnixSocket: sock, AbstractSocket: abstract})
	env, err := confine.Env(probeEnv)
	if err != nil {
		return nil, fmt.Errorf("sandbox: probe: %w", err)
	}
	args := []string{LauncherArg, ls.Encode(), "--", s.launcher, LauncherArg, probeArg, string(expect)}
	cmd := exec.CommandContext(ctx, s.launcher, args...)
	cmd.Env = env
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// Two descriptors stand in for the worker's protocol pipes, which
	// must arrive as 3 and 4.
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, fmt.Errorf("sandbox: probe: %w", err)
	}
	defer devnull.Close()
	cmd.ExtraFiles = []*os.File{devnull, devnull}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &limitedWriter{w: &stdout, n: 1 << 20}
	cmd.Stderr = &limitedWriter{w: &stderr, n: 64 << 10}
	err = cmd.Run()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && strings.Contains(stderr.String(), "gradegate launcher:") {
			return nil, &launchExitError{code: ee.ExitCode(), stderr: strings.TrimSpace(stderr.String())}
		}
		return nil, fmt.Errorf("probe failed: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var rep probeReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		return nil, fmt.Errorf("probe output: %w", err)
	}
	return &rep, nil
}

// probeSocket listens on a pathname UNIX socket in a fresh directory under
// root that every uid may search, with the socket itself writable by every
// uid, so that only Landlock (ABI 9, LANDLOCK_ACCESS_FS_RESOLVE_UNIX) stands
// between the probe and a connection: the stand-in for a socket such as
// /var/run/docker.sock, which a grader running as its owner could reach.
func probeSocket(root string) (path string, closeFn func(), err error) {
	dir, err := os.MkdirTemp(root, "gradegate-probe-sock-")
	if err != nil {
		return "", nil, fmt.Errorf("sandbox: probe socket: %w", err)
	}
	path = filepath.Join(dir, "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err == nil {
		err = errors.Join(os.Chmod(dir, 0o755), os.Chmod(path, 0o777))
	}
	closeFn = func() {
		if ln != nil {
			ln.Close()
		}
		os.RemoveAll(dir)
	}
	if err != nil {
		closeFn()
		return "", nil, fmt.Errorf("sandbox: probe socket: %w", err)
	}
	return path, closeFn, nil
}

// abstractSocket listens on an abstract UNIX socket, which no file
// permission guards: the stand-in for the abstract sockets of other
// processes (a container runtime's, an X server's), which only Landlock's
// scoping (ABI 6) or the seccomp filter keeps a grader from.
func abstractSocket() (name string, closeFn func(), err error) {
	name = fmt.Sprintf("gradegate-probe-%d-%d", os.Getpid(), time.Now().UnixNano())
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: "@" + name, Net: "unix"})
	if err != nil {
		return "", nil, fmt.Errorf("sandbox: probe abstract socket: %w", err)
	}
	return name, func() { ln.Close() }, nil
}

// limitedWriter keeps the first n bytes and discards the rest.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.n -= k
		if _, err := l.w.Write(p[:k]); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// probeMain runs inside the sandbox, as a grader would, and reports what it
// can and cannot do. It changes nothing outside its scratch directory.
func probeMain(args []string, w io.Writer) int {
	fds := openFDs()
	var exp probeExpect
	if len(args) != 1 || json.Unmarshal([]byte(args[0]), &exp) != nil {
		fmt.Fprintln(os.Stderr, "gradegate probe: bad arguments")
		return confine.ExitLaunchUsage
	}
	r := probeReport{
		UID: os.Getuid(), EUID: os.Geteuid(), GID: os.Getgid(),
		Env: os.Environ(), FDs: fds,
		LandlockABI: exp.LandlockABI, KernelLandlockABI: confine.KernelLandlockABI(),
	}
	r.Groups, _ = os.Getgroups()
	r.readOwnStatus()
	r.Securebits = -1
	if v, err := unix.PrctlRetInt(unix.PR_GET_SECUREBITS, 0, 0, 0, 0); err == nil {
		r.Securebits = v
	}

	for _, f := range []struct {
		name           string
		domain, typ, p int
	}{
		{"AF_INET", unix.AF_INET, unix.SOCK_STREAM, 0},
		{"AF_INET6", unix.AF_INET6, unix.SOCK_STREAM, 0},
		{"AF_INET/udp", unix.AF_INET, unix.SOCK_DGRAM, 0},
		{"AF_NETLINK", unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE},
		{"AF_PACKET", unix.AF_PACKET, unix.SOCK_RAW, 0},
		{"AF_UNIX", unix.AF_UNIX, unix.SOCK_STREAM, 0},
	} {
		fd, err := unix.Socket(f.domain, f.typ|unix.SOCK_CLOEXEC, f.p)
		if err == nil {
			unix.Close(fd)
		}
		r.Sockets = append(r.Sockets, namedResult{f.name, errName(err)})
	}

	// setpgid(0, 0) is a no-op the kernel allows a group leader, and
	// unshare(CLONE_NEWUSER) is open to unprivileged users on most
	// kernels: an error here is the filter's. setsid from a group
	// leader fails in the kernel anyway (EPERM, setsid(2)).
	_, _, e := unix.RawSyscall(unix.SYS_SETPGID, 0, 0, 0)
	r.Syscalls = append(r.Syscalls, namedResult{"setpgid", errName(errnoErr(e))})
	_, _, e = unix.RawSyscall(unix.SYS_SETSID, 0, 0, 0)
	r.Syscalls = append(r.Syscalls, namedResult{"setsid", errName(errnoErr(e))})
	var params [120]byte // struct io_uring_params
	fd, _, e := unix.RawSyscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params)), 0)
	if e == 0 {
		unix.Close(int(fd))
	}
	r.Syscalls = append(r.Syscalls, namedResult{"io_uring_setup", errName(errnoErr(e))})

	name := fmt.Sprintf("gradegate-probe-%d", os.Getpid())
	r.WriteInside = errName(tryCreate(filepath.Join(exp.Scratch, name)))
	for _, dir := range []string{filepath.Dir(exp.Scratch), os.TempDir(), "/dev/shm", "/var/tmp"} {
		if _, ok := find(r.WriteOutside, dir); ok {
			continue
		}
		err := tryCreate(filepath.Join(dir, name))
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		r.WriteOutside = append(r.WriteOutside, namedResult{dir, errName(err)})
	}
	_, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", os.Getppid()))
	r.ParentEnviron = errName(err)
	for _, p := range procTargets(os.Getppid()) {
		var err error
		if p.Path == "/proc" {
			_, err = os.ReadDir(p.Path)
		} else {
			_, err = os.ReadFile(p.Path)
		}
		if errors.Is(err, unix.ENOENT) {
			continue // a kernel without it (/proc/net/unix needs CONFIG_UNIX)
		}
		r.ProcOther = append(r.ProcOther, namedResult{p.Name, errName(err)})
	}
	if exp.UnixSocket != "" {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			err = unix.Connect(fd, &unix.SockaddrUnix{Name: exp.UnixSocket})
			unix.Close(fd)
		}
		r.UnixConnect = append(r.UnixConnect, namedResult{exp.UnixSocket, errName(err)})
	}
	if exp.AbstractSocket != "" {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			err = unix.Connect(fd, &unix.SockaddrUnix{Name: "@" + exp.AbstractSocket})
			unix.Close(fd)
		}
		r.UnixConnect = append(r.UnixConnect, namedResult{"@" + exp.AbstractSocket, errName(err)})
	}
	r.Syscalls = append(r.Syscalls, probeIPC()...)
	r.Reach = probeReach(os.Getppid(), exp.Scratch)
	r.OwnChild = probeOwnChild()

	for _, l := range []struct {
		name string
		res  int
	}{{"AS", unix.RLIMIT_AS}, {"CPU", unix.RLIMIT_CPU}, {"FSIZE", unix.RLIMIT_FSIZE}, {"NOFILE", unix.RLIMIT_NOFILE}, {"NPROC", unix.RLIMIT_NPROC}, {"CORE", unix.RLIMIT_CORE}} {
		var rl unix.Rlimit
		if err := unix.Getrlimit(l.res, &rl); err == nil {
			r.Limits = append(r.Limits, limitResult{l.name, rl.Cur, rl.Max})
		}
	}
	// Last, as it would move the probe into a new user namespace.
	_, _, e = unix.RawSyscall(unix.SYS_UNSHARE, unix.CLONE_NEWUSER, 0, 0)
	r.Syscalls = append(r.Syscalls, namedResult{"unshare(CLONE_NEWUSER)", errName(errnoErr(e))})

	if err := json.NewEncoder(w).Encode(r); err != nil {
		return confine.ExitLaunchUsage
	}
	return 0
}

// reached lists the probeReach calls that succeeded.
func (r *probeReport) reached() []string {
	var out []string
	for _, x := range r.Reach {
		if x.Err == "" {
			out = append(out, x.Name)
		}
	}
	return out
}

// probeReach tries what would reach outside the grader's own processes and
// files, each in a form that changes nothing when it succeeds: signal 0 to
// gradegate (parent), its own priority and open-file limit written back
// unchanged, a mode and an extended attribute on a scratch file, an inotify
// instance, an abstract name bound on a socketpair socket (closed at once),
// a memfd, and the pids of /sys/fs/cgroup/cgroup.procs.
func probeReach(parent int, scratch string) []namedResult {
	var out []namedResult
	add := func(name string, e error) { out = append(out, namedResult{name, errName(e)}) }
	_, _, e := unix.RawSyscall(unix.SYS_KILL, uintptr(parent), 0, 0)
	add("signal gradegate", errnoErr(e))
	var rl unix.Rlimit
	_, _, e = unix.RawSyscall6(unix.SYS_PRLIMIT64, uintptr(parent), unix.RLIMIT_NOFILE, 0, uintptr(unsafe.Pointer(&rl)), 0, 0)
	if e == 0 {
		_, _, e = unix.RawSyscall6(unix.SYS_PRLIMIT64, uintptr(parent), unix.RLIMIT_NOFILE, uintptr(unsafe.Pointer(&rl)), 0, 0, 0)
	}
	add("prlimit64 on gradegate", errnoErr(e))
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, parent)
	if err == nil {
		// getpriority's raw value is 20 - nice (getpriority(2)); the
		// wrapper returns it raw.
		err = unix.Setpriority(unix.PRIO_PROCESS, parent, 20-prio)
	}
	add("setpriority on gradegate", err)
	var set unix.CPUSet
	err = unix.SchedGetaffinity(parent, &set)
	if err == nil {
		err = unix.SchedSetaffinity(parent, &set)
	}
	add("sched_setaffinity on gradegate", err)
	file := filepath.Join(scratch, fmt.Sprintf("gradegate-probe-mode-%d", os.Getpid()))
	if err := os.WriteFile(file, nil, 0o600); err == nil {
		add("chmod", unix.Fchmodat(unix.AT_FDCWD, file, 0o600, 0))
		add("utimensat", unix.UtimesNanoAt(unix.AT_FDCWD, file, nil, 0))
		add("setxattr", unix.Setxattr(file, "user.gradegate", []byte("1"), 0))
		_ = os.Remove(file)
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err == nil {
		unix.Close(fd)
	}
	add("inotify_init1", err)
	if pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err == nil {
		add("bind an abstract name", unix.Bind(pair[0], &unix.SockaddrUnix{Name: fmt.Sprintf("@gradegate-probe-%d", os.Getpid())}))
		unix.Close(pair[0])
		unix.Close(pair[1])
	}
	fd, err = unix.MemfdCreate("gradegate-probe", unix.MFD_CLOEXEC)
	if err == nil {
		unix.Close(fd)
	}
	add("memfd_create", err)
	// cgroup v2's root, then v1 hierarchies: the first that exists.
	for _, h := range []string{"", "pids", "memory", "cpu", "unified", "systemd"} {
		path := filepath.Join("/sys/fs/cgroup", h, "cgroup.procs")
		if _, err := os.ReadFile(path); !errors.Is(err, unix.ENOENT) {
			add("read "+path, err)
			break
		}
	}
	return out
}

// probeOwnChild starts /bin/sleep and kills it by pid, as a grader's
// subprocess.Popen.kill does; below Landlock ABI 6 on gradegate's uid that
// kill is the signal supervisor's to serve.
func probeOwnChild() string {
	cmd := exec.Command("/bin/sleep", "10")
	cmd.Env = []string{}
	if err := cmd.Start(); err != nil {
		return "start: " + err.Error()
	}
	_, _, e := unix.RawSyscall(unix.SYS_KILL, uintptr(cmd.Process.Pid), uintptr(unix.SIGKILL), 0)
	if e != 0 {
		// The child is still ours to end: its process group is the
		// probe's, which kill(0) may signal; the probe is done by now.
		_ = cmd.Process.Release()
		return errName(e)
	}
	_ = cmd.Wait()
	return ""
}

// probeIPC tries to create a System V shared memory segment, semaphore set
// and message queue, and a POSIX message queue, removing whatever it made.
func probeIPC() []namedResult {
	var out []namedResult
	id, err := unix.SysvShmGet(unix.IPC_PRIVATE, 4096, unix.IPC_CREAT|0o600)
	if err == nil {
		_, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	}
	out = append(out, namedResult{"shmget", errName(err)})
	const ipcRMID = 0
	r1, _, e := unix.RawSyscall(unix.SYS_SEMGET, unix.IPC_PRIVATE, 1, unix.IPC_CREAT|0o600)
	if e == 0 {
		unix.RawSyscall6(unix.SYS_SEMCTL, r1, 0, ipcRMID, 0, 0, 0)
	}
	out = append(out, namedResult{"semget", errName(errnoErr(e))})
	r1, _, e = unix.RawSyscall(unix.SYS_MSGGET, unix.IPC_PRIVATE, unix.IPC_CREAT|0o600, 0)
	if e == 0 {
		unix.RawSyscall(unix.SYS_MSGCTL, r1, ipcRMID, 0)
	}
	out = append(out, namedResult{"msgget", errName(errnoErr(e))})
	name, _ := unix.BytePtrFromString(fmt.Sprintf("gradegate-probe-%d", os.Getpid()))
	r1, _, e = unix.RawSyscall6(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(name)), unix.O_CREAT|unix.O_EXCL|unix.O_RDWR|unix.O_CLOEXEC, 0o600, 0, 0, 0)
	if e == 0 {
		unix.Close(int(r1))
		unix.RawSyscall(unix.SYS_MQ_UNLINK, uintptr(unsafe.Pointer(name)), 0, 0)
	}
	out = append(out, namedResult{"mq_open", errName(errnoErr(e))})
	return out
}

// openFDs lists the inherited descriptors below 1024: those open without
// FD_CLOEXEC. The probe's own Go runtime opens files at start-up (Go 1.25+
// reads the cgroup CPU quota for GOMAXPROCS), always close-on-exec, while a
// descriptor that survived execve cannot carry the flag.
func openFDs() []int {
	var fds []int
	for fd := 0; fd < 1024; fd++ {
		if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC == 0 {
			fds = append(fds, fd)
		}
	}
	return fds
}

// tryCreate creates and removes a file at path.
func tryCreate(path string) error {
	fd, err := unix.Open(path, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	unix.Close(fd)
	return unix.Unlink(path)
}

// readOwnStatus fills in the seccomp mode, no_new_privs and the capability
// sets in the form /proc/<pid>/status shows them ("2", "1", 16 hex digits),
// from prctl(2) and capget(2): Landlock keeps the probe, like a grader, out
// of /proc, its own entries included.
func (r *probeReport) readOwnStatus() {
	if v, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err == nil {
		r.Seccomp = strconv.Itoa(v)
	}
	if v, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); err == nil {
		r.NoNewPrivs = strconv.Itoa(v)
	}
	hex := func(v uint64) string { return fmt.Sprintf("%016x", v) }
	if eff, prm, inh, err := confine.ThreadCaps(); err == nil {
		r.CapEff, r.CapPrm, r.CapInh = hex(eff), hex(prm), hex(inh)
	}
	// PR_CAPBSET_READ and PR_CAP_AMBIENT_IS_SET answer EINVAL past the
	// last capability the kernel knows.
	var bnd, amb uint64
	for c := range 64 {
		in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0)
		if err != nil {
			break
		}
		if in == 1 {
			bnd |= 1 << c
		}
		if set, err := unix.PrctlRetInt(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_IS_SET, uintptr(c), 0, 0); err == nil && set == 1 {
			amb |= 1 << c
		}
	}
	r.CapBnd, r.CapAmb = hex(bnd), hex(amb)
}

func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// errName is "" for nil, else the errno's name (EACCES), else the message.
func errName(err error) string {
	if err == nil {
		return ""
	}
	var errno unix.Errno
	if errors.As(err, &errno) {
		if n := unix.ErrnoName(errno); n != "" {
			return n
		}
	}
	return err.Error()
}

// probeTimeout bounds one probe; a probe takes milliseconds.
const probeTimeout = 30 * time.Second
