//go:build linux

package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gradegate/gradegate/gate/sandbox/confine"
)

// nobody is the uid unprivileged helpers run as when the tests run as root.
const nobody = 65534

// TestProtectSelfGuardsSecrets runs, as an unprivileged uid with Landlock
// refused, what a grader would meet: before ProtectSelf New refuses with
// ErrSecretsExposed and the doctor says so; after it New succeeds, and the
// non-dumpable process can still list its own descriptors.
func TestProtectSelfGuardsSecrets(t *testing.T) {
	uid := -1
	if os.Geteuid() == 0 {
		uid = nobody
	}
	var r secretsResult
	helper(t, "secrets", nil, uid, []any{`'"landlock":{'`, confine.ExitLaunchLandlock}, &r)
	t.Logf("%+v", r)
	if r.UID == 0 {
		t.Fatal("helper ran as root")
	}
	if !r.BeforeExposed {
		t.Errorf("New before ProtectSelf = %s, want ErrSecretsExposed", r.Before)
	}
	if r.DoctorBefore || !r.DoctorCheckFail {
		t.Errorf("doctor before ProtectSelf: secrets_protected %v, environ check failed %v; want false, true", r.DoctorBefore, r.DoctorCheckFail)
	}
	if r.FDScan != "<nil>" {
		t.Errorf("listing /proc/self/fd after ProtectSelf: %s", r.FDScan)
	}
	// Without Landlock New refuses all the same: the filesystem boundary
	// is missing, but gradegate's environment is no longer exposed.
	if r.AfterExposed || !r.AfterNoFS || !r.DoctorAfter {
		t.Errorf("after ProtectSelf: New = %s, doctor secrets_protected %v; want only ErrNoFilesystemBoundary, true", r.After, r.DoctorAfter)
	}
}

// TestRootlessUserNamespace runs New and the doctor as root of a user
// namespace that maps only uid 0 (a rootless container): the uid switch is
// unavailable, every other layer holds, and the grader has no capability.
func TestRootlessUserNamespace(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare")
	}
	if err := exec.Command("unshare", "--user", "--map-root-user", "/bin/true").Run(); err != nil {
		t.Skipf("unshare --user --map-root-user refused: %v", err)
	}
	var r rootlessResult
	helper(t, "rootless", []string{"unshare", "--user", "--map-root-user"}, -1, nil, &r)
	t.Logf("%+v", r)
	if r.Err != "" {
		t.Fatalf("New: %s", r.Err)
	}
	if st := r.Status; st.UID != -1 || !st.Seccomp || !st.Rlimits || st.LandlockABI != min(confine.KernelLandlockABI(), confine.MaxLandlockABI) {
		t.Errorf("Status = %+v, want uid unchanged, seccomp, rlimits and Landlock", st)
	}
	if r.SlotUID != -1 {
		t.Errorf("SlotUID(0) = %d, want -1", r.SlotUID)
	}
	if !r.CapsClear || r.Securebits&confine.GraderSecurebits != confine.GraderSecurebits {
		t.Errorf("probe capabilities cleared %v, securebits %#x; want true, %#x", r.CapsClear, r.Securebits, confine.GraderSecurebits)
	}
	for _, line := range strings.Split(strings.TrimSpace(r.GraderCaps), "\n") {
		if _, v, _ := strings.Cut(line, ":"); strings.Trim(strings.TrimSpace(v), "0") != "" {
			t.Errorf("grader %s", line)
		}
	}
	if !r.Boundary {
		t.Error("doctor: network boundary not established")
	}
	// Root without a uid switch is a failure the doctor must show; UNIX
	// sockets outside the grader's own stay out of reach all the same.
	want := []string{"own uid per slot"}
	var got []string
	for _, f := range r.Failed {
		name, _, _ := strings.Cut(f, ":")
		got = append(got, name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("doctor failed checks = %q, want %q", r.Failed, want)
	}
}

