//go:build linux

package confine

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The filter is a raw classic-BPF program rather than one assembled by
// github.com/elastic/go-seccomp-bpf: that library sends calls from a foreign
// architecture to the policy's default action, which for a denylist is
// "allow", while gradegate must kill them.
//
// Offsets into struct seccomp_data (include/uapi/linux/seccomp.h): nr at 0,
// arch at 4, args[6] (u64 each) from 16. gradegate builds for little-endian
// architectures only (amd64, arm64), where an argument's low 32 bits come
// first.
const (
	offNR   = 0
	offArch = 4
	offArg0 = 16
)

// deniedSyscalls answer EPERM. Each would let a grader see or change what
// lies outside its process: kernel keyrings, other processes' memory,
// mounts and namespaces, io_uring (whose operations bypass this filter,
// IORING_OP_SOCKET included), eBPF and perf, kernel modules; setsid and
// setpgid would let it leave the process group gradegate kills on timeout
// (CPython's subprocess calls them only for start_new_session or
// process_group).
var deniedSyscalls = []struct {
	name string
	nr   uint32
}{
	{"io_uring_setup", unix.SYS_IO_URING_SETUP},
	{"io_uring_enter", unix.SYS_IO_URING_ENTER},
	{"io_uring_register", unix.SYS_IO_URING_REGISTER},
	{"ptrace", unix.SYS_PTRACE},
	{"process_vm_readv", unix.SYS_PROCESS_VM_READV},
	{"process_vm_writev", unix.SYS_PROCESS_VM_WRITEV},
	{"pidfd_getfd", unix.SYS_PIDFD_GETFD},
	{"kcmp", unix.SYS_KCMP},
	{"bpf", unix.SYS_BPF},
	{"perf_event_open", unix.SYS_PERF_EVENT_OPEN},
	{"userfaultfd", unix.SYS_USERFAULTFD},
	{"keyctl", unix.SYS_KEYCTL},
	{"add_key", unix.SYS_ADD_KEY},
	{"request_key", unix.SYS_REQUEST_KEY},
	{"unshare", unix.SYS_UNSHARE},
	{"setns", unix.SYS_SETNS},
	{"mount", unix.SYS_MOUNT},
	{"umount2", unix.SYS_UMOUNT2},
	{"pivot_root", unix.SYS_PIVOT_ROOT},
	{"chroot", unix.SYS_CHROOT},
	{"fsopen", unix.SYS_FSOPEN},
	{"fsconfig", unix.SYS_FSCONFIG},
	{"fsmount", unix.SYS_FSMOUNT},
	{"fspick", unix.SYS_FSPICK},
	{"move_mount", unix.SYS_MOVE_MOUNT},
	{"open_tree", unix.SYS_OPEN_TREE},
	{"mount_setattr", unix.SYS_MOUNT_SETATTR},
	{"open_by_handle_at", unix.SYS_OPEN_BY_HANDLE_AT},
	{"kexec_load", unix.SYS_KEXEC_LOAD},
	{"kexec_file_load", unix.SYS_KEXEC_FILE_LOAD},
	{"init_module", unix.SYS_INIT_MODULE},
	{"finit_module", unix.SYS_FINIT_MODULE},
	{"delete_module", unix.SYS_DELETE_MODULE},
	{"reboot", unix.SYS_REBOOT},
	{"swapon", unix.SYS_SWAPON},
	{"swapoff", unix.SYS_SWAPOFF},
	{"acct", unix.SYS_ACCT},
	{"quotactl", unix.SYS_QUOTACTL},
	{"syslog", unix.SYS_SYSLOG},
	{"vhangup", unix.SYS_VHANGUP},
	{"setsid", unix.SYS_SETSID},
	{"setpgid", unix.SYS_SETPGID},
	// System V IPC objects outlive the grader and are reachable by id
	// from any process whose uid the object's mode admits (a 0666 segment
	// is open to every later run), and POSIX message queues live in a
	// kernel file system Landlock does not cover: graders get neither.
	// The multiplexed ipc(2) exists only on 32-bit ABIs, whose calls the
	// filter kills (see auditArch).
	{"shmget", unix.SYS_SHMGET},
	{"shmat", unix.SYS_SHMAT},
	{"shmdt", unix.SYS_SHMDT},
	{"shmctl", unix.SYS_SHMCTL},
	{"semget", unix.SYS_SEMGET},
	{"semop", unix.SYS_SEMOP},
	{"semtimedop", unix.SYS_SEMTIMEDOP},
	{"semctl", unix.SYS_SEMCTL},
	{"msgget", unix.SYS_MSGGET},
	{"msgsnd", unix.SYS_MSGSND},
	{"msgrcv", unix.SYS_MSGRCV},
	{"msgctl", unix.SYS_MSGCTL},
	{"mq_open", unix.SYS_MQ_OPEN},
	{"mq_unlink", unix.SYS_MQ_UNLINK},
	{"mq_timedsend", unix.SYS_MQ_TIMEDSEND},
	{"mq_timedreceive", unix.SYS_MQ_TIMEDRECEIVE},
	{"mq_notify", unix.SYS_MQ_NOTIFY},
	{"mq_getsetattr", unix.SYS_MQ_GETSETATTR},
	// Another process's memory, by pidfd: process_madvise pages it out,
	// process_mrelease frees a dying one's.
	{"process_madvise", unix.SYS_PROCESS_MADVISE},
	{"process_mrelease", unix.SYS_PROCESS_MRELEASE},
	{"set_mempolicy_home_node", unix.SYS_SET_MEMPOLICY_HOME_NODE},
	// File metadata. Landlock does not cover a file's mode, owner, times
	// or extended attributes (only LANDLOCK_ACCESS_FS_TRUNCATE of its
	// setattr family), and a grader that keeps gradegate's uid owns the
	// workspace, $GITHUB_ENV and ~/.aws/credentials: chmod 777 would open
	// them to every local user. A pathname check in a supervisor would
	// race a rename, so the calls are refused everywhere, scratch
	// included (see archDeniedSyscalls for the older entry points).
	{"fchmod", unix.SYS_FCHMOD},
	{"fchmodat", unix.SYS_FCHMODAT},
	{"fchmodat2", unix.SYS_FCHMODAT2},
	{"fchown", unix.SYS_FCHOWN},
	{"fchownat", unix.SYS_FCHOWNAT},
	{"utimensat", unix.SYS_UTIMENSAT},
	{"setxattr", unix.SYS_SETXATTR},
	{"lsetxattr", unix.SYS_LSETXATTR},
	{"fsetxattr", unix.SYS_FSETXATTR},
	{"setxattrat", unix.SYS_SETXATTRAT},
	{"removexattr", unix.SYS_REMOVEXATTR},
	{"lremovexattr", unix.SYS_LREMOVEXATTR},
	{"fremovexattr", unix.SYS_FREMOVEXATTR},
	{"removexattrat", unix.SYS_REMOVEXATTRAT},
	// Watches report the names of files created in any directory the
	// uid may read, Landlock or not (RUNNER_TEMP, other runs' scratch).
	{"inotify_init1", unix.SYS_INOTIFY_INIT1},
	{"inotify_add_watch", unix.SYS_INOTIFY_ADD_WATCH},
	{"fanotify_init", unix.SYS_FANOTIFY_INIT},
	{"fanotify_mark", unix.SYS_FANOTIFY_MARK},
	// A memfd is memory no process's resident size shows once it is
	// written rather than mapped: the Guard could not count it.
	{"memfd_create", unix.SYS_MEMFD_CREATE},
	{"memfd_secret", unix.SYS_MEMFD_SECRET},
}

