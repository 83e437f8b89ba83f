//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/gradegate/gradegate/gate/sandbox/confine"
	"golang.org/x/sys/unix"
)

// fakeABIEnv makes the test binary answer landlock_create_ruleset's
// version query with the value it holds, for itself and every process it
// starts (see fakeLandlockABI).
const fakeABIEnv = "GRADEGATE_SANDBOX_TEST_LANDLOCK_ABI"

// runnerUID stands for the runner's user (GitHub's runner is uid 1001).
const runnerUID = 1001

// fakeLandlockABI installs, on every thread, a seccomp filter that hands
// landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) to a
// user-notification listener, and serves the listener from a thread of
// this process, answering abi: the kernel's own Landlock then runs at the
// rights of ABI abi (a ruleset of an older ABI is still valid), as on
// GitHub's ubuntu-latest kernel (ABI 4). Every process this one starts
// inherits the filter, and their queries come to the same listener.
func fakeLandlockABI(abi int) error {
	f := []unix.SockFilter{
		bpfLoad(bpfOffNR),
		bpfJEQ(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 2),
		bpfLoad(16 + 2*8), // the flags, args[2]
		bpfJEQ(unix.LANDLOCK_CREATE_RULESET_VERSION, 1, 0),
		bpfRet(unix.SECCOMP_RET_ALLOW),
		bpfRet(unix.SECCOMP_RET_USER_NOTIF),
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC|unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH|unix.SECCOMP_FILTER_FLAG_NEW_LISTENER,
		uintptr(unsafe.Pointer(&prog)))
	if errno != 0 {
		return fmt.Errorf("seccomp listener: %w", errno)
	}
	go func() {
		// struct seccomp_notif (80 bytes: id, pid, flags, seccomp_data)
		// and struct seccomp_notif_resp (id, val, error, flags).
		var req [80]byte
		for {
			clear(req[:])
			if _, _, e := unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&req[0]))); e != 0 {
				if e == unix.EINTR || e == unix.ENOENT {
					continue
				}
				return
			}
			resp := struct {
				id    uint64
				val   int64
				error int32
				flags uint32
			}{id: *(*uint64)(unsafe.Pointer(&req[0])), val: int64(abi)}
			_, _, _ = unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
		}
	}()
	return nil
}

