//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Each hostile test runs a real Python grader through Command and checks
// that the sandbox stopped it.

func TestHostileNetworkConnect(t *testing.T) {
	s := newSandbox(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- c
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	r := runPython(t, s, Spec{Slot: 1, MemoryMB: 1024}, `
import socket, sys
for fam, addr in ((socket.AF_INET, ("127.0.0.1", int(sys.argv[1]))), (socket.AF_INET6, ("::1", int(sys.argv[1])))):
    try:
        socket.create_connection(addr, timeout=2).close()
        print("connected")
    except OSError as e:
        print("refused", e.errno)
`, strconv.Itoa(port))
	if r.err != nil {
		t.Fatalf("%v: %s", r.err, r.stderr)
	}
	if want := fmt.Sprintf("refused %d\nrefused %d\n", syscall.EACCES, syscall.EACCES); r.stdout != want {
		t.Errorf("grader printed %q, want %q", r.stdout, want)
	}
	select {
	case c := <-accepted:
		c.Close()
		t.Error("the listener received a connection from the grader")
	case <-time.After(100 * time.Millisecond):
	}
}

func TestHostileSecretsFromEnvironment(t *testing.T) {
	s := newSandbox(t)
	t.Setenv("GITHUB_TOKEN", "ghs_secret")
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	t.Setenv("ACTIONS_RUNTIME_TOKEN", "secret")
	r := runPython(t, s, Spec{Slot: 1, MemoryMB: 1024}, `
import os, json
print(json.dumps(sorted(os.environ)))
print(os.environ.get("GITHUB_TOKEN"), os.environ.get("OPENAI_API_KEY"))
`)
	if r.err != nil {
		t.Fatalf("%v: %s", r.err, r.stderr)
	}
	if want := `["HOME", "LC_ALL", "PATH", "TMPDIR"]` + "\nNone None\n"; r.stdout != want {
		t.Errorf("grader saw %q, want %q", r.stdout, want)
	}
}

func TestHostileParentEnviron(t *testing.T) {
	s := newSandbox(t)
	if s.SlotUID(1) < 0 && s.Status().LandlockABI == 0 {
		t.Skip("needs root (own uid) or Landlock (ptrace scoping) to protect the parent")
	}
	r := runPython(t, s, Spec{Slot: 1, MemoryMB: 1024}, `
import os, sys
for pid in (os.getppid(), int(sys.argv[1])):
    try:
        open("/proc/%d/environ" % pid, "rb").read()
        print("read")
    except OSError as e:
        print(type(e).__name__)
`, strconv.Itoa(os.Getpid()))
	if r.err != nil {
		t.Fatalf("%v: %s", r.err, r.stderr)
	}
	if want := "PermissionError\nPermissionError\n"; r.stdout != want {
		t.Errorf("grader printed %q, want %q", r.stdout, want)
	}
}

func TestHostileWriteOutsideScratch(t *testing.T) {
	s := newSandbox(t)
	if s.Status().LandlockABI == 0 {
		t.Skip("needs Landlock: without it /tmp is writable by file permissions")
	}
	r := runPython(t, s, Spec{Slot: 1, MemoryMB: 1024}, `
import os, tempfile
with open("inside.txt", "w") as f:
    f.write("ok")
print("inside ok", tempfile.gettempdir() == os.getcwd())
for d in (os.path.dirname(os.getcwd()), "/tmp", "/var/tmp", "/dev/shm"):
    p = os.path.join(d, "gradegate-hostile-%d" % os.getpid())
    try:
        open(p, "w").close()
        os.unlink(p)
        print(d, "written")
    except FileNotFoundError:
        print(d, "refused")
    except PermissionError:
        print(d, "refused")
`)
	if r.err != nil {
		t.Fatalf("%v: %s", r.err, r.stderr)
	}
	if strings.Contains(r.stdout, "written") || !strings.HasPrefix(r.stdout, "inside ok True\n") {
		t.Errorf("grader printed:\n%s", r.stdout)
	}
}

func TestHostileLeaveProcessGroup(t *testing.T) {
	s := newSandbox(t)
	// A forked child is no group leader, so only the filter refuses its
	// setsid; the grader itself leads its group, so its setpgid(0, 0)
	// would be a no-op the kernel allows.
	r := runPython(t, s, Spec{Slot: 1, MemoryMB: 1024}, `
import os
pid = os.fork()
if pid == 0:
    try:
        os.setsid()
        os._exit(1)
    except PermissionError:
        os._exit(0)
_, status = os.waitpid(pid, 0)
print("child setsid refused", os.waitstatus_to_exitcode(status) == 0)
try:
    os.setpgid(0, 0)
    print("setpgid allowed")
except PermissionError:
    print("setpgid refused")
import subprocess
print(subprocess.run(["/bin/sh", "-c", "echo subprocess works"], capture_output=True, text=True).stdout.strip())
`)
	if r.err != nil {
		t.Fatalf("%v: %s", r.err, r.stderr)
	}
	if want := "child setsid refused True\nsetpgid refused\nsubprocess works\n"; r.stdout != want {
		t.Errorf("grader printed %q, want %q", r.stdout, want)
	}
}

func TestHostileForkBomb(t *testing.T) {
	s := newSandbox(t)
	r := runPython(t, s, Spec{Slot: 7, MemoryMB: 1024}, `
import os, time
n = 0
try:
    while n < 10000:
        if os.fork() == 0:
            os.close(1)  # so the test does not wait on the pipe
            os.close(2)
            time.sleep(30)
            os._exit(0)
        n += 1
    print("unbounded", n)
except OSError as e:
    print("bounded", n, e.errno)
`)
	if r.err != nil {
		t.Fatalf("%v: %s", r.err, r.stderr)
	}
	var n, errno int
	if _, err := fmt.Sscanf(r.stdout, "bounded %d %d", &n, &errno); err != nil || errno != int(syscall.EAGAIN) {
		t.Fatalf("grader printed %q, want bounded by EAGAIN", r.stdout)
	}
	if limit := int(s.nproc); n >= limit {
		t.Errorf("grader forked %d processes, more than RLIMIT_NPROC %d", n, limit)
	}
}

func TestHostileFileSize(t *testing.T) {
	s := newSandbox(t)
	// CPython ignores SIGXFSZ, so the write fails with EFBIG instead of
	// killing the grader; seeking past the limit avoids writing 1 GiB.
	r := runPython(t, s, Spec{Slot: 1, MemoryMB: 1024}, `
import errno
with open("big", "wb", buffering=0) as f:
    f.seek((1 << 30) - 1)
    f.write(b"x")
    print("at limit ok")
    try:
        f.write(b"y")
        print("past limit written")
    except OSError as e:
        print("past limit", errno.errorcode[e.errno])
`)
	if r.err != nil {
		t.Fatalf("%v: %s", r.err, r.stderr)
	}
	if want := "at limit ok\npast limit EFBIG\n"; r.stdout != want {
		t.Errorf("grader printed %q, want %q", r.stdout, want)
	}
}

func TestHostileKillOtherProcess(t *testing.T) {
	s := newSandbox(t)
	if s.SlotUID(1) < 0 && s.Status().LandlockABI < 6 {
		t.Skip("needs root (own uid) or Landlock ABI 6 (signal scoping)")
	}
	// A stand-in for gradegate: killing the test process itself would end the test.
	victim := exec.Command("/bin/sleep", "60")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = victim.Process.Kill(); _ = victim.Wait() }()
	r := runPython(t, s, Spec{Slot: 1, MemoryMB: 1024}, `
import os, signal, sys
for pid in (int(sys.argv[1]), os.getppid()):
    try:
        os.kill(pid, 0 if pid == os.getppid() else signal.SIGKILL)
        print("signalled")
    except PermissionError:
        print("refused")
`, strconv.Itoa(victim.Process.Pid))
	if r.err != nil {
		t.Fatalf("%v: %s", r.err, r.stderr)
	}
	if want := "refused\nrefused\n"; r.stdout != want {
		t.Errorf("grader printed %q, want %q", r.stdout, want)
	}
	if err := victim.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("victim died: %v", err)
	}
}

