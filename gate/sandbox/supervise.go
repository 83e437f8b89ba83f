//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A signalSupervisor lets a grader signal its own children by pid where
// nothing else can tell them from other processes of gradegate's uid:
// below Landlock ABI 6 (no LANDLOCK_SCOPE_SIGNAL) for a grader that keeps
// gradegate's uid. There the seccomp filter hands every kill(pid > 0) aimed
// at another process than the grader's first to a user-notification
// listener (seccomp_unotify(2)); the launcher passes the listener to the
// supervisor over a UNIX socket before it execs the grader, and the
// supervisor answers each call: it pins the target with a pidfd, checks
// that the target is alive and in the grader's process group (which no
// grader process can leave: setsid and setpgid are refused), and sends the
// signal itself through the pidfd, so a pid reused between the check and
// the signal cannot be hit. Any other target is EPERM.
//
// The signal then comes from gradegate (its siginfo names gradegate's pid,
// not the grader's); CPython's subprocess and multiprocessing do not look.
type signalSupervisor struct {
	dir  string // private directory holding the socket
	path string
	ln   *net.UnixListener
	wg   sync.WaitGroup
}

// startSupervisor listens for launchers' listeners.
func startSupervisor(root string) (*signalSupervisor, error) {
	dir, err := os.MkdirTemp(root, "gradegate-supervisor-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: signal supervisor: %w", err)
	}
	path := filepath.Join(dir, "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("sandbox: signal supervisor: %w", err)
	}
	sv := &signalSupervisor{dir: dir, path: path, ln: ln}
	sv.wg.Add(1)
	go sv.accept()
	return sv, nil
}

// close stops accepting; graders already supervised keep their supervisor
// until their last process ends.
func (sv *signalSupervisor) close() {
	if sv == nil {
		return
	}
	sv.ln.Close()
	sv.wg.Wait()
	os.RemoveAll(sv.dir)
}

func (sv *signalSupervisor) accept() {
	defer sv.wg.Done()
	for {
		c, err := sv.ln.AcceptUnix()
		if err != nil {
			return
		}
		go sv.receive(c)
	}
}

// receive reads one launcher's listener and its process group, the
// launcher's pid as the kernel reports it (SO_PEERCRED), and supervises.
func (sv *signalSupervisor) receive(c *net.UnixConn) {
	defer c.Close()
	raw, err := c.SyscallConn()
	if err != nil {
		return
	}
	var cred *unix.Ucred
	_ = raw.Control(func(fd uintptr) { cred, _ = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) })
	if cred == nil || int(cred.Uid) != os.Getuid() {
		return
	}
	oob := make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := c.ReadMsgUnix(make([]byte, 1), oob)
	if err != nil {
		return
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return
	}
	sv.supervise(fds[0], int(cred.Pid))
}

// seccompNotif is struct seccomp_notif; seccompNotifResp struct
// seccomp_notif_resp (include/uapi/linux/seccomp.h).
type seccompNotif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

type seccompNotifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// supervise answers listener's notifications until every process of the
// grader has exited (the listener then reports POLLHUP).
func (sv *signalSupervisor) supervise(listener, group int) {
	defer unix.Close(listener)
	fds := []unix.PollFd{{Fd: int32(listener), Events: unix.POLLIN}}
	for {
		fds[0].Revents = 0
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		if fds[0].Revents&unix.POLLIN == 0 {
			return // POLLHUP: no process left under the filter
		}
		var req seccompNotif
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&req))); e != 0 {
			if e == unix.EINTR || e == unix.ENOENT {
				continue // the caller was interrupted or died
			}
			return
		}
		resp := seccompNotifResp{id: req.id}
		if errno := sv.kill(req, group); errno != 0 {
			resp.val, resp.error = -1, -int32(errno)
		}
		_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
	}
}

// kill performs a notified kill(pid, sig) if pid is alive in group.
func (sv *signalSupervisor) kill(req seccompNotif, group int) unix.Errno {
	if req.nr != unix.SYS_KILL {
		return unix.EPERM
	}
	target, sig := int(int32(req.args[0])), int(int32(req.args[1]))
	if target <= 0 {
		return unix.EPERM
	}
	pidfd, err := unix.PidfdOpen(target, 0)
	if err != nil {
		return unix.ESRCH
	}
	defer unix.Close(pidfd)
	// The pidfd pins the process; while it has not exited its pid cannot
	// be reused, so a group read before the liveness check is its own.
	g := procGroup(strconv.Itoa(target), make([]byte, 512))
	alive := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	if n, _ := unix.Poll(alive, 0); n != 0 {
		return unix.ESRCH
	}
	if g != group {
		return unix.EPERM
	}
	if err := unix.PidfdSendSignal(pidfd, unix.Signal(sig), nil, 0); err != nil {
		var errno unix.Errno
		if errors.As(err, &errno) {
			return errno
		}
		return unix.EPERM
	}
	return 0
}