// reachAttacks tries, as a grader, every way to act on a process or a file
// outside its own: argv[1] is a victim process of gradegate's user (the
// runner's worker), argv[2] gradegate, argv[3] a file outside scratch of
// gradegate's user, argv[4] its directory, argv[5] the syscall numbers.
// Each line is "name: refused ERRNO", "name: REACHED" or "name: n/a".
// Signals are 0 (the permission check alone) except where said; the
// victim's state is checked from outside.
const reachAttacks = `
import ctypes, errno, json, os, socket, struct, sys
victim, gate, outside, outdir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
nr = json.loads(sys.argv[5])
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def sc(name, *args):
    a = [ctypes.c_long(x) if isinstance(x, int) else x for x in args]
    r = libc.syscall(ctypes.c_long(nr[name]), *a)
    return r, ctypes.get_errno()
def report(label, r, e):
    print(label + ":", "REACHED" if r >= 0 else "refused " + errno.errorcode.get(e, str(e)), flush=True)
def call(label, name, *args):
    report(label, *sc(name, *args))
info = ctypes.create_string_buffer(struct.pack("iii", 0, 0, -1) + bytes(116))  # si_code SI_QUEUE
for target, who in ((victim, "victim"), (gate, "gradegate")):
    call("kill " + who, "kill", target, 0)
    call("tkill " + who, "tkill", target, 0)
    call("tgkill " + who, "tgkill", target, target, 0)
    call("rt_sigqueueinfo " + who, "rt_sigqueueinfo", target, 0, info)
    call("rt_tgsigqueueinfo " + who, "rt_tgsigqueueinfo", target, target, 0, info)
    r, e = sc("pidfd_open", target, 0)
    if r >= 0:
        call("pidfd_send_signal " + who, "pidfd_send_signal", r, 0, None, 0)
        call("pidfd_getfd " + who, "pidfd_getfd", r, 0, 0)
        os.close(r)
    else:
        report("pidfd_open " + who, r, e)
    old = (ctypes.c_ulong * 2)()
    r, e = sc("prlimit64", target, 7, None, old)  # RLIMIT_NOFILE
    call("prlimit64 " + who, "prlimit64", target, 7, (ctypes.c_ulong * 2)(17, 17) if who == "victim" else old, None)
    call("setpriority " + who, "setpriority", 0, target, 19)
    call("setpriority PRIO_PGRP " + who, "setpriority", 1, os.getpgid(target) if who == "victim" else target, 19)
    call("sched_setscheduler " + who, "sched_setscheduler", target, 5, ctypes.byref(ctypes.c_int(0)))  # SCHED_IDLE
    call("sched_setparam " + who, "sched_setparam", target, ctypes.byref(ctypes.c_int(0)))
    attr = ctypes.create_string_buffer(struct.pack("IIQiIQQQ", 56, 5, 0, 0, 0, 0, 0, 0))
    call("sched_setattr " + who, "sched_setattr", target, attr, 0)
    call("sched_setaffinity " + who, "sched_setaffinity", target, 8, ctypes.byref(ctypes.c_ulong(1)))
    call("ioprio_set " + who, "ioprio_set", 1, target, 3 << 13)  # IOPRIO_CLASS_IDLE
    call("move_pages " + who, "move_pages", target, 0, None, None, None, 0)
    mask = ctypes.c_ulong(1)
    call("migrate_pages " + who, "migrate_pages", target, 64, ctypes.byref(mask), ctypes.byref(mask))
    call("ptrace attach " + who, "ptrace", 16, target, 0, 0)
    call("process_vm_readv " + who, "process_vm_readv", target, None, 0, None, 0, 0)
    call("process_madvise " + who, "process_madvise", 0, None, 0, 0, 0)
call("kill -1", "kill", -1, 0)
call("setpriority PRIO_USER", "setpriority", 2, os.getuid(), 19)
call("ioprio_set IOPRIO_WHO_USER", "ioprio_set", 3, os.getuid(), 3 << 13)
# SIGIO to the victim, with SIGKILL as its signal: the victim dies if it lands.
rp, wp = os.pipe()
# Setting the owner is not itself a signal: where it is allowed, the
# delivery is what must fail (Landlock's scope, or the victim's uid).
r, e = sc("fcntl", rp, 8, victim)  # F_SETOWN
print("F_SETOWN victim:", "owner set" if r >= 0 else "refused " + errno.errorcode.get(e, str(e)))
own = struct.pack("ii", 1, victim)  # F_OWNER_PID
r2, e = sc("fcntl", rp, 15, ctypes.create_string_buffer(own))
print("F_SETOWN_EX victim:", "owner set" if r2 >= 0 else "refused " + errno.errorcode.get(e, str(e)))
if r >= 0:
    sc("fcntl", rp, 10, 9)  # F_SETSIG SIGKILL
    import fcntl
    fcntl.fcntl(rp, fcntl.F_SETFL, os.O_ASYNC | os.O_NONBLOCK)
    os.write(wp, b"x")
p = outside.encode()
call("chmod outside", "fchmodat", -100, p, 0o777, 0)
call("chown outside", "fchownat", -100, p, os.getuid(), -1, 0)
call("utimensat outside", "utimensat", -100, p, None, 0)
call("setxattr outside", "setxattr", p, b"user.gradegate", b"1", 1, 0)
call("removexattr outside", "removexattr", p, b"user.gradegate")
if "chmod" in nr:
    call("chmod(2) outside", "chmod", p, 0o777)
    call("utimes outside", "utimes", p, None)
with open("mine", "w") as f:
    call("fchmod in scratch", "fchmod", f.fileno(), 0o777)
r, e = sc("inotify_init1", 0)
if r >= 0:
    call("inotify_add_watch outside", "inotify_add_watch", r, outdir.encode(), 0x100)  # IN_CREATE
else:
    report("inotify_init1", r, e)
call("fanotify_init", "fanotify_init", 0x10, 0)  # FAN_REPORT_FID... unprivileged
call("memfd_create", "memfd_create", b"x", 0)
a, b = socket.socketpair()
try:
    a.bind("\0gradegate-squat-%d" % os.getpid())
    print("bind abstract on socketpair: REACHED")
except OSError as e:
    print("bind abstract on socketpair: refused", errno.errorcode.get(e.errno, str(e.errno)))
# A grader's own children stay its to signal: subprocess's kill() and
# terminate() and multiprocessing's Pool.terminate() signal them by pid.
import signal, time
child = os.fork()
if child == 0:
    os.closerange(0, 3)  # a survivor must not hold the grader's output open
    time.sleep(30)
    os._exit(0)
try:
    os.kill(child, signal.SIGKILL)
    _, status = os.waitpid(child, 0)
    print("kill own child:", "ok" if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL else "FAILED status %d" % status)
except OSError as e:
    print("kill own child: FAILED", errno.errorcode.get(e.errno, str(e.errno)))
for path in ("/sys/fs/cgroup/cgroup.procs", "/sys/fs/cgroup/pids/cgroup.procs", "/sys/fs/cgroup/memory/cgroup.procs"):
    try:
        open(path).read()
        print("read", path + ": REACHED")
    except FileNotFoundError:
        print("read", path + ": n/a")
    except OSError as e:
        print("read", path + ": refused", errno.errorcode.get(e.errno, str(e.errno)))
`

