//go:build linux

package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/gradegate/gradegate/gate/sandbox"
	"golang.org/x/sys/unix"
)

// maxResponse bounds one response line. The worker bounds output and judge
// itself, so only a broken or hostile process comes near it.
const maxResponse = 32 << 20

// proc is one running worker process and the parent's ends of its pipes.
//
// The pipes are raw non-blocking descriptors served by one poll loop
// (exchange) instead of goroutines: after a response arrives, the loop reads
// fd 1/2 until it is empty, so everything the process wrote before answering
// is attributed to that task, and a worker that stops reading its requests
// cannot block the writer past the timer.
type proc struct {
	cmd     *exec.Cmd
	box     int // the sandbox slot it runs in
	pid     int
	pidfd   int // -1 when the kernel has no pidfd_open
	req     int // write end of the worker's fd 3
	resp    int // read end of the worker's fd 4
	out     int // read end of the worker's fd 1 and 2
	cleanup func() error
	guard   *sandbox.Guard // the group's total memory and scratch budgets; nil: none

	respBuf []byte
	readBuf []byte  // scratch for reads, allocated once per process
	output  bounded // fd 1/2 bytes since the last reset

	mu     sync.Mutex // guards killed and reaped against a concurrent kill
	killed bool       // gradegate sent SIGKILL (timeout, cancel, close)
	reaped bool
	// exitedAlone: the process had exited before gradegate killed it, so its
	// wait status is its own death, not gradegate's SIGKILL.
	exitedAlone bool
	state       *os.ProcessState
}

// exchangeResult says how one exchange ended.
type exchangeResult int

const (
	gotLine   exchangeResult = iota
	died                     // the process exited or closed its response pipe
	timedOut                 // the timer fired; the process group was killed
	cancelled                // ctx ended; the process group was killed
	garbled                  // a response over maxResponse; the process was killed
)

// pipes holds both ends of the three pipes of a worker.
type pipes struct {
	reqR, reqW, respR, respW, outR, outW int
}

func newPipes() (p pipes, err error) {
	var fds [3][2]int
	for i := range fds {
		// O_CLOEXEC from the start: another worker started concurrently must
		// not inherit these, or EOF would never arrive when this one dies.
		if err := unix.Pipe2(fds[i][:], unix.O_CLOEXEC); err != nil {
			for j := range i {
				unix.Close(fds[j][0])
				unix.Close(fds[j][1])
			}
			return pipes{}, fmt.Errorf("pipe: %w", err)
		}
	}
	p = pipes{reqR: fds[0][0], reqW: fds[0][1], respR: fds[1][0], respW: fds[1][1], outR: fds[2][0], outW: fds[2][1]}
	for _, fd := range []int{p.reqW, p.respR, p.outR} {
		if err := unix.SetNonblock(fd, true); err != nil {
			p.closeAll()
			return pipes{}, fmt.Errorf("pipe: %w", err)
		}
	}
	return p, nil
}

func (p pipes) closeAll() {
	for _, fd := range []int{p.reqR, p.reqW, p.respR, p.respW, p.outR, p.outW} {
		unix.Close(fd)
	}
}

// startProc starts cmd with the protocol pipes as fd 3 and 4 and one pipe for
// both fd 1 and 2 (so their interleaving is kept).
func startProc(cmd *exec.Cmd, outputLimit int, cleanup func() error) (*proc, error) {
	p, err := newPipes()
	if err != nil {
		return nil, err
	}
	// os.NewFile on the child's ends only so exec can dup2 them into place;
	// the parent closes them right after Start.
	childFiles := []*os.File{
		os.NewFile(uintptr(p.reqR), "gradegate-requests"),
		os.NewFile(uintptr(p.respW), "gradegate-responses"),
		os.NewFile(uintptr(p.outW), "gradegate-output"),
	}
	cmd.Stdin = nil // /dev/null: a grader calling input() gets EOFError, not a hang
	cmd.Stdout = childFiles[2]
	cmd.Stderr = childFiles[2]
	cmd.ExtraFiles = childFiles[:2]
	startErr := cmd.Start()
	for _, f := range childFiles {
		f.Close()
	}
	if startErr != nil {
		unix.Close(p.reqW)
		unix.Close(p.respR)
		unix.Close(p.outR)
		return nil, fmt.Errorf("starting %s: %w", cmd.Path, startErr)
	}
	pr := &proc{
		cmd:     cmd,
		pid:     cmd.Process.Pid,
		pidfd:   -1,
		req:     p.reqW,
		resp:    p.respR,
		out:     p.outR,
		cleanup: cleanup,
		readBuf: make([]byte, 64<<10),
		output:  bounded{limit: outputLimit},
	}
	// A pidfd turns "the worker exited" into a poll event even when a
	// grandchild the grader forked still holds the response pipe open.
	if fd, err := unix.PidfdOpen(pr.pid, 0); err == nil {
		pr.pidfd = fd
	}
	return pr, nil
}

