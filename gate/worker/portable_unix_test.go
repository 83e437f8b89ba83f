//go:build unix

package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/gradegate/gradegate/gate/grading"
)

// TestPortableKillsGroup: a process the grader started and left running
// dies with its worker (the worker's process group is killed), both when
// the worker is replaced for the leftover and when a case times out.
func TestPortableKillsGroup(t *testing.T) {
	t.Parallel()
	src := `import os, subprocess
def grade(sample, item):
    child = subprocess.Popen(["sleep", "300"])
    os.write(1, b"%d\n" % child.pid)
    if sample.get("hang"):
        while True: pass
    return 1.0
`
	for _, tt := range []struct {
		name  string
		hang  bool
		class grading.Class
	}{{"leftover", false, grading.ClassOK}, {"timeout", true, grading.ClassTimeout}} {
		t.Run(tt.name, func(t *testing.T) {
			p := newPortablePool(t, src, nil)
			got, err := p.Grade(context.Background(), []grading.Task{portableTask("a", map[string]any{"hang": tt.hang})})
			if err != nil {
				t.Fatal(err)
			}
			if got[0].Class != tt.class {
				t.Fatalf("Class = %s (%+v), want %s", got[0].Class, got[0].Error, tt.class)
			}
			pid, err := strconv.Atoi(firstLine(got[0].Output))
			if err != nil {
				t.Fatalf("no child pid in the output %q", got[0].Output)
			}
			// The worker was replaced (leftover) or killed (timeout) before
			// Grade returned; its group went with it.
			if !dead(pid) {
				t.Errorf("the grader's child %d is still running after its worker was stopped", pid)
			}
		})
	}
}

// dead reports whether pid has ended: gone, or a zombie waiting for init to
// reap it (a SIGKILL is delivered, not awaited, so it gets a few seconds).
func dead(pid int) bool {
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return true
		}
		if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			if i := bytes.LastIndexByte(stat, ')'); i > 0 && len(stat) > i+2 && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
				return true
			}
		}
	}
	return false
}

func firstLine(s string) string {
	for i := range len(s) {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}
