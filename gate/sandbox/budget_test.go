//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gradegate/gradegate/gate/grading"
)

// runGuarded runs code in slot 1 under a Guard and returns the grader's
// wait error, its output and what the Guard found.
func runGuarded(t *testing.T, s *Sandbox, spec Spec, code string) (error, string, *BudgetError) {
	t.Helper()
	dir, cleanup, err := s.Scratch(spec.Slot)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	spec.ScratchDir = dir
	cmd := s.Command(spec, []string{python(t, s), "-I", "-S", "-c", code}, graderEnv(dir))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g := s.Guard(spec, cmd.Process.Pid)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	defer stop()
	werr := cmd.Wait()
	g.Stop()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if ctx.Err() != nil {
		t.Fatalf("grader hung: %s", out.String())
	}
	return werr, out.String(), g.Exceeded()
}

// TestHostileMemoryTotal: eight forked children of 150 MB each stay under
// a 256 MB RLIMIT_AS one by one; together they pass memory_mb, and the
// Guard kills the whole group.
func TestHostileMemoryTotal(t *testing.T) {
	s := newSandbox(t)
	werr, out, ex := runGuarded(t, s, Spec{Slot: 1, MemoryMB: 256}, `
import os, time
for i in range(8):
    if os.fork() == 0:
        block = b"x" * (150 << 20)
        time.sleep(30)
        os._exit(0)
for i in range(8):
    os.wait()
print("all children finished")
`)
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("grader ended with %v (%s), want SIGKILL", werr, out)
	}
	if ex == nil || ex.Class != grading.ClassMemoryExceeded {
		t.Fatalf("Guard.Exceeded() = %v, want memory_exceeded", ex)
	}
	t.Log(ex.Message)
}

// TestHostileScratchBudget writes past the scratch budget in several files,
// each under the file size limit, and fallocate cannot make that instant.
func TestHostileScratchBudget(t *testing.T) {
	s := newSandbox(t)
	werr, out, ex := runGuarded(t, s, Spec{Slot: 1, MemoryMB: 1024, ScratchBytes: 16 << 20}, `
import ctypes, errno, os, time
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open("falloc", os.O_CREAT | os.O_WRONLY)
if libc.fallocate(fd, 0, ctypes.c_long(0), ctypes.c_long(1 << 30)) == 0:
    print("fallocate allowed", flush=True)
else:
    print("fallocate EOPNOTSUPP" if ctypes.get_errno() == errno.EOPNOTSUPP else errno.errorcode[ctypes.get_errno()], flush=True)
os.close(fd)
chunk = b"x" * (1 << 20)
for i in range(4):
    with open("part%d" % i, "wb") as f:
        for _ in range(8):
            f.write(chunk)
        f.flush()
        os.fsync(f.fileno())
time.sleep(30)
print("not stopped")
`)
	if ex == nil || ex.Class != grading.ClassSandboxViolation {
		t.Fatalf("Guard.Exceeded() = %v (grader: %v, %s), want sandbox_violation", ex, werr, out)
	}
	if want := "fallocate EOPNOTSUPP\n"; out != want {
		t.Errorf("grader printed %q, want %q", out, want)
	}
	t.Log(ex.Message)
}

// TestGuardLeavesHonestGraders: a grader within both budgets runs to its
// end.
func TestGuardLeavesHonestGraders(t *testing.T) {
	s := newSandbox(t)
	werr, out, ex := runGuarded(t, s, Spec{Slot: 1, MemoryMB: 256}, `
import os, time
block = b"x" * (64 << 20)
with open("data", "wb") as f:
    f.write(block)
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
time.sleep(0.5)
print("done")
`)
	if werr != nil || ex != nil || out != "done\n" {
		t.Errorf("grader: %v, %q; Guard: %v", werr, out, ex)
	}
}

// BenchmarkGuardScan compares a Guard's two memory checks of this test's
// own process group: a pass over all of /proc (once a second) and
// following the group's known processes (every 50 ms).
//
//	go test -run '^$' -bench GuardScan ./gate/sandbox/
func BenchmarkGuardScan(b *testing.B) {
	pgid := syscall.Getpgrp()
	b.Run("all", func(b *testing.B) {
		for b.Loop() {
			groupMemory(pgid)
		}
	})
	b.Run("follow", func(b *testing.B) {
		pg := &processGroup{pgid: pgid, members: map[int]bool{}, buf: make([]byte, 4096)}
		pg.scanAll()
		for b.Loop() {
			pg.follow()
			pg.memory()
		}
	})
}

// TestHostileSharedMemory: six forked children each hold 100 MB of
// MAP_SHARED memory, which no process's anonymous memory shows; under
// memory_mb=256 the Guard kills the group (memory_exceeded).
func TestHostileSharedMemory(t *testing.T) {
	s := newSandbox(t)
	werr, out, ex := runGuarded(t, s, Spec{Slot: 1, MemoryMB: 256}, `
import mmap, os, time
for i in range(6):
    if os.fork() == 0:
        m = mmap.mmap(-1, 100 << 20, flags=mmap.MAP_SHARED)
        for off in range(0, len(m), 4096):
            m[off] = 1
        time.sleep(30)
        os._exit(0)
for i in range(6):
    os.wait()
print("all children finished")
`)
	if ex == nil || ex.Class != grading.ClassMemoryExceeded {
		t.Fatalf("Guard.Exceeded() = %v (grader: %v, %s), want memory_exceeded", ex, werr, out)
	}
	t.Log(ex.Message)
}

// TestHostileScratchHidden: what a walk by path could not reach. Files in
// directories nested past PATH_MAX (reached by dir_fd, as a chdir would
// break the grader's own open) go past a 16 MiB budget; 70,000 empty
// files hold no blocks but pass the bound on entries. Both are killed
// (sandbox_violation).
func TestHostileScratchHidden(t *testing.T) {
	// Beside the other tests: its graders stay up until the Guard kills
	// them, so no measure can miss them, and its sandbox is its own.
	t.Parallel()
	s := newSandbox(t)
	for _, tt := range []struct{ name, code, want string }{
		{"past PATH_MAX", `
import os, time
d = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
for _ in range(25):
    os.mkdir("d" * 200, dir_fd=d)
    d = os.open("d" * 200, os.O_RDONLY | os.O_DIRECTORY, dir_fd=d)
for i in range(3):
    fd = os.open("f%d" % i, os.O_CREAT | os.O_WRONLY, 0o600, dir_fd=d)
    for _ in range(8):
        os.write(fd, b"x" * (1 << 20))
    os.fsync(fd)
    os.close(fd)
time.sleep(30)
print("not stopped")
`, "disk budget"},
		{"empty files", `
import os, time
for i in range(70000):
    os.close(os.open("e%d" % i, os.O_CREAT | os.O_WRONLY, 0o600))
time.sleep(30)
print("not stopped")
`, "held more than 65536 files, directories and links"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			werr, out, ex := runGuarded(t, s, Spec{Slot: 1, MemoryMB: 1024, ScratchBytes: 16 << 20}, tt.code)
			if ex == nil || ex.Class != grading.ClassSandboxViolation || !strings.Contains(ex.Message, tt.want) {
				t.Fatalf("Guard.Exceeded() = %v (grader: %v, %s), want sandbox_violation: %s", ex, werr, out, tt.want)
			}
			t.Log(ex.Message)
		})
	}
}