// namespaceCloneFlags are the clone(2) flags that create namespaces.
const namespaceCloneFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP |
	unix.CLONE_NEWTIME

// ArchDeniedSyscalls returns, by name, the numbers of the architecture's
// own entry points the filter refuses besides the generic ones (x86-64's
// chmod, chown, utimes and the like; none on arm64).
func ArchDeniedSyscalls() map[string]uintptr {
	m := make(map[string]uintptr, len(archDeniedSyscalls))
	for _, d := range archDeniedSyscalls {
		m[d.name] = uintptr(d.nr)
	}
	return m
}

// FilterOptions say what a grader's filter must enforce besides what it
// always does.
type FilterOptions struct {
	// UnixSockets is for a grader under Landlock ABI 9 or later, whose
	// ruleset confines path-named UNIX sockets to its scratch directory
	// and abstract ones to its own domain.
	UnixSockets bool
	// Signals makes the filter hold the signal boundary itself: for a
	// grader below Landlock ABI 6 (no LANDLOCK_SCOPE_SIGNAL) that keeps
	// gradegate's uid, whose signals the kernel would otherwise deliver
	// to gradegate and every process of the runner's user.
	Signals bool
	// Supervised, with Signals, hands kill(pid > 0) aimed at another
	// process than Group to the filter's user-notification listener
	// (see signalSupervisor) instead of refusing it.
	Supervised bool
	// Group is the grader's process group, which is the pid of its first
	// process (the launcher leads its group and execs the grader), and
	// which no grader process can leave (setsid and setpgid are refused).
	Group int
}

