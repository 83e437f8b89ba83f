//go:build linux

package confine

import (
	"encoding/binary"
	"fmt"
	"testing"

	"golang.org/x/sys/unix"
)

// runFilter interprets the classic-BPF instructions SeccompFilter emits
// over a struct seccomp_data for call nr with args, and returns the action.
func runFilter(t *testing.T, f []unix.SockFilter, nr uint32, args ...uint64) uint32 {
	t.Helper()
	data := make([]byte, 64)
	binary.LittleEndian.PutUint32(data[offNR:], nr)
	binary.LittleEndian.PutUint32(data[offArch:], auditArch)
	for i, a := range args {
		binary.LittleEndian.PutUint64(data[offArg0+8*i:], a)
	}
	var acc uint32
	for pc := 0; pc < len(f); pc++ {
		in := f[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			acc = binary.LittleEndian.Uint32(data[in.K:])
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			acc &= in.K
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K,
			unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			var cond bool
			switch in.Code &^ (unix.BPF_JMP | unix.BPF_K) {
			case unix.BPF_JEQ:
				cond = acc == in.K
			case unix.BPF_JGT:
				cond = acc > in.K
			case unix.BPF_JGE:
				cond = acc >= in.K
			case unix.BPF_JSET:
				cond = acc&in.K != 0
			}
			if cond {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		default:
			t.Fatalf("instruction %d: code %#x not interpreted", pc, in.Code)
		}
	}
	t.Fatal("the filter fell off its end")
	return 0
}

// TestSeccompProcessBoundary: the filter's decision on each call that acts
// on another process, in each setting (group 1000 is the grader's).
func TestSeccompProcessBoundary(t *testing.T) {
	const group = 1000
	neg := func(pid int32) uint64 { return uint64(uint32(pid)) }
	var (
		allow  = uint32(unix.SECCOMP_RET_ALLOW)
		eperm  = uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
		notify = uint32(unix.SECCOMP_RET_USER_NOTIF)
	)
	type call struct {
		name string
		nr   uint32
		args []uint64
	}
	c := func(name string, nr uint32, args ...uint64) call { return call{name, nr, args} }
	tests := []struct {
		call
		landlockOrUID, bySeccomp, supervised uint32
	}{
		{c("kill(0)", unix.SYS_KILL, 0, 9), allow, allow, allow},
		{c("kill(group)", unix.SYS_KILL, group, 9), allow, allow, allow},
		{c("kill(-group)", unix.SYS_KILL, neg(-group), 9), allow, allow, allow},
		{c("kill(other)", unix.SYS_KILL, 4242, 9), allow, eperm, notify},
		{c("kill(-other)", unix.SYS_KILL, neg(-4242), 9), allow, eperm, eperm},
		{c("kill(-1)", unix.SYS_KILL, neg(-1), 9), eperm, eperm, eperm},
		{c("tgkill(group)", unix.SYS_TGKILL, group, 1001, 6), allow, allow, allow},
		{c("tgkill(other)", unix.SYS_TGKILL, 4242, 4242, 6), allow, eperm, eperm},
		{c("tkill(other)", unix.SYS_TKILL, 4242, 9), allow, eperm, eperm},
		{c("rt_sigqueueinfo(other)", unix.SYS_RT_SIGQUEUEINFO, 4242, 9, 0), allow, eperm, eperm},
		{c("pidfd_send_signal", unix.SYS_PIDFD_SEND_SIGNAL, 3, 9, 0, 0), allow, eperm, eperm},
		{c("fcntl F_SETOWN", unix.SYS_FCNTL, 3, unix.F_SETOWN, 4242), allow, eperm, eperm},
		{c("fcntl F_SETFL", unix.SYS_FCNTL, 3, unix.F_SETFL, 0), allow, allow, allow},
		{c("prlimit64(0)", unix.SYS_PRLIMIT64, 0, unix.RLIMIT_AS, 0, 0), allow, allow, allow},
		{c("prlimit64(group)", unix.SYS_PRLIMIT64, group, unix.RLIMIT_AS, 0, 0), allow, allow, allow},
		{c("prlimit64(other)", unix.SYS_PRLIMIT64, 4242, unix.RLIMIT_AS, 0, 0), eperm, eperm, eperm},
		{c("prlimit64(other, upper bits)", unix.SYS_PRLIMIT64, 1<<32|4242, unix.RLIMIT_AS, 0, 0), eperm, eperm, eperm},
		{c("setpriority(PROCESS, 0)", unix.SYS_SETPRIORITY, unix.PRIO_PROCESS, 0, 19), allow, allow, allow},
		{c("setpriority(PGRP, group)", unix.SYS_SETPRIORITY, unix.PRIO_PGRP, group, 19), allow, allow, allow},
		{c("setpriority(PROCESS, other)", unix.SYS_SETPRIORITY, unix.PRIO_PROCESS, 4242, 19), eperm, eperm, eperm},
		{c("setpriority(USER, 0)", unix.SYS_SETPRIORITY, unix.PRIO_USER, 0, 19), eperm, eperm, eperm},
		{c("ioprio_set(PROCESS, 0)", unix.SYS_IOPRIO_SET, ioprioWhoProcess, 0, 0), allow, allow, allow},
		{c("ioprio_set(USER, 0)", unix.SYS_IOPRIO_SET, 3, 0, 0), eperm, eperm, eperm},
		{c("sched_setaffinity(other)", unix.SYS_SCHED_SETAFFINITY, 4242, 8, 0), eperm, eperm, eperm},
		{c("sched_setscheduler(0)", unix.SYS_SCHED_SETSCHEDULER, 0, 5, 0), allow, allow, allow},
		{c("move_pages(other)", unix.SYS_MOVE_PAGES, 4242, 0, 0, 0, 0, 0), eperm, eperm, eperm},
		{c("fchmodat", unix.SYS_FCHMODAT, 0, 0, 0o777), eperm, eperm, eperm},
		{c("fsetxattr", unix.SYS_FSETXATTR, 3, 0, 0, 0, 0), eperm, eperm, eperm},
		{c("inotify_add_watch", unix.SYS_INOTIFY_ADD_WATCH, 3, 0, 0), eperm, eperm, eperm},
		{c("memfd_create", unix.SYS_MEMFD_CREATE, 0, 0), eperm, eperm, eperm},
		{c("bind", unix.SYS_BIND, 3, 0, 0), uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)), uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)), uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES))},
		{c("getppid", unix.SYS_GETPPID), allow, allow, allow},
	}
	settings := []struct {
		name string
		o    FilterOptions
		want func(int) uint32
	}{
		{"landlock or uid", FilterOptions{Group: group}, func(i int) uint32 { return tests[i].landlockOrUID }},
		{"seccomp", FilterOptions{Signals: true, Group: group}, func(i int) uint32 { return tests[i].bySeccomp }},
		{"seccomp supervised", FilterOptions{Signals: true, Supervised: true, Group: group}, func(i int) uint32 { return tests[i].supervised }},
	}
	for _, st := range settings {
		f, err := SeccompFilter(st.o)
		if err != nil {
			t.Fatal(err)
		}
		for i, tt := range tests {
			t.Run(fmt.Sprintf("%s/%s", st.name, tt.name), func(t *testing.T) {
				if got, want := runFilter(t, f, tt.nr, tt.args...), st.want(i); got != want {
					t.Errorf("action %#x, want %#x", got, want)
				}
			})
		}
	}
}

func TestSeccompFilterAssembles(t *testing.T) {
	for _, o := range []FilterOptions{{Group: 100}, {UnixSockets: true, Group: 100}, {Signals: true, Group: 100}, {UnixSockets: true, Signals: true, Group: 100}} {
		f, err := SeccompFilter(o)
		if err != nil {
			t.Fatal(err)
		}
		if len(f) < len(deniedSyscalls) {
			t.Errorf("filter has %d instructions, fewer than the %d denied syscalls", len(f), len(deniedSyscalls))
		}
		if last := f[len(f)-1]; last.K != unix.SECCOMP_RET_KILL_PROCESS {
			t.Errorf("last instruction returns %#x, want kill", last.K)
		}
	}
}
