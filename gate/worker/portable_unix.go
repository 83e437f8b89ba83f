//go:build unix

package worker

import (
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// startPortableGroup makes the worker lead its own process group, so a kill
// reaches every process the grader started.
func startPortableGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// killPortableGroup sends SIGKILL to the worker's process group and to the
// worker itself.
func killPortableGroup(p *os.Process) {
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	_ = p.Kill()
}

// signalPortableStack sends SIGUSR1 to the worker's process group: worker.py
// has faulthandler print the grader's stack on it. It reports whether the
// signal went out.
func signalPortableStack(p *os.Process) bool {
	return syscall.Kill(-p.Pid, syscall.SIGUSR1) == nil
}

// portableSignalName names a signal the way crash messages do ("SIGSEGV").
func portableSignalName(s syscall.Signal) string {
	if name := unix.SignalName(s); name != "" {
		return name
	}
	return s.String()
}
