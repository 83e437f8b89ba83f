//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// keptEnv, in the environment of a gradegate process, names the descriptor
// on which it reports its exit code to the keeper that started it.
const keptEnv = "GRADEGATE_KEEPER_FD"

// ExitStopped is the exit code of a gradegate that stopped without
// reporting one: a Go runtime failure (which exits 2), a signal, or an
// exit the command did not choose. It is the "tool failed" code.
const ExitStopped = 3

// keeperDrain bounds how long a keeper goes on killing what its gradegate
// left behind.
const keeperDrain = 10 * time.Second

// stopGrace is how long a keeper waits, after passing a signal on, for its
// gradegate to stop before it kills it: a command stuck where it does not
// look at its context (a loop on hostile input) still ends, as a tool
// failure.
const stopGrace = 10 * time.Second

// Keep puts a small keeper process between the caller and the command. Call
// it from main right after Init, with main's arguments; it returns the
// function the command must exit through.
//
// The first call in a process tree becomes the keeper: it makes itself
// the reaper of orphans (PR_SET_CHILD_SUBREAPER), runs the same command
// again as its child and never returns. When that child exits, for
// whatever reason, SIGKILL included, the keeper kills every process left
// below it, each grader's process group first: a grader's double-forked
// grandchild, whose parent-death signal fork cleared, is reparented to the
// keeper and dies there. It then exits with the code the child reported
// through the returned function, or with ExitStopped and a line on stderr
// when the child reported none, so that a Go runtime failure ("fatal
// error: runtime: out of memory", exit 2) never reads as the exit code of
// unusable input. SIGINT, SIGTERM, SIGHUP and SIGQUIT are passed on to the
// child; one that has not stopped stopGrace after the first is killed.
//
// In the child, Keep returns at once. Where a keeper cannot be set up
// (no subreaper, the binary cannot be run again) Keep returns os.Exit and
// the command runs without one.
func Keep(args []string, stderr io.Writer) (exit func(code int)) {
	if v, ok := os.LookupEnv(keptEnv); ok {
		os.Unsetenv(keptEnv)
		fd, err := strconv.Atoi(v)
		if err != nil || fd < 3 {
			return os.Exit
		}
		unix.CloseOnExec(fd)
		report := os.NewFile(uintptr(fd), "keeper")
		return func(code int) {
			_, _ = report.Write([]byte{byte(code)})
			os.Exit(code)
		}
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return os.Exit
	}
	code, started, err := keep(args, stderr)
	if !started {
		return os.Exit
	}
	if err != nil {
		fmt.Fprintf(stderr, "gradegate: %v\n", err)
	}
	os.Exit(code)
	return nil
}

// KeepFirst is Keep for a package's initialisation, before the rest of
// the program initialises: in the first process of a tree it becomes the
// keeper, as Keep does, and never returns; in the keeper's child it does
// nothing, and main's Keep returns the function to exit through. Where no
// keeper could be set up it returns, and main's Keep tries once more and
// fails the same way.
func KeepFirst(args []string, stderr io.Writer) {
	if _, ok := os.LookupEnv(keptEnv); ok {
		return
	}
	Keep(args, stderr)
}

// keep runs the command as a child and returns the exit code to end with;
// started is false when no child could be started.
func keep(args []string, stderr io.Writer) (code int, started bool, err error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, false, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return 0, false, err
	}
	cmd := exec.Command(exe, args[1:]...)
	cmd.Args[0] = args[0]
	cmd.Env = append(os.Environ(), keptEnv+"=3")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{w}
	// When the keeper itself is killed (SIGKILL from the runner), the
	// command is told to stop as on Ctrl-C: it then ends its graders'
	// process groups, where every process a grader started stays (setsid
	// and setpgid are refused), rather than dying with them still running.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	if err := cmd.Start(); err != nil {
		signal.Stop(sigs)
		r.Close()
		w.Close()
		return 0, false, err
	}
	w.Close()
	reported := make(chan int, 1)
	go func() {
		var b [1]byte
		if n, _ := r.Read(b[:]); n == 1 {
			reported <- int(b[0])
		}
		close(reported)
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var werr error
	var hardStop <-chan time.Time
	stuck := false
	for done := false; !done; {
		select {
		case s := <-sigs:
			_ = cmd.Process.Signal(s)
			if hardStop == nil {
				hardStop = time.After(stopGrace)
			}
		case <-hardStop:
			stuck = true
			_ = cmd.Process.Kill()
		case werr = <-waited:
			done = true
		}
	}
	signal.Stop(sigs)
	left := killLeftovers(keeperDrain)
	code, ok := <-reported
	if stuck && !ok {
		return ExitStopped, true, fmt.Errorf("did not stop within %v of the signal and was killed; no results were written past that point", stopGrace)
	}
	switch {
	case ok && left > 0:
		fmt.Fprintf(stderr, "gradegate: killed %d process(es) left running after the run\n", left)
		return code, true, nil
	case ok:
		return code, true, nil
	}
	return ExitStopped, true, fmt.Errorf("stopped without finishing (%s); no results were written past that point", describeExit(werr))
}

// describeExit says how a child ended.
func describeExit(err error) string {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		if err == nil {
			return "exit status 0 without reporting it"
		}
		return err.Error()
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	switch {
	case ok && ws.Signaled():
		return "killed by signal " + unix.SignalName(ws.Signal())
	case ok && ws.ExitStatus() == 2:
		return "exit status 2: a Go runtime failure, see the lines above"
	}
	return ee.String()
}

// killLeftovers kills every remaining child of this process (the keeper,
// to which orphans are reparented) and reaps them, until it has none or
// limit has passed. A child's process group is killed with it unless it
// is this process's own group. It returns how many children it killed.
func killLeftovers(limit time.Duration) int {
	own := syscall.Getpgrp()
	seen := map[int]bool{}
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		for _, pid := range ownChildren() {
			if g, err := syscall.Getpgid(pid); err == nil && g != own && g > 1 {
				_ = syscall.Kill(-g, syscall.SIGKILL)
			}
			_ = syscall.Kill(pid, syscall.SIGKILL)
			seen[pid] = true
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if errors.Is(err, syscall.ECHILD) {
				return len(seen)
			}
			if pid <= 0 {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return len(seen)
}

// ownChildren lists the children of every thread of this process
// (/proc/self/task/<tid>/children: a reparented orphan is listed under
// whichever thread the kernel picked).
func ownChildren() []int {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range bytes.Fields(b) {
			if pid, err := strconv.Atoi(string(f)); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}
