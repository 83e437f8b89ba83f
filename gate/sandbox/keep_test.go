//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// keeperTestEnv makes the test binary run keeperHelper under Keep: the
// value says what the kept process does.
const keeperTestEnv = "GRADEGATE_SANDBOX_TEST_KEEPER"

// keeperHelper is the kept command of TestKeeper. Each way first leaves a
// double-forked sleeper in a process group of its own (as a grader's
// grandchild is, its parent-death signal cleared by fork) and prints its
// pid, then ends: "exit1" through exit, "sigkill" by SIGKILL, "oom" with
// the Go runtime's "fatal error: runtime: out of memory" (exit 2), as a
// lowered RLIMIT_AS once caused.
func keeperHelper(do string, exit func(int)) {
	out, err := exec.Command("/bin/sh", "-c", "sleep 300 </dev/null >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		exit(1)
	}
	fmt.Print(string(out))
	os.Stdout.Sync()
	switch do {
	case "keeper-killed":
		// As gradegate does on SIGTERM: end what its graders started.
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM)
		fmt.Println("waiting")
		os.Stdout.Sync()
		<-sig
		if pid, err := strconv.Atoi(strings.TrimSpace(string(out))); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		exit(3)
	case "stuck":
		// A command that takes no notice of SIGTERM (a loop that never
		// looks at its context).
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("waiting")
		os.Stdout.Sync()
		for {
			time.Sleep(time.Hour)
		}
	case "exit1":
		exit(1)
	case "sigkill":
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Minute)
	case "oom":
		_ = syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: 64 << 20, Max: 64 << 20})
		var keep [][]byte
		for i := 0; i < 1<<12; i++ {
			keep = append(keep, make([]byte, 1<<20))
		}
		fmt.Println(len(keep))
	}
	exit(0)
}

// TestKeeper: however the kept command ends, its orphaned grandchild dies
// with it and the exit code is the one the command chose, or 3.
func TestKeeper(t *testing.T) {
	for _, tt := range []struct {
		do     string
		code   int
		stderr string
	}{
		{"exit1", 1, ""},
		{"sigkill", ExitStopped, "killed by signal SIGKILL"},
		{"oom", ExitStopped, "Go runtime failure"},
	} {
		t.Run(tt.do, func(t *testing.T) {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), keeperTestEnv+"="+tt.do)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, _ := bufio.NewReader(stdout).ReadString('\n')
			sleeper, perr := strconv.Atoi(strings.TrimSpace(line))
			err = cmd.Wait()
			if perr != nil {
				t.Fatalf("no sleeper pid (%q): %v: %s", line, err, stderr.String())
			}
			defer syscall.Kill(sleeper, syscall.SIGKILL)
			var ee *exec.ExitError
			code := 0
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			}
			if code != tt.code || !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("exit %d (%v), stderr %q; want %d and %q", code, err, stderr.String(), tt.code, tt.stderr)
			}
			if err := syscall.Kill(sleeper, 0); !errors.Is(err, syscall.ESRCH) {
				st, _, _, _ := procStat(sleeper)
				t.Errorf("the orphaned sleeper %d outlived gradegate (state %q)", sleeper, st)
			}
		})
	}
}

// startWaiting starts the test binary as a keeper over keeperHelper's way
// do, one that prints "waiting" once its sleeper is up, and returns the
// keeper, the sleeper's pid and the keeper's stderr.
func startWaiting(t *testing.T, do string) (*exec.Cmd, int, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), keeperTestEnv+"="+do)
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	line, _ := r.ReadString('\n')
	sleeper, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("no sleeper pid (%q): %s", line, stderr.String())
	}
	if l, _ := r.ReadString('\n'); strings.TrimSpace(l) != "waiting" {
		_ = cmd.Process.Kill()
		_ = syscall.Kill(sleeper, syscall.SIGKILL)
		t.Fatalf("kept command said %q, want waiting", l)
	}
	return cmd, sleeper, stderr
}

// TestKeeperKilled: when the keeper itself is killed (the runner's SIGKILL
// reaches the first gradegate process), the command below it is told to
// stop with SIGTERM, so it can end its graders' processes, rather than
// dying at once with them still running.
func TestKeeperKilled(t *testing.T) {
	cmd, sleeper, _ := startWaiting(t, "keeper-killed")
	defer syscall.Kill(sleeper, syscall.SIGKILL)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err := syscall.Kill(sleeper, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		if st, _, _, _ := procStat(sleeper); st == "Z" {
			return
		}
	}
	t.Errorf("the sleeper %d outlived the killed keeper: the kept command was not told to stop", sleeper)
}

// TestKeeperStopsStuckCommand: a command that takes no notice of SIGTERM is
// killed stopGrace after the keeper passed the signal on, with its orphaned
// grandchild, and the exit is 3 with the reason on stderr.
func TestKeeperStopsStuckCommand(t *testing.T) {
	t.Parallel()
	cmd, sleeper, stderr := startWaiting(t, "stuck")
	defer syscall.Kill(sleeper, syscall.SIGKILL)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitStopped || !strings.Contains(stderr.String(), "did not stop within 10s of the signal and was killed") {
		t.Errorf("keeper: %v, stderr %q; want exit %d and the reason", err, stderr.String(), ExitStopped)
	}
	if err := syscall.Kill(sleeper, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the orphaned sleeper %d outlived gradegate", sleeper)
	}
}