// reachSyscalls are the numbers reachAttacks calls by name.
func reachSyscalls() map[string]uintptr {
	m := map[string]uintptr{
		"kill": unix.SYS_KILL, "tkill": unix.SYS_TKILL, "tgkill": unix.SYS_TGKILL,
		"rt_sigqueueinfo": unix.SYS_RT_SIGQUEUEINFO, "rt_tgsigqueueinfo": unix.SYS_RT_TGSIGQUEUEINFO,
		"pidfd_open": unix.SYS_PIDFD_OPEN, "pidfd_send_signal": unix.SYS_PIDFD_SEND_SIGNAL, "pidfd_getfd": unix.SYS_PIDFD_GETFD,
		"prlimit64": unix.SYS_PRLIMIT64, "setpriority": unix.SYS_SETPRIORITY,
		"sched_setscheduler": unix.SYS_SCHED_SETSCHEDULER, "sched_setparam": unix.SYS_SCHED_SETPARAM,
		"sched_setattr": unix.SYS_SCHED_SETATTR, "sched_setaffinity": unix.SYS_SCHED_SETAFFINITY,
		"ioprio_set": unix.SYS_IOPRIO_SET, "move_pages": unix.SYS_MOVE_PAGES, "migrate_pages": unix.SYS_MIGRATE_PAGES,
		"ptrace": unix.SYS_PTRACE, "process_vm_readv": unix.SYS_PROCESS_VM_READV, "process_madvise": unix.SYS_PROCESS_MADVISE,
		"fcntl": unix.SYS_FCNTL, "fchmodat": unix.SYS_FCHMODAT, "fchownat": unix.SYS_FCHOWNAT, "utimensat": unix.SYS_UTIMENSAT,
		"setxattr": unix.SYS_SETXATTR, "removexattr": unix.SYS_REMOVEXATTR, "fchmod": unix.SYS_FCHMOD,
		"inotify_init1": unix.SYS_INOTIFY_INIT1, "inotify_add_watch": unix.SYS_INOTIFY_ADD_WATCH,
		"fanotify_init": unix.SYS_FANOTIFY_INIT, "memfd_create": unix.SYS_MEMFD_CREATE,
	}
	maps.Copy(m, confine.ArchDeniedSyscalls())
	return m
}