// TestRootGraderHasNoCapabilities makes the uid switch fail, so the grader
// stays uid 0, and checks that it holds no capability and regains none.
func TestRootGraderHasNoCapabilities(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	s, err := New(WithLauncher(fakeLauncher(t, `'"uid":6'`, confine.ExitLaunchCredentials)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if st := s.Status(); st.UID != -1 {
		t.Fatalf("Status = %+v, want the uid unchanged", st)
	}
	if !s.probe.capsCleared(true) {
		t.Errorf("probe capabilities: eff %s prm %s inh %s amb %s bnd %s", s.probe.CapEff, s.probe.CapPrm, s.probe.CapInh, s.probe.CapAmb, s.probe.CapBnd)
	}
	r := runPython(t, s, Spec{Slot: 1, MemoryMB: 1024}, `
import os, subprocess, sys
`+pythonCaps+`
caps = {l.split(":")[0]: int(l.split(":")[1], 16) for l in lines}
print("uid", os.getuid(), "caps", sum(caps.values()), len(caps))
os.close(os.open("secret", os.O_CREAT | os.O_WRONLY, 0))  # mode 000: chmod is refused
for name, f in (("read mode 000", lambda: open("secret").read()),
                ("chown", lambda: os.chown("secret", 1, 1)),
                ("setuid", lambda: os.setuid(1))):
    try:
        f()
        print(name, "allowed")
    except PermissionError:
        print(name, "refused")
# A program executed by uid 0 regains nothing (securebits, no_new_privs).
child = subprocess.run([sys.executable, "-I", "-S", "-c", CAPS + "\nprint(lines[2])"], capture_output=True, text=True).stdout
print("child", child.split())
`)
	if r.err != nil {
		t.Fatalf("%v: %s", r.err, r.stderr)
	}
	want := "uid 0 caps 0 5\nread mode 000 refused\nchown refused\nsetuid refused\nchild ['CapEff:', '0000000000000000']\n"
	if r.stdout != want {
		t.Errorf("grader printed %q, want %q", r.stdout, want)
	}
}

func TestReserveUIDs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "uids")
	a, err := reserveUIDs(dir, UIDBlockSize)
	if err != nil {
		t.Fatal(err)
	}
	defer a.release()
	b, err := reserveUIDs(dir, 2*UIDBlockSize)
	if err != nil {
		t.Fatal(err)
	}
	defer b.release()
	if a.base < BaseUID || (a.base-BaseUID)%UIDBlockSize != 0 || b.slots != 2*UIDBlockSize || len(b.locks) != 2 {
		t.Fatalf("blocks a=%d+%d b=%d+%d: want aligned blocks from %d", a.base, a.slots, b.base, b.slots, BaseUID)
	}
	if a.base < b.base+b.slots && b.base < a.base+a.slots {
		t.Errorf("blocks overlap: a=%d+%d b=%d+%d", a.base, a.slots, b.base, b.slots)
	}
	// Another process's lock: a block whose lock is held is skipped.
	first := a.base
	a.release()
	held, err := lockBlock(dir, (first-BaseUID)/UIDBlockSize)
	if err != nil || held == nil {
		t.Fatalf("lockBlock = %v, %v", held, err)
	}
	c, err := reserveUIDs(dir, UIDBlockSize)
	if err != nil {
		t.Fatal(err)
	}
	defer c.release()
	if c.base == first {
		t.Errorf("reserved block %d although its lock is held", c.base)
	}
	held.Close()
	if _, err := reserveUIDs(dir, maxUIDBlocks*UIDBlockSize+1); err == nil {
		t.Error("reserved more uids than there are blocks")
	}
}

// TestReserveUIDsSkipsLiveTasks leaves a process running under a block's
// uid without holding its lock, as a grader of a crashed gradegate would.
func TestReserveUIDsSkipsLiveTasks(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a process as another uid")
	}
	dir := filepath.Join(t.TempDir(), "uids")
	a, err := reserveUIDs(dir, UIDBlockSize)
	if err != nil {
		t.Fatal(err)
	}
	first := a.base
	a.release()
	survivor := exec.Command("/bin/sleep", "30")
	survivor.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(first + 5), Gid: uint32(first + 5)}}
	if err := survivor.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { survivor.Process.Kill(); survivor.Wait() }()
	b, err := reserveUIDs(dir, UIDBlockSize)
	if err != nil {
		t.Fatal(err)
	}
	defer b.release()
	if b.base == first {
		t.Errorf("reserved block %d although uid %d runs a process", b.base, first+5)
	}
}

// TestSandboxesGetDisjointUIDs: two Sandboxes of one process, like two
// gradegate processes, never share a grader uid.
func TestSandboxesGetDisjointUIDs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: only root switches uids")
	}
	lockDir := filepath.Join(t.TempDir(), "uids")
	var boxes []*Sandbox
	for range 2 {
		s, err := New(WithLauncher(os.Args[0]), WithUIDLockDir(lockDir))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		boxes = append(boxes, s)
	}
	a, b := boxes[0], boxes[1]
	lo0, hi0 := a.SlotUID(0), a.SlotUID(a.Slots()-1)
	lo1, hi1 := b.SlotUID(0), b.SlotUID(b.Slots()-1)
	if lo0 < BaseUID || lo1 < BaseUID || (lo0 <= hi1 && lo1 <= hi0) {
		t.Errorf("uids %d-%d and %d-%d: want disjoint ranges from %d", lo0, hi0, lo1, hi1, BaseUID)
	}
	if a.Status().UID != lo0 || b.Status().UID != lo1 {
		t.Errorf("Status().UID = %d, %d; want the blocks' first uids %d, %d", a.Status().UID, b.Status().UID, lo0, lo1)
	}
	// Closing releases the block for the next Sandbox.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := New(WithLauncher(os.Args[0]), WithUIDLockDir(lockDir))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.SlotUID(0) == lo1 {
		t.Errorf("third Sandbox got the second one's uids %d", lo1)
	}
}