func TestHostileOwnUID(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: graders keep gradegate's uid otherwise")
	}
	s := newSandbox(t)
	r := runPython(t, s, Spec{Slot: 2, MemoryMB: 1024}, `
import os
print(os.getuid(), os.geteuid(), os.getgid(), os.getgroups())
`)
	if r.err != nil {
		t.Fatalf("%v: %s", r.err, r.stderr)
	}
	uid := s.SlotUID(2)
	if want := fmt.Sprintf("%d %d %d []\n", uid, uid, uid); uid != s.SlotUID(0)+2 || r.stdout != want {
		t.Errorf("grader printed %q, want %q", r.stdout, want)
	}
}

func TestHostileMemory(t *testing.T) {
	s := newSandbox(t)
	r := runPython(t, s, Spec{Slot: 1, MemoryMB: 256}, `
try:
    b = bytearray(512 << 20)
    print("allocated")
except MemoryError:
    print("MemoryError")
`)
	if r.err != nil {
		t.Fatalf("%v: %s", r.err, r.stderr)
	}
	if r.stdout != "MemoryError\n" {
		t.Errorf("grader printed %q, want MemoryError", r.stdout)
	}
}

func TestHostileCPU(t *testing.T) {
	s := newSandbox(t)
	r := runPython(t, s, Spec{Slot: 1, MemoryMB: 1024, CPUSeconds: 1}, `
while True:
    pass
`)
	var ee *exec.ExitError
	if !errors.As(r.err, &ee) {
		t.Fatalf("busy loop ended with %v, want a signal", r.err)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || (ws.Signal() != syscall.SIGXCPU && ws.Signal() != syscall.SIGKILL) {
		t.Errorf("busy loop ended with %v, want SIGXCPU", ws)
	}
}

func TestHostileNamespacesAndTracing(t *testing.T) {
	s := newSandbox(t)
	r := runPython(t, s, Spec{Slot: 1, MemoryMB: 1024}, `
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
for name, call in (
    ("unshare", lambda: libc.unshare(0x10000000)),           # CLONE_NEWUSER
    ("ptrace", lambda: libc.ptrace(16, os.getppid(), 0, 0)),  # PTRACE_ATTACH
    ("io_uring_setup", lambda: libc.syscall(425, 1, ctypes.create_string_buffer(120))),
    ("bpf", lambda: libc.syscall(321, 0, 0, 0)),
):
    rc = call()
    print(name, rc, os.strerror(ctypes.get_errno()) if rc == -1 else "")
`)
	if r.err != nil {
		if strings.Contains(r.stderr, "No module named '_ctypes'") {
			t.Skip("no ctypes in this Python")
		}
		t.Fatalf("%v: %s", r.err, r.stderr)
	}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if !strings.HasSuffix(line, "-1 Operation not permitted") {
			t.Errorf("grader: %s; want EPERM", line)
		}
	}
}