// reachResult is what a reach run found: the grader's lines, and the
// victim's and the outside file's state before and after.
type reachResult struct {
	UID    int    `json:"uid"`
	Status string `json:"status"`
	Grader string `json:"grader"`
	Before string `json:"before"`
	After  string `json:"after"`
	NewErr string `json:"new_err"`
	// OwnChild is the doctor's "signal its own child by pid" check.
	OwnChild string `json:"own_child"`
	Stopped  string `json:"stopped"`
}

// victimState describes what the attacks would change: the victim's nice,
// open-file limit, scheduling policy and CPUs, whether it lives, and the
// outside file's mode, times and extended attribute.
func victimState(pid int, file string) string {
	var b strings.Builder
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, pid)
	fmt.Fprintf(&b, "alive=%v prio=%d", err == nil, prio)
	var rl unix.Rlimit
	_ = unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &rl)
	fmt.Fprintf(&b, " nofile=%d/%d", rl.Cur, rl.Max)
	pol, _, _ := unix.Syscall(unix.SYS_SCHED_GETSCHEDULER, uintptr(pid), 0, 0)
	var set unix.CPUSet
	_ = unix.SchedGetaffinity(pid, &set)
	fmt.Fprintf(&b, " policy=%d cpus=%d", pol, set.Count())
	// Running or sleeping are the same here; stopped or dead are not.
	if st, _, _, _ := procStat(pid); strings.ContainsAny(st, "TtZX") {
		fmt.Fprintf(&b, " state=%s", st)
	}
	var fs unix.Stat_t
	_ = unix.Stat(file, &fs)
	fmt.Fprintf(&b, " mode=%o mtime=%d", fs.Mode&0o7777, fs.Mtim.Nano())
	n, _ := unix.Getxattr(file, "user.gradegate", make([]byte, 8))
	fmt.Fprintf(&b, " xattr=%d", n)
	return b.String()
}

// reachRun is the reach attack from a gradegate of this process's uid:
// it starts the victim, makes the outside file, runs the attacks as a
// grader and compares the victim before and after.
func reachRun(ctx context.Context, launcher string, opts ...Option) (reachResult, error) {
	r := reachResult{UID: os.Getuid()}
	s, err := New(append([]Option{WithLauncher(launcher)}, opts...)...)
	if err != nil {
		r.NewErr = err.Error()
		return r, nil
	}
	defer s.Close()
	r.Status = s.String()
	for _, c := range Doctor(ctx, s, "").Checks {
		if c.Name == "signal its own child by pid" {
			r.OwnChild = string(c.Status) + ": " + c.Detail
		}
	}
	victim := exec.Command("/bin/sleep", "60")
	victim.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := victim.Start(); err != nil {
		return r, err
	}
	defer func() { _ = victim.Process.Kill(); _ = victim.Wait() }()
	outdir, err := os.MkdirTemp("", "gradegate-outside-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(outdir)
	_ = os.Chmod(outdir, 0o755)
	outside := filepath.Join(outdir, "credentials")
	if err := os.WriteFile(outside, []byte("secret"), 0o600); err != nil {
		return r, err
	}
	r.Before = victimState(victim.Process.Pid, outside)
	dir, cleanup, err := s.Scratch(1)
	if err != nil {
		return r, err
	}
	defer cleanup()
	nrs, _ := json.Marshal(reachSyscalls())
	argv := []string{"/usr/bin/python3", "-I", "-S", "-c", reachAttacks, strconv.Itoa(victim.Process.Pid), strconv.Itoa(os.Getpid()), outside, outdir, string(nrs)}
	cmd := s.Command(Spec{Slot: 1, ScratchDir: dir, MemoryMB: 1024}, argv, graderEnv(dir))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = runContext(ctx, cmd)
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	r.Grader = out.String()
	if err != nil {
		return r, fmt.Errorf("grader: %w: %s", err, out.String())
	}
	time.Sleep(50 * time.Millisecond) // a SIGIO would be delivered by now
	r.After = victimState(victim.Process.Pid, outside)
	return r, nil
}

// checkReach fails for every attack that reached, and for any change to
// the victim or the outside file. ownChild is what the grader's kill of
// its own child must print.
func checkReach(t *testing.T, r reachResult, ownChild string) {
	t.Helper()
	if r.NewErr != "" {
		t.Fatalf("New: %s", r.NewErr)
	}
	t.Logf("uid %d, sandbox: %s", r.UID, r.Status)
	lines := 0
	for _, l := range strings.Split(strings.TrimSpace(r.Grader), "\n") {
		lines++
		if strings.HasSuffix(l, "REACHED") {
			t.Errorf("%s", l)
		}
		if v, ok := strings.CutPrefix(l, "kill own child: "); ok && v != ownChild {
			t.Errorf("kill own child: %s, want %s", v, ownChild)
		}
	}
	if lines < 40 {
		t.Errorf("the grader stopped early:\n%s", r.Grader)
	}
	if r.Before != r.After {
		t.Errorf("the victim or the outside file changed:\nbefore %s\nafter  %s", r.Before, r.After)
	}
}

// TestHostileReachRoot: gradegate as root (the Action), graders as uids
// 60000+, at the kernel's Landlock ABI.
func TestHostileReachRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := reachRun(ctx, os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Status, "uid=6") {
		t.Errorf("graders did not get their own uid: %s", r.Status)
	}
	checkReach(t, r, "ok")
}

