//go:build linux

package sandbox

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
}

// namespaceCloneFlags are the clone(2) flags that create namespaces.
const namespaceCloneFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP |
	unix.CLONE_NEWTIME

// seccompFilter returns the grader's filter:
//
//   - a foreign architecture or the x32 ABI: kill the process;
//   - socket: EACCES for every family but AF_UNIX (the family is an int, so
//     the argument's low 32 bits are all the kernel reads), and for AF_UNIX
//     too unless unixSockets;
//   - unless unixSockets, the calls that reach a socket by address:
//     connect is EACCES, sendto with a destination address is EACCES, and
//     socketpair is allowed for SOCK_STREAM only (a stream socket never
//     sends to an address: unix_stream_sendmsg refuses msg_name, so
//     sendmsg needs no rule);
//   - clone with a namespace flag: EPERM (flags are clone's first argument
//     on amd64 and arm64);
//   - clone3: ENOSYS, because its flags sit in a struct in memory that BPF
//     cannot read; glibc then falls back to clone (sysdeps/unix/sysv/linux
//     clone-internal.c), whose flags the filter can inspect;
//   - fallocate: EOPNOTSUPP, so a grader cannot allocate gigabytes of
//     disk between two checks of its scratch budget (see Guard); glibc's
//     posix_fallocate then writes the blocks instead;
//   - deniedSyscalls: EPERM;
//   - everything else: allowed.
//
// unixSockets is for a grader under Landlock ABI 9 or later, whose ruleset
// confines path-named UNIX sockets to its scratch directory and abstract
// ones to its own domain. Without that, seccomp cannot tell a socket the
// grader made from /var/run/docker.sock or an abstract socket of another
// process (the address is in memory BPF cannot read), so the grader gets
// no socket that can reach anything: only connected stream pairs.
func seccompFilter(unixSockets bool) ([]unix.SockFilter, error) {
	var p bpfProgram
	p.load(offArch)
	p.jump(unix.BPF_JEQ, auditArch, "", "kill")
	p.load(offNR)
	if x32SyscallBit != 0 {
		p.jump(unix.BPF_JGE, x32SyscallBit, "kill", "")
	}
	p.jump(unix.BPF_JEQ, unix.SYS_SOCKET, "socket", "")
	if unixSockets {
		p.jump(unix.BPF_JEQ, unix.SYS_SOCKETPAIR, "socket", "")
	} else {
		p.jump(unix.BPF_JEQ, unix.SYS_SOCKETPAIR, "socketpair", "")
		p.jump(unix.BPF_JEQ, unix.SYS_CONNECT, "eacces", "")
		p.jump(unix.BPF_JEQ, unix.SYS_SENDTO, "sendto", "")
	}
	p.jump(unix.BPF_JEQ, unix.SYS_CLONE, "clone", "")
	p.jump(unix.BPF_JEQ, unix.SYS_CLONE3, "enosys", "")
	p.jump(unix.BPF_JEQ, unix.SYS_FALLOCATE, "eopnotsupp", "")
	for _, d := range deniedSyscalls {
		p.jump(unix.BPF_JEQ, d.nr, "eperm", "")
	}
	p.ret(unix.SECCOMP_RET_ALLOW)

	p.label("socket")
	p.load(offArg0)
	if unixSockets {
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
