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

// maxInitResponse bounds the answer to the init request (ready, or a load
// error with its output).
const maxInitResponse = 1 << 20

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
	calls   *callServer    // serves the grader's model calls; nil: none
	// takesCtx: the loaded grader takes ctx, so its requests may call.
	takesCtx bool

	respBuf []byte
	readBuf []byte // scratch for reads, allocated once per process
	// marks is fd 1/2 split at the worker's end markers; output is the
	// fd 1/2 output of the request whose outcome is being built
	// (takeOutput).
	marks  markedStream
	output bounded
	peak   int // the most response bytes buffered at once
	bigOut bool
	// lastRead is when a read last took response bytes (see gather).
	lastRead time.Time

	// forked: the process forked a variant child (Pool.Fork) and from then
	// on serves only forks. lender is the parent pool's slot it was
	// borrowed from while a child runs.
	forked    bool
	pristine  bool // started without a grader, to fork variants from
	lender    *slot
	childGone bool // the child exits by itself (after a load error)
	// childEnded: the zygote reported that its child ended in the middle
	// of its requests; resync: the requests sent to it may still be in the
	// pipe, so the next fork request starts on a line of its own.
	childEnded bool
	resync     bool

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
	alive exchangeResult = iota // pump: nothing ended
	gotLine
	died      // the process exited or closed its response pipe
	timedOut  // the timer fired; the process group was killed
	cancelled // ctx ended; the process group was killed
	garbled   // a response over its limit or out of protocol
)

// pipes holds both ends of the three pipes of a worker.
type pipes struct {
	reqR, reqW, respR, respW, outR, outW int
	// bigOut: the output pipe holds outPipeSize bytes, so the poll loop
	// need not wake for every end marker (see pump).
	bigOut bool
}

// outPipeSize is the capacity asked for the output pipe and the request
// pipe: a window of requests goes in with one write, and a case's end
// markers and output wait in the pipe until its result comes.
const outPipeSize = 1 << 20

