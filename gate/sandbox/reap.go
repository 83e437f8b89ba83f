//go:build linux

package sandbox

import (
	"bytes"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ReapOrphans makes the calling process the reaper of the orphans its
// descendants leave (PR_SET_CHILD_SUBREAPER) and collects them as soon as
// they exit, for the life of the process.
//
// Why: a worker's process group outlives its leader for as long as the
// leader's killed children stay unreaped zombies, and gradegate waits, up
// to a bound, for the group to empty before it reuses the slot's uid; a
// zombie also still counts against the uid's process limit. Orphans go to
// PID 1, and an init that reaps only now and then (some VMs' init reaps
// about once a second) turns every stopped worker with a child, the
// isolation: case zygote among them, into a second of waiting. In the
// Action's container gradegate is PID 1 itself, and without this nothing
// would reap them at all.
//
// Only orphans are reaped: exited processes whose parent is now this process
// and that neither lead their own process group nor share this process's.
// Every process gradegate starts directly does one or the other (the
// sandbox starts each worker as a group leader; other commands inherit
// gradegate's group), so no exit status that os/exec waits for is taken.
func ReapOrphans() {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return // the kernel's init reaps them, more slowly
	}
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	go func() {
		// SIGCHLD wakes the loop for each exit (a signal that arrives
		// during a pass is kept in the channel, so the next pass sees its
		// zombie); the tick is a slow backstop. A pass lists /proc, so
		// it runs only when something exited.
		tick := time.NewTicker(2 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-chld:
			case <-tick.C:
			}
			reapOrphans(os.Getpid(), syscall.Getpgrp())
		}
	}()
}

// reapOrphans collects every zombie orphan of self (see ReapOrphans). It
// looks only at self's children (ownChildren), not at every process on the
// machine: a pass then reads a file per thread and one per child, where a
// listing of /proc read one per process, a few milliseconds of a small
// run's CPU on a quiet machine and more on a busy runner.
func reapOrphans(self, group int) {
	for _, pid := range ownChildren() {
		state, ppid, pgid, ok := procStat(pid)
		if !ok || state != "Z" || ppid != self || pgid == pid || pgid == group {
			continue
		}
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	}
}

// procStat reads a process's state, parent and process group from
// /proc/PID/stat, whose second field (the command name in parentheses) may
// hold spaces and parentheses itself.
func procStat(pid int) (state string, ppid, pgid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 {
		return "", 0, 0, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgid, err2 := strconv.Atoi(string(f[2]))
	return string(f[0]), ppid, pgid, err1 == nil && err2 == nil
}