func TestSlotOutOfRange(t *testing.T) {
	s := newSandbox(t)
	n := s.Slots()
	if n < UIDBlockSize {
		t.Fatalf("Slots() = %d, want at least %d", n, UIDBlockSize)
	}
	for _, slot := range []int{-1, n} {
		if _, _, err := s.Scratch(slot); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("Scratch(%d) = %v, want out of range", slot, err)
		}
		if err := s.Command(Spec{Slot: slot, ScratchDir: os.TempDir()}, []string{"/bin/true"}, nil).Run(); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("Command(slot %d).Run() = %v, want out of range", slot, err)
		}
		if uid := s.SlotUID(slot); uid != -1 {
			t.Errorf("SlotUID(%d) = %d, want -1", slot, uid)
		}
	}
	if os.Geteuid() == 0 && s.SlotUID(n-1) != s.SlotUID(0)+n-1 {
		t.Errorf("SlotUID(%d) = %d, want %d", n-1, s.SlotUID(n-1), s.SlotUID(0)+n-1)
	}
}

func TestIDsMapped(t *testing.T) {
	tests := []struct {
		name   string
		uidMap string
		first  int
		want   bool
	}{
		{"initial namespace", "         0          0 4294967295\n", BaseUID, true},
		{"only root (unshare --map-root-user)", "         0          0          1\n", BaseUID, false},
		{"rootless Docker", "0 1000 1\n1 100000 65536\n", BaseUID, true},
		{"block past the range", "0 1000 1\n1 100000 65536\n", 65500, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "uid_map")
			if err := os.WriteFile(path, []byte(tt.uidMap), 0o600); err != nil {
				t.Fatal(err)
			}
			if got := idsMapped(path, tt.first, UIDBlockSize); got != tt.want {
				t.Errorf("idsMapped(%d) = %v, want %v", tt.first, got, tt.want)
			}
		})
	}
}

// TestDoctorReportsCapabilities: the doctor shows the capability check and
// whether gradegate's environment is out of reach.
func TestDoctorReportsCapabilities(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep := Doctor(ctx, newSandbox(t), "")
	found := false
	for _, c := range rep.Checks {
		if c.Layer == "capabilities" {
			found = true
			if c.Status != CheckOK {
				t.Errorf("check %+v", c)
			}
		}
	}
	if !found {
		t.Error("no capabilities check")
	}
	if !rep.SecretsProtected {
		t.Error("SecretsProtected = false")
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if want := "gradegate's environment: out of the graders' reach"; !strings.Contains(b.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, b.String())
	}
}

func TestParseStatusIDs(t *testing.T) {
	tests := []struct {
		name   string
		status string
		want   statusIDs
	}{
		{"kernel layout", "Name:\tsleep\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t7\nPid:\t7\nPPid:\t1\nTracerPid:\t0\nUid:\t60001\t60002\t60003\t60004\nGid:\t0\t0\t0\t0\nFDSize:\t64\nVmRSS:\t  896 kB\nThreads:\t3\nSigQ:\t0/95538\n",
			statusIDs{uids: [4]int{60001, 60002, 60003, 60004}, nuids: 4, threads: 3}},
		{"no thread count", "Name:\tx\nUid:\t0\t0\t0\t0\n", statusIDs{nuids: 4}},
		{"no uid line", "Name:\tx\nThreads:\t1\n", statusIDs{threads: 1}},
		{"cut short", "Name:\tx\nUid:\t60010\t600", statusIDs{uids: [4]int{60010, 600}, nuids: 2}},
		{"a field that is no number ends the line", "Uid:\t60010\tx\t60011\t60012\nThreads:\t1\n", statusIDs{uids: [4]int{60010}, nuids: 1, threads: 1}},
		{"a fifth field is not read", "Uid:\t1\t2\t3\t4\t5\nThreads:\t2\n", statusIDs{uids: [4]int{1, 2, 3, 4}, nuids: 4, threads: 2}},
		{"empty", "", statusIDs{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseStatusIDs([]byte(tt.status)); got != tt.want {
				t.Errorf("parseStatusIDs = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestProcIDsFindsEveryProcess: both halves of the listing are read, this
// process among them, with its uid and its threads.
func TestProcIDsFindsEveryProcess(t *testing.T) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	pids := 0
	for _, e := range entries {
		if n := e.Name(); n[0] >= '0' && n[0] <= '9' {
			pids++
		}
	}
	got := procIDs()
	// Processes come and go (the test binary's own helpers among them).
	if len(got) < pids/2+1 || len(got) > pids+16 {
		t.Errorf("procIDs read %d processes; /proc lists %d", len(got), pids)
	}
	if n := tasksOfUID(os.Getuid()); n < 2 {
		t.Errorf("tasksOfUID(own uid) = %d, want this process's threads at least", n)
	}
}