// outDrainEvery bounds how long output may wait in a big output pipe while
// no result comes (a slow case printing a lot).
const outDrainEvery = 10 * time.Millisecond

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
	// Best effort: a host whose pipe-max-size is smaller keeps the default
	// 64 KiB and the poll loop wakes for output as it comes.
	_, _ = unix.FcntlInt(uintptr(p.reqW), unix.F_SETPIPE_SZ, outPipeSize)
	if n, err := unix.FcntlInt(uintptr(p.outR), unix.F_SETPIPE_SZ, outPipeSize); err == nil && n >= outPipeSize {
		p.bigOut = true
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
//
// calls, when set, are the model call pipes, which become fd 5 and 6.
func startProc(cmd *exec.Cmd, outputLimit int, cleanup func() error, calls *callPipes) (*proc, error) {
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
	cmd.ExtraFiles = childFiles[:2] // fd 3 and 4
	if calls != nil {
		// fd 5 and 6, the model-call pipes (worker.py CALL_FD, ANSWER_FD).
		cmd.ExtraFiles = append(cmd.ExtraFiles, calls.child[0], calls.child[1])
	}
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
		marks:   newMarkedStream(outputLimit, windowMaxCount+64),
		output:  bounded{limit: outputLimit},
		bigOut:  p.bigOut,
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
	// Up to half a second for the dump to start: on a loaded machine the
	// signalled process may wait that long for a CPU. Only a timeout pays.
	for end := time.Now().Add(500 * time.Millisecond); time.Now().Before(end); {
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
	if pr.calls != nil {
		pr.calls.stop()
	}
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

// drainOutput reads fd 1/2 until the pipe is empty, without blocking. A
// short read means empty: one more read would only return EAGAIN.
func (pr *proc) drainOutput() {
	if pr.out < 0 {
		return
	}
	for {
		n, err := unix.Read(pr.out, pr.readBuf)
		if n > 0 {
			pr.scanOutput(pr.readBuf[:n])
		}
		if err == unix.EINTR {
			continue
		}
		if n < len(pr.readBuf) || err != nil {
			return
		}
	}
}

// scanOutput splits fd 1/2 bytes at the worker's end markers.
func (pr *proc) scanOutput(data []byte) { pr.marks.scan(data) }

// takeOutput sets output to the fd 1/2 output of request id (see
// markedStream.take).
func (pr *proc) takeOutput(id int64) {
	pr.output.reset()
	pr.marks.take(id, &pr.output)
}

// resetOutput forgets fd 1/2 output not yet claimed.
func (pr *proc) resetOutput() {
	pr.drainOutput()
	pr.marks.forget()
}

// readResponse reads from the response pipe until a short read, unless more
// than bound bytes are buffered already. It reports EOF.
func (pr *proc) readResponse(bound int) (eof bool) {
	for len(pr.respBuf) <= bound {
		n, err := unix.Read(pr.resp, pr.readBuf)
		if n > 0 {
			pr.respBuf = append(pr.respBuf, pr.readBuf[:n]...)
			pr.peak = max(pr.peak, len(pr.respBuf))
			pr.lastRead = time.Now()
			if n < len(pr.readBuf) {
				return false
			}
			continue
		}
		if err == unix.EINTR {
			continue
		}
		return n == 0 && err == nil
	}
	return false
}

// nextLine removes and returns the first complete response line. tooLong
// reports a line, or the start of one, longer than limit: the process broke
// the protocol.
func (pr *proc) nextLine(limit int) (line []byte, tooLong bool) {
	i := bytes.IndexByte(pr.respBuf, '\n')
	if i < 0 {
		return nil, len(pr.respBuf) > limit
	}
	if i > limit {
		return nil, true
	}
	line = pr.respBuf[:i:i]
	pr.respBuf = pr.respBuf[i+1:]
	if len(pr.respBuf) == 0 {
		pr.respBuf = nil
	}
	return line, false
}

// maxKeptSend bounds the buffer of request bytes a session keeps once they
// are all written: a request of megabytes does not stay behind it.
const maxKeptSend = 4 << 20

// gatherGap is how close together results must come for pump to let them
// gather (see gather).
const gatherGap = time.Millisecond

// gather waits up to wait before pump polls for results that come faster
// than gatherGap apart, so that one wake-up reads all that came meanwhile
// instead of one wake-up each; while gradegate is not polling the response
// pipe, the worker's writes to it wake nothing either. It watches only the
// process's pidfd, so a worker that dies is still noticed at once, and it
// does not wait when the deadline is within wait and gatherGap.
func (pr *proc) gather(wait, remaining time.Duration) {
	if wait <= 0 || remaining <= wait+gatherGap || time.Since(pr.lastRead) >= gatherGap {
		return
	}
	var fds []unix.PollFd
	if pr.pidfd >= 0 {
		fds = []unix.PollFd{{Fd: int32(pr.pidfd), Events: unix.POLLIN}}
	}
	ts := unix.NsecToTimespec(int64(wait))
	// EINTR or the pidfd: the poll below sees what there is.
	_, _ = unix.Ppoll(fds, &ts, nil)
}

// pump writes what it can of pending, then waits until the response pipe
// has a complete line, the process ends, or deadline passes, reading fd 1/2
// on the way. It reports alive when a line may be there (see nextLine),
// timedOut at the deadline (nothing killed yet), and died when the process
// exited or closed fd 4, after reading whatever it wrote before. With wait
// above 0 it first lets results that come fast gather, once (gather).
func (pr *proc) pump(pending *queue[byte], deadline time.Time, limit int, wait time.Duration) exchangeResult {
	write := func() {
		for len(pending.live()) > 0 {
			n, err := unix.Write(pr.req, pending.live())
			if n > 0 {
				pending.drop(n)
				continue
			}
			if err == unix.EINTR {
				continue
			}
			if err != unix.EAGAIN {
				// EPIPE: the worker is gone; its exit shows up on the pidfd
				// or as EOF on the response pipe.
				pending.reset()
			}
			return
		}
	}
	write()
	bound := limit + len(pr.readBuf)
	for {
		if bytes.IndexByte(pr.respBuf, '\n') >= 0 || len(pr.respBuf) > limit {
			return alive
		}
		remaining := time.Until(deadline)
		if remaining <= 0 {
			pr.drainOutput()
			return timedOut
		}
		if wait > 0 {
			pr.gather(wait, remaining)
			wait = 0
			remaining = time.Until(deadline)
		}
		fds := [4]unix.PollFd{
			{Fd: int32(pr.resp), Events: unix.POLLIN},
			{Fd: int32(pr.out), Events: unix.POLLIN},
			{Fd: -1},
			{Fd: -1},
		}
		if pr.bigOut {
			// Every case writes its end marker to the output pipe just
			// before its result: waking for both would double the wake-ups.
			// The output is read after every result, and at least every
			// outDrainEvery, long before a 1 MiB pipe fills.
			fds[1].Fd = -1
			remaining = min(remaining, outDrainEvery)
		}
		if len(pending.live()) > 0 {
			fds[2] = unix.PollFd{Fd: int32(pr.req), Events: unix.POLLOUT}
		}
		if pr.pidfd >= 0 {
			fds[3] = unix.PollFd{Fd: int32(pr.pidfd), Events: unix.POLLIN}
		}
		// Round up so a sub-millisecond remainder does not spin.
		ms := int((remaining + time.Millisecond - 1) / time.Millisecond)
		if _, err := unix.Poll(fds[:], ms); err != nil && !errors.Is(err, unix.EINTR) {
			pr.kill()
			return died
		}
		if fds[2].Revents != 0 {
			write()
		}
		eof := false
		if fds[0].Revents != 0 {
			eof = pr.readResponse(bound)
		}
		// After the response pipe: the end marker of every response read so
		// far is in the output pipe by now.
		if fds[1].Revents != 0 || fds[0].Revents != 0 || pr.bigOut {
			pr.drainOutput()
		}
		if eof || fds[3].Revents != 0 {
			// The process is gone (or closed fd 4): take what it managed to
			// write.
			for !eof && len(pr.respBuf) <= bound {
				before := len(pr.respBuf)
				eof = pr.readResponse(bound)
				if len(pr.respBuf) == before {
					break
				}
			}
			pr.drainOutput()
			// EOF comes a moment before the exit is visible; wait for it so
			// the exit status is the process's own.
			pr.exitedAlone = fds[3].Revents != 0 || pr.waitExit(200*time.Millisecond)
			pr.kill()
			pr.drainOutput()
			return died
		}
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
		if len(pr.respBuf) > maxInitResponse {
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
			eof = pr.readResponse(maxInitResponse)
		}
		exited := pidIndex >= 0 && fds[pidIndex].Revents != 0
		if eof || exited {
			// The process is gone (or closed fd 4): take what it managed to
			// write, then report it dead unless a full line is there.
			if !eof {
				pr.readResponse(maxInitResponse)
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
