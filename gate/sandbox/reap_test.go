//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReapOrphans: the child a group leader leaves behind becomes this
// process's, and once it exits it is collected, not left a zombie.
func TestReapOrphans(t *testing.T) {
	ReapOrphans()
	// The leader prints its child's pid and exits; the child sleeps on in
	// the leader's process group.
	cmd := exec.Command("/bin/sh", "-c", "sleep 60 </dev/null >/dev/null 2>&1 & echo $!")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("child pid %q: %v", out, err)
	}
	t.Cleanup(func() { _ = syscall.Kill(orphan, syscall.SIGKILL) })
	if _, ppid, _, ok := procStat(orphan); !ok || ppid != os.Getpid() {
		t.Fatalf("the orphan's parent is %d (found %v), want this process %d", ppid, ok, os.Getpid())
	}
	if err := syscall.Kill(orphan, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Nothing else may wait for it: only this process's reaper can make it
	// go. The bound is far beyond what reaping takes.
	for end := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		state, _, _, ok := procStat(orphan)
		if !ok {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("the orphan is still there in state %s", state)
		}
	}
}

// TestReapOrphansLeavesChildren: a direct child's exit status stays for
// os/exec to read, whether it leads its own group or shares the test's.
func TestReapOrphansLeavesChildren(t *testing.T) {
	ReapOrphans()
	for _, ownGroup := range []bool{false, true} {
		cmd := exec.Command("/bin/sh", "-c", "exit 7")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: ownGroup}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Let it exit and the reaper look at it, several times over.
		for i := 0; i < 5; i++ {
			reapOrphans(os.Getpid(), syscall.Getpgrp())
			time.Sleep(20 * time.Millisecond)
		}
		err := cmd.Wait()
		if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 7 {
			t.Errorf("own group %v: Wait = %v, state %v; want exit status 7", ownGroup, err, cmd.ProcessState)
		}
	}
}