// kill sends SIGKILL to the worker's whole process group (the grader's own
// children included) unless it was already reaped. Safe from any goroutine.
func (pr *proc) kill() {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.reaped {
		return // the pid may belong to someone else by now
	}
	pr.killed = true
	// The sandbox starts every worker in its own process group.
	_ = syscall.Kill(-pr.pid, syscall.SIGKILL)
	_ = syscall.Kill(pr.pid, syscall.SIGKILL)
}

// dumpStack asks the worker to print the grader's Python stack to fd 2
// before it is killed for a timeout, and gives it a moment to do so. worker.py
// registers faulthandler for SIGUSR1: its handler runs in C, so it works even
// when the grader's Python code never yields (a busy loop, SIGALRM ignored).
func (pr *proc) dumpStack() {
	pr.mu.Lock()
	if !pr.reaped {
		_ = syscall.Kill(-pr.pid, syscall.SIGUSR1)
	}
	pr.mu.Unlock()
	fds := []unix.PollFd{{Fd: int32(pr.out), Events: unix.POLLIN}}
	for end := time.Now().Add(100 * time.Millisecond); time.Now().Before(end); {
		n, err := unix.Poll(fds, int(time.Until(end)/time.Millisecond)+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if n <= 0 {
			return
		}
		pr.drainOutput()
		// The dump is a few hundred bytes written at once; one more short
		// wait catches a second thread's part.
		end = time.Now().Add(10 * time.Millisecond)
	}
}

// wasKilled reports whether gradegate killed the process.
func (pr *proc) wasKilled() bool {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.killed
}

// stop kills and reaps the process, reads what it left in its output pipe,
// closes the parent's descriptors and removes the scratch directory.
// It returns the scratch cleanup error, if any.
func (pr *proc) stop() error {
	// The guard goes first: it kills by process group, which must not
	// outlive the reaping below.
	pr.guard.Stop()
	pr.kill()
	// Reap under the lock, so a concurrent kill never signals a pid that
	// was reaped and may have been reused.
	pr.mu.Lock()
	_ = pr.cmd.Wait() // the exit status is read from ProcessState
	pr.reaped = true
	pr.state = pr.cmd.ProcessState
	pr.mu.Unlock()
	pr.drainOutput()
	pr.awaitGroup()
	if pr.pidfd >= 0 {
		unix.Close(pr.pidfd)
		pr.pidfd = -1
	}
	for _, fd := range []*int{&pr.req, &pr.resp, &pr.out} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
	if pr.cleanup != nil {
		if err := pr.cleanup(); err != nil {
			return fmt.Errorf("removing scratch directory: %w", err)
		}
	}
	return nil
}

// awaitGroup waits, briefly, until no process of the worker's group is left.
// Its children were killed with it, but until the reaper collects them they
// still count against the slot uid's RLIMIT_NPROC, and the next worker of the
// slot (same uid) would inherit a fork bomb's exhausted process budget.
func (pr *proc) awaitGroup() {
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); {
		if err := syscall.Kill(-pr.pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		_ = syscall.Kill(-pr.pid, syscall.SIGKILL)
		time.Sleep(5 * time.Millisecond)
	}
}

// drainOutput reads fd 1/2 until the pipe is empty, without blocking.
func (pr *proc) drainOutput() {
	if pr.out < 0 {
		return
	}
	for {
		n, err := unix.Read(pr.out, pr.readBuf)
		if n > 0 {
			pr.output.write(pr.readBuf[:n])
		}
		if err == unix.EINTR {
			continue
		}
		if n <= 0 || err != nil {
			return
		}
	}
}

// readResponse reads what is available of the response pipe. It reports EOF.
func (pr *proc) readResponse() (eof bool) {
	for {
		n, err := unix.Read(pr.resp, pr.readBuf)
		if n > 0 {
			pr.respBuf = append(pr.respBuf, pr.readBuf[:n]...)
			if len(pr.respBuf) > maxResponse {
				return false
			}
			if n < len(pr.readBuf) && bytes.IndexByte(pr.readBuf[:n], '\n') >= 0 {
				// A short read that ends a line: the response is in, and one
				// more read would only return EAGAIN (or EOF, which the next
				// exchange sees).
				return false
			}
			continue
		}
		if err == unix.EINTR {
			continue
		}
		return n == 0 && err == nil
	}
}

// takeLine removes and returns the first complete response line, if any.
func (pr *proc) takeLine() []byte {
	i := bytes.IndexByte(pr.respBuf, '\n')
	if i < 0 {
		return nil
	}
	line := pr.respBuf[:i:i]
	pr.respBuf = pr.respBuf[i+1:]
	return line
}

// exchange writes one request line and waits for one response line, at most
// timeout. On timedOut, cancelled and garbled the process group has been
// killed; on died the process is gone or going. The caller then calls stop.
func (pr *proc) exchange(ctx context.Context, msg []byte, timeout time.Duration) ([]byte, exchangeResult) {
	deadline := time.Now().Add(timeout)
	// Cancelling kills the process, which wakes the poll below through the
	// pidfd or the response pipe's EOF; no periodic wake-up is needed.
	stopAfter := context.AfterFunc(ctx, pr.kill)
	defer stopAfter()

	pending := msg
	writeDead := false
	write := func() {
		n, err := unix.Write(pr.req, pending)
		switch {
		case n > 0:
			pending = pending[n:]
		case err == unix.EAGAIN || err == unix.EINTR:
		default:
			// EPIPE: the worker is gone; its exit shows up on the pidfd or
			// as EOF on the response pipe.
			writeDead = true
		}
	}
	// The request pipe is empty between cases, so the first write almost
	// always takes the whole request without a poll for POLLOUT.
	write()
	for {
		if line := pr.takeLine(); line != nil {
			pr.drainOutput()
			return line, gotLine
		}
		if len(pr.respBuf) > maxResponse {
			pr.kill()
			return nil, garbled
		}
		if ctx.Err() != nil {
			pr.kill()
			return nil, cancelled
		}
		remaining := time.Until(deadline)
		if remaining <= 0 {
			pr.dumpStack()
			pr.kill()
			pr.drainOutput()
			return nil, timedOut
		}
		fds := []unix.PollFd{
			{Fd: int32(pr.resp), Events: unix.POLLIN},
			{Fd: int32(pr.out), Events: unix.POLLIN},
		}
		if len(pending) > 0 && !writeDead {
			fds = append(fds, unix.PollFd{Fd: int32(pr.req), Events: unix.POLLOUT})
		}
		pidIndex := -1
		if pr.pidfd >= 0 {
			pidIndex = len(fds)
			fds = append(fds, unix.PollFd{Fd: int32(pr.pidfd), Events: unix.POLLIN})
		}
		// Round up so a sub-millisecond remainder does not spin.
		ms := int((remaining + time.Millisecond - 1) / time.Millisecond)
		if _, err := unix.Poll(fds, ms); err != nil && !errors.Is(err, unix.EINTR) {
			pr.kill()
			return nil, died
		}
		if fds[1].Revents != 0 {
			pr.drainOutput()
		}
		if len(fds) > 2 && fds[2].Fd == int32(pr.req) && fds[2].Revents != 0 {
			write()
		}
		eof := false
		if fds[0].Revents != 0 {
			eof = pr.readResponse()
		}
		exited := pidIndex >= 0 && fds[pidIndex].Revents != 0
		if eof || exited {
			// The process is gone (or closed fd 4): take what it managed to
			// write, then report it dead unless a full line is there.
			if !eof {
				pr.readResponse()
			}
			if line := pr.takeLine(); line != nil {
				pr.drainOutput()
				return line, gotLine
			}
			if ctx.Err() != nil {
				return nil, cancelled
			}
			// EOF comes a moment before the exit is visible; wait for it so
			// the exit status is the process's own.
			pr.exitedAlone = exited || pr.waitExit(200*time.Millisecond)
			pr.kill()
			pr.drainOutput()
			return nil, died
		}
	}
}

// waitExit reports whether the process exits within d, without reaping it.
func (pr *proc) waitExit(d time.Duration) bool {
	if pr.pidfd >= 0 {
		fds := []unix.PollFd{{Fd: int32(pr.pidfd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, int(d/time.Millisecond))
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return n > 0
		}
	}
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pr.pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		if err == nil && info.Signo != 0 {
			return true
		}
	}
	return false
}

// bounded keeps the first limit bytes written to it and counts the rest.
type bounded struct {
	limit int
	buf   []byte
	cut   int
}

func (b *bounded) write(p []byte) {
	room := b.limit - len(b.buf)
	if room > len(p) {
		room = len(p)
	}
	if room > 0 {
		b.buf = append(b.buf, p[:room]...)
	}
	b.cut += len(p) - max(room, 0)
}

func (b *bounded) reset() {
	b.buf = b.buf[:0]
	b.cut = 0
}