// SeccompFilter returns the grader's filter:
//
//   - a foreign architecture or the x32 ABI: kill the process;
//   - socket: EACCES for every family but AF_UNIX (the family is an int, so
//     the argument's low 32 bits are all the kernel reads), and for AF_UNIX
//     too unless UnixSockets;
//   - unless UnixSockets, the calls that reach a socket by address:
//     connect is EACCES, sendto with a destination address is EACCES, and
//     socketpair is allowed for SOCK_STREAM only (a stream socket never
//     sends to an address: unix_stream_sendmsg refuses msg_name, so
//     sendmsg needs no rule);
//   - bind: EACCES. A name bound in the abstract namespace (also on a
//     socketpair socket) is held against every other process on the
//     machine, and Landlock's abstract-socket scope covers connect and
//     send, not bind; BPF cannot read the address to tell a path from an
//     abstract name;
//   - the calls that act on another process by pid (prlimit64,
//     setpriority, sched_setscheduler, sched_setparam, sched_setattr,
//     sched_setaffinity, ioprio_set, migrate_pages, move_pages): allowed
//     on pid 0 (the caller) or Group (the grader's first process; for
//     setpriority and ioprio_set also its process group), EPERM for any
//     other, PRIO_USER and IOPRIO_WHO_USER included. Landlock covers none
//     of them, and a grader that keeps gradegate's uid would otherwise
//     lower gradegate's RLIMIT_AS or make the runner's processes idle;
//   - kill(-1): EPERM;
//   - with Signals: kill on pid 0, Group or -Group only, or, when
//     Supervised, on a pid the supervisor finds in Group; tkill, tgkill, rt_sigqueueinfo and rt_tgsigqueueinfo on
//     Group's threads only; pidfd_send_signal EPERM; fcntl F_SETOWN and
//     F_SETOWN_EX EPERM (SIGIO to an owner of the grader's choosing).
//     pid and tgid are ints: the kernel reads the low 32 bits;
//   - clone with a namespace flag: EPERM (flags are clone's first argument
//     on amd64 and arm64);
//   - clone3: ENOSYS, because its flags sit in a struct in memory that BPF
//     cannot read; glibc then falls back to clone (sysdeps/unix/sysv/linux
//     clone-internal.c), whose flags the filter can inspect;
//   - fallocate: EOPNOTSUPP, so a grader cannot allocate gigabytes of
//     disk between two checks of its scratch budget (see Guard); glibc's
//     posix_fallocate then writes the blocks instead;
//   - deniedSyscalls and archDeniedSyscalls: EPERM;
//   - everything else: allowed.
//
// Without UnixSockets, seccomp cannot tell a socket the grader made from
// /var/run/docker.sock or an abstract socket of another process (the
// address is in memory BPF cannot read), so the grader gets no socket that
// can reach anything: only connected stream pairs.
func SeccompFilter(o FilterOptions) ([]unix.SockFilter, error) {
	if o.Group <= 0 {
		return nil, fmt.Errorf("seccomp: process group %d", o.Group)
	}
	group := uint32(o.Group)
	var p bpfProgram
	p.load(offArch)
	p.jump(unix.BPF_JEQ, auditArch, "", "kill")
	p.load(offNR)
	if x32SyscallBit != 0 {
		p.jump(unix.BPF_JGE, x32SyscallBit, "kill", "")
	}
	p.jump(unix.BPF_JEQ, unix.SYS_SOCKET, "socket", "")
	if o.UnixSockets {
		p.jump(unix.BPF_JEQ, unix.SYS_SOCKETPAIR, "socket", "")
	} else {
		p.jump(unix.BPF_JEQ, unix.SYS_SOCKETPAIR, "socketpair", "")
		p.jump(unix.BPF_JEQ, unix.SYS_CONNECT, "eacces", "")
		p.jump(unix.BPF_JEQ, unix.SYS_SENDTO, "sendto", "")
	}
	p.jump(unix.BPF_JEQ, unix.SYS_BIND, "eacces", "")
	for _, nr := range []uint32{unix.SYS_PRLIMIT64, unix.SYS_SCHED_SETSCHEDULER, unix.SYS_SCHED_SETPARAM,
		unix.SYS_SCHED_SETATTR, unix.SYS_SCHED_SETAFFINITY, unix.SYS_MIGRATE_PAGES, unix.SYS_MOVE_PAGES} {
		p.jump(unix.BPF_JEQ, nr, "ownArg0", "")
	}
	p.jump(unix.BPF_JEQ, unix.SYS_SETPRIORITY, "setpriority", "")
	p.jump(unix.BPF_JEQ, unix.SYS_IOPRIO_SET, "ioprio", "")
	if !o.Signals {
		p.jump(unix.BPF_JEQ, unix.SYS_KILL, "killall", "")
	} else {
		p.jump(unix.BPF_JEQ, unix.SYS_KILL, "killpid", "")
		for _, nr := range []uint32{unix.SYS_TKILL, unix.SYS_TGKILL, unix.SYS_RT_SIGQUEUEINFO, unix.SYS_RT_TGSIGQUEUEINFO} {
			p.jump(unix.BPF_JEQ, nr, "tgid", "")
		}
		p.jump(unix.BPF_JEQ, unix.SYS_PIDFD_SEND_SIGNAL, "eperm", "")
		p.jump(unix.BPF_JEQ, unix.SYS_FCNTL, "fcntl", "")
	}
	p.jump(unix.BPF_JEQ, unix.SYS_CLONE, "clone", "")
	p.jump(unix.BPF_JEQ, unix.SYS_CLONE3, "enosys", "")
	p.jump(unix.BPF_JEQ, unix.SYS_FALLOCATE, "eopnotsupp", "")
	for _, d := range deniedSyscalls {
		p.jump(unix.BPF_JEQ, d.nr, "eperm", "")
	}
	for _, d := range archDeniedSyscalls {
		p.jump(unix.BPF_JEQ, d.nr, "eperm", "")
	}
	p.ret(unix.SECCOMP_RET_ALLOW)

	p.label("socket")
	p.load(offArg0)
	if o.UnixSockets {
		p.jump(unix.BPF_JEQ, unix.AF_UNIX, "allow", "eacces")
	} else {
		p.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES))
		p.label("socketpair")
		p.load(offArg0)
		p.jump(unix.BPF_JEQ, unix.AF_UNIX, "", "eacces")
		// The type without SOCK_NONBLOCK and SOCK_CLOEXEC.
		p.load(offArg0 + 8)
		p.and(0xf)
		p.jump(unix.BPF_JEQ, unix.SOCK_STREAM, "allow", "eacces")
		p.label("sendto")
		// dest_addr, a 64-bit pointer: both halves must be zero.
		p.load(offArg0 + 4*8)
		p.jump(unix.BPF_JEQ, 0, "", "eacces")
		p.load(offArg0 + 4*8 + 4)
		p.jump(unix.BPF_JEQ, 0, "allow", "eacces")
	}
	// which (PRIO_PROCESS 0, PRIO_PGRP 1) then who: the grader's own.
	p.label("setpriority")
	p.load(offArg0)
	p.jump(unix.BPF_JGT, unix.PRIO_PGRP, "eperm", "ownArg1")
	// which (IOPRIO_WHO_PROCESS 1, IOPRIO_WHO_PGRP 2) then who.
	p.label("ioprio")
	p.load(offArg0)
	p.jump(unix.BPF_JEQ, ioprioWhoProcess, "ownArg1", "")
	p.jump(unix.BPF_JEQ, ioprioWhoPgrp, "ownArg1", "eperm")
	p.label("ownArg1")
	p.load(offArg0 + 8)
	p.jump(unix.BPF_JEQ, 0, "allow", "")
	p.jump(unix.BPF_JEQ, group, "allow", "eperm")
	p.label("ownArg0")
	p.load(offArg0)
	p.jump(unix.BPF_JEQ, 0, "allow", "")
	p.jump(unix.BPF_JEQ, group, "allow", "eperm")
	// kill(-1) reaches every process the uid may signal, and returns 0
	// even when each one refused (kernel/signal.c kill_something_info):
	// refused in every setting (killpid below refuses it too).
	if !o.Signals {
		p.label("killall")
		p.load(offArg0)
		p.jump(unix.BPF_JEQ, 0xffffffff, "eperm", "allow")
	}
	if o.Signals {
		p.label("killpid")
		p.load(offArg0)
		p.jump(unix.BPF_JEQ, 0, "allow", "")
		p.jump(unix.BPF_JEQ, group, "allow", "")
		p.jump(unix.BPF_JEQ, -group, "allow", "")
		if o.Supervised {
			// A negative pid (another group, or -1) is refused; a
			// positive one goes to the supervisor.
			p.jump(unix.BPF_JSET, 0x80000000, "eperm", "notify")
		} else {
			p.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
		}
		p.label("tgid")
		p.load(offArg0)
		p.jump(unix.BPF_JEQ, group, "allow", "eperm")
		p.label("fcntl")
		p.load(offArg0 + 8)
		p.jump(unix.BPF_JEQ, unix.F_SETOWN, "eperm", "")
		p.jump(unix.BPF_JEQ, unix.F_SETOWN_EX, "eperm", "allow")
	}
	if o.Signals && o.Supervised {
		p.label("notify")
		p.ret(unix.SECCOMP_RET_USER_NOTIF)
	}
	p.label("clone")
	p.load(offArg0)
	p.jump(unix.BPF_JSET, namespaceCloneFlags, "eperm", "allow")
	p.label("allow")
	p.ret(unix.SECCOMP_RET_ALLOW)
	p.label("eperm")
	p.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	p.label("eacces")
	p.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES))
	p.label("enosys")
	p.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
	p.label("eopnotsupp")
	p.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EOPNOTSUPP))
	p.label("kill")
	p.ret(unix.SECCOMP_RET_KILL_PROCESS)
	return p.assemble()
}

