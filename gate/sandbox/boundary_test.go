//go:build linux

package sandbox

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestNoLandlockFailsClosed makes the landlock_* syscalls fail with ENOSYS,
// as on a kernel without Landlock, for a root gradegate (graders get their
// own uid) and an unprivileged one (graders keep its uid): without a
// filesystem boundary New refuses, naming it, the doctor says so, and only
// an unsandboxed Sandbox is made.
func TestNoLandlockFailsClosed(t *testing.T) {
	settings := []struct {
		name string
		uid  int
	}{{"as gradegate's uid", -1}}
	if os.Geteuid() == 0 {
		settings = append(settings, struct {
			name string
			uid  int
		}{"as an unprivileged user", nobody})
	}
	for _, st := range settings {
		t.Run(st.name, func(t *testing.T) {
			var r boundariesResult
			runHelperAs(t, helperRun{name: "boundaries", uid: st.uid, noLandlock: true}, &r)
			if r.KernelABI != 0 {
				t.Fatalf("the helper saw Landlock ABI %d, want none", r.KernelABI)
			}
			if !r.NoFilesystem || r.NoNetwork || !strings.Contains(r.Err, "Landlock") {
				t.Errorf("New = %s; want ErrNoFilesystemBoundary naming Landlock, and the network boundary in place", r.Err)
			}
			if !r.Unsandboxed {
				t.Error("New(WithUnsandboxed(true)) is not unsandboxed")
			}
			if r.DoctorFilesystem || !strings.Contains(r.DoctorText, "filesystem boundary: NOT established") {
				t.Errorf("doctor reports a filesystem boundary:\n%s", r.DoctorText)
			}
		})
	}
}

// TestHostileUnixSockets: a grader reaches no socket it did not create,
// whatever its mode: a path-named one open to everyone, an abstract one,
// a datagram one by sendto; a stream socketpair still works.
func TestHostileUnixSockets(t *testing.T) {
	s := newSandbox(t)
	sock, closeSock, err := probeSocket(os.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer closeSock()
	abstract, closeAbstract, err := abstractSocket()
	if err != nil {
		t.Fatal(err)
	}
	defer closeAbstract()
	dgram, closeDgram := dgramSocket(t, -1)
	defer closeDgram()
	r := runPython(t, s, Spec{Slot: 1, MemoryMB: 1024}, socketAttacks, sock, sock, abstract, dgram)
	if r.err != nil {
		t.Fatalf("%v: %s", r.err, r.stderr)
	}
	checkSocketAttacks(t, r.stdout)
}

// TestHostileSocketsNonRoot runs gradegate as an unprivileged user whose
// supplementary group owns a docker.sock stand-in (mode 0660), and who has
// a 0600 socket of its own: an unprivileged gradegate cannot drop the
// group, so the grader keeps it, and still reaches neither socket.
func TestHostileSocketsNonRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run gradegate as another user with a supplementary group")
	}
	const user, dockerGroup = 50000, 50001
	dir, err := os.MkdirTemp("", "gradegate-docker-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	docker := filepath.Join(dir, "docker.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: docker, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := os.Chown(docker, 0, dockerGroup); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(docker, 0o660); err != nil {
		t.Fatal(err)
	}
	abstract, closeAbstract, err := abstractSocket()
	if err != nil {
		t.Fatal(err)
	}
	defer closeAbstract()
	dgram, closeDgram := dgramSocket(t, user)
	defer closeDgram()
	var r socketsResult
	runHelperAs(t, helperRun{
		name: "sockets", uid: user, groups: []uint32{dockerGroup},
		env: []string{"GRADEGATE_TEST_DOCKER_SOCK=" + docker, "GRADEGATE_TEST_ABSTRACT=" + abstract, "GRADEGATE_TEST_DGRAM=" + dgram},
	}, &r)
	t.Logf("%+v", r)
	if !slices.Contains(r.Groups, dockerGroup) {
		t.Fatalf("helper groups %v, want %d among them", r.Groups, dockerGroup)
	}
	checkSocketAttacks(t, r.Grader)
	if !strings.HasPrefix(r.GroupsCheck, "skip: ") || !strings.Contains(r.GroupsCheck, strconv.Itoa(dockerGroup)) {
		t.Errorf("doctor groups check = %q, want the groups reported and the sockets out of reach", r.GroupsCheck)
	}
}

// dgramSocket binds a datagram socket, writable by everyone, owned by uid
// when uid >= 0.
func dgramSocket(t *testing.T, uid int) (string, func()) {
	t.Helper()
	dir, err := os.MkdirTemp("", "gradegate-dgram-")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "log")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{os.Chmod(dir, 0o755), os.Chmod(path, 0o777)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if uid >= 0 {
		if err := os.Chown(path, uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	return path, func() { c.Close(); os.RemoveAll(dir) }
}

// checkSocketAttacks checks socketAttacks' output: nothing reached, the
// stream socketpair works.
func checkSocketAttacks(t *testing.T, out string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 6 || lines[5] != "socketpair ok" {
		t.Errorf("grader printed:\n%s\nwant five refusals and a working socketpair", out)
	}
	for _, l := range lines {
		if strings.Contains(l, "REACHED") {
			t.Errorf("grader: %s", l)
		}
	}
}

// TestHostileIPC: System V IPC and POSIX message queues are refused, also
// attaching to a 0666 segment another process left behind.
func TestHostileIPC(t *testing.T) {
	s := newSandbox(t)
	id, err := unix.SysvShmGet(unix.IPC_PRIVATE, 4096, unix.IPC_CREAT|0o666)
	if err != nil {
		t.Skipf("shmget: %v", err)
	}
	defer unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	r := runPython(t, s, Spec{Slot: 1, MemoryMB: 1024}, `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
IPC_CREAT, O_CREAT, O_RDWR = 0o1000, 0o100, 0o2
for name, call in (
    ("shmget", lambda: libc.shmget(0, 4096, IPC_CREAT | 0o666)),
    ("shmat", lambda: libc.shmat(int(sys.argv[1]), None, 0)),
    ("semget", lambda: libc.semget(0, 1, IPC_CREAT | 0o666)),
    ("msgget", lambda: libc.msgget(0, IPC_CREAT | 0o666)),
    ("mq_open", lambda: libc.mq_open(b"/gradegate-hostile", O_CREAT | O_RDWR, 0o666, None)),
):
    rc = call()
    print(name, "refused" if rc in (-1, 2**64 - 1) else "ALLOWED", os.strerror(ctypes.get_errno()))
`, strconv.Itoa(id))
	if r.err != nil {
		if strings.Contains(r.stderr, "No module named '_ctypes'") {
			t.Skip("no ctypes in this Python")
		}
		t.Fatalf("%v: %s", r.err, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 5 {
		t.Fatalf("grader printed %q", r.stdout)
	}
	for _, l := range lines {
		if !strings.HasSuffix(l, "refused Operation not permitted") {
			t.Errorf("grader: %s; want refused with EPERM", l)
		}
	}
}