// TestHostileReachNonRoot: gradegate as the runner's user (uid 1001),
// graders keep that uid, at the kernel's Landlock ABI and at ABI 4
// (GitHub's ubuntu-latest), where Landlock scopes no signals and the
// seccomp filter holds them. ABI 4 is faked two ways: by the kernel's
// answer (fakeLandlockABI), under which the launcher's own listener is
// refused (EBUSY: one per chain) and a grader cannot signal its children
// by pid, and by withLandlockABI, under which the signal supervisor lets
// it.
func TestHostileReachNonRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run gradegate as another user")
	}
	for _, tt := range []struct {
		name     string
		abi      int
		env      string
		ownChild string
		signals  string
	}{
		{"kernel ABI", 0, "", "ok", "landlock"},
		{"ABI 4 faked by the kernel's answer", 4, fakeABIEnv + "=4", "FAILED EPERM", "seccomp"},
		{"ABI 4 by option", 4, abiOptionEnv + "=4", "ok", "seccomp"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var r reachResult
			var env []string
			if tt.env != "" {
				env = append(env, tt.env)
			}
			runHelperAs(t, helperRun{name: "reach", uid: runnerUID, env: env}, &r)
			if r.UID != runnerUID {
				t.Fatalf("gradegate ran as uid %d, want %d", r.UID, runnerUID)
			}
			if !strings.Contains(r.Status, "uid=unchanged") || !strings.HasSuffix(r.Status, " signals="+tt.signals) {
				t.Errorf("sandbox %s, want graders on gradegate's uid and signals=%s", r.Status, tt.signals)
			}
			if tt.abi > 0 && !strings.Contains(r.Status, fmt.Sprintf("landlock=abi%d ", tt.abi)) {
				t.Errorf("sandbox %s, want Landlock ABI %d", r.Status, tt.abi)
			}
			checkReach(t, r, tt.ownChild)
			wantCheck := "ok: killed"
			if tt.ownChild != "ok" {
				wantCheck = "skip: EPERM"
			}
			if !strings.HasPrefix(r.OwnChild, wantCheck) {
				t.Errorf("doctor: signal its own child by pid: %q, want %q…", r.OwnChild, wantCheck)
			}
		})
	}
}

// abiOptionEnv makes the "reach" helper build its Sandbox withLandlockABI.
const abiOptionEnv = "GRADEGATE_SANDBOX_TEST_ABI_OPTION"