// ioprio_set's which (include/uapi/linux/ioprio.h).
const (
	ioprioWhoProcess = 1
	ioprioWhoPgrp    = 2
)

// installFilterWithListener installs filter on every thread of the
// process and returns its user-notification listener, a close-on-exec
// descriptor (SECCOMP_FILTER_FLAG_NEW_LISTENER, Linux 5.0; with TSYNC it
// needs TSYNC_ESRCH, 5.7, older than any Landlock).
func installFilterWithListener(filter []unix.SockFilter) (int, error) {
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC|unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH|unix.SECCOMP_FILTER_FLAG_NEW_LISTENER,
		uintptr(unsafe.Pointer(&prog)))
	if errno != 0 {
		return -1, fmt.Errorf("seccomp(SECCOMP_FILTER_FLAG_NEW_LISTENER): %w", errno)
	}
	return int(fd), nil
}

// installFilter installs filter on every thread of the process
// (SECCOMP_FILTER_FLAG_TSYNC, Linux 3.17). no_new_privs must already be set.
func installFilter(filter []unix.SockFilter) error {
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog)))
	switch {
	case errno == unix.ENOSYS || errno == unix.EINVAL:
		// No seccomp(2) or no TSYNC: the prctl form filters the
		// calling thread, which is the one that will execve.
		if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0); err != nil {
			return fmt.Errorf("prctl(PR_SET_SECCOMP): %w", err)
		}
	case errno != 0:
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): %w", errno)
	case r != 0:
		// TSYNC reports the id of a thread it could not synchronise.
		return fmt.Errorf("seccomp: thread %d could not be synchronised", r)
	}
	return nil
}