func TestCommandDescriptors(t *testing.T) {
	s := newSandbox(t)
	dir, cleanup, err := s.Scratch(1)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := s.Command(Spec{Slot: 1, ScratchDir: dir, MemoryMB: 1024}, []string{python(t, s), "-I", "-S", "-c", `
import os
def is_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False
fds = [fd for fd in range(256) if is_open(fd)]
msg = os.read(3, 100)
os.write(4, repr((fds, msg)).encode())
`}, graderEnv(dir))
	cmd.ExtraFiles = []*os.File{inR, outW}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	inW.Write([]byte("ping"))
	inW.Close()
	buf := make([]byte, 200)
	n, _ := outR.Read(buf)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%v: %s", err, stderr.String())
		}
	case <-ctx.Done():
		t.Fatal("grader hung")
	}
	if got, want := string(buf[:n]), "([0, 1, 2, 3, 4], b'ping')"; got != want {
		t.Errorf("grader reported %s, want %s", got, want)
	}
}

// TestGraderEverydayWorks checks that the layers leave what ordinary grader
// code does alone: threads (glibc's pthread_create falls back from clone3 to
// clone), subprocesses, socketpairs, temporary files, /dev/null and
// /dev/urandom, CPU counts and time zones.
func TestGraderEverydayWorks(t *testing.T) {
	s := newSandbox(t)
	r := runPython(t, s, Spec{Slot: 1, MemoryMB: 1024, CPUSeconds: 10}, `
import os, socket, subprocess, tempfile, threading, time
out = []
th = threading.Thread(target=lambda: out.append("thread"))
th.start(); th.join()
out.append(subprocess.run(["/bin/echo", "subprocess"], capture_output=True, text=True).stdout.strip())
a, b = socket.socketpair()
a.send(b"socketpair"); out.append(b.recv(20).decode())
with tempfile.NamedTemporaryFile() as f:
    f.write(b"x"); out.append("tempfile")
with open("/dev/null", "w") as f:
    f.write("x"); out.append("devnull")
out.append("urandom %d" % len(os.urandom(8) + open("/dev/urandom", "rb").read(8)))
out.append("cpus %s" % (os.cpu_count() > 0))
out.append(time.strftime("%Z", time.localtime(0)) != "")
print(" ".join(map(str, out)))
`)
	if r.err != nil {
		t.Fatalf("%v: %s", r.err, r.stderr)
	}
	if want := "thread subprocess socketpair tempfile devnull urandom 16 cpus True True\n"; r.stdout != want {
		t.Errorf("grader printed %q, want %q", r.stdout, want)
	}
}