// bpfProgram assembles a classic BPF program with forward jumps to labels.
type bpfProgram struct {
	ins    []unix.SockFilter
	labels map[string]int
	jumps  []bpfJump
}

type bpfJump struct {
	at     int
	jt, jf string // "" means the next instruction
}

func (p *bpfProgram) load(off uint32) {
	p.ins = append(p.ins, unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off})
}

func (p *bpfProgram) and(k uint32) {
	p.ins = append(p.ins, unix.SockFilter{Code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, K: k})
}

func (p *bpfProgram) ret(k uint32) {
	p.ins = append(p.ins, unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k})
}

func (p *bpfProgram) jump(op uint16, k uint32, jt, jf string) {
	p.jumps = append(p.jumps, bpfJump{at: len(p.ins), jt: jt, jf: jf})
	p.ins = append(p.ins, unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, K: k})
}

func (p *bpfProgram) label(name string) {
	if p.labels == nil {
		p.labels = map[string]int{}
	}
	p.labels[name] = len(p.ins)
}

func (p *bpfProgram) assemble() ([]unix.SockFilter, error) {
	offset := func(at int, target string) (uint8, error) {
		if target == "" {
			return 0, nil
		}
		to, ok := p.labels[target]
		if !ok {
			return 0, fmt.Errorf("bpf: no label %q", target)
		}
		d := to - at - 1
		if d < 0 || d > 255 {
			return 0, fmt.Errorf("bpf: jump to %q out of range (%d)", target, d)
		}
		return uint8(d), nil
	}
	var errs []error
	for _, j := range p.jumps {
		jt, err := offset(j.at, j.jt)
		errs = append(errs, err)
		jf, err := offset(j.at, j.jf)
		errs = append(errs, err)
		p.ins[j.at].Jt, p.ins[j.at].Jf = jt, jf
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(p.ins) > unix.BPF_MAXINSNS {
		return nil, fmt.Errorf("bpf: %d instructions, more than %d", len(p.ins), unix.BPF_MAXINSNS)
	}
	return p.ins, nil
}
