package worker

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"
)

// This file is one process of the portable pool and its three pipes, served
// by goroutines and os/exec alone, so it runs on every system Go and Python
// run on.
//
// The worker protocol is worker.py's, unchanged: requests on fd 3, responses
// on fd 4, the grader's fd 1/2 output with an end marker per request. Only
// the way the pipes reach fd 3 and 4 differs: os/exec can hand a child extra
// descriptors on Unix but not on Windows, so the pool passes the request
// pipe as stdin and the response pipe as stdout, and a short bootstrap
// (portableBootstrap) moves them to fd 3 and 4 before worker.py runs.

// portableInitLimit bounds the answer to the init request (ready, or a load
// error with its output).
const portableInitLimit = 1 << 20

// markerGrace bounds how long the output of an answered request may take to
// arrive: worker.py writes the request's end marker to fd 2 before it
// writes the response, so the marker is already in the output pipe when the
// response is read, and waiting ends as soon as the reading goroutine has
// it. Only a grader that moved fd 2 away makes the wait run to the end (its
// output then goes with the next case).
const markerGrace = 2 * time.Second

// readerGrace bounds how long stop waits for the pipe readers to see EOF
// after the process is gone; a grandchild that escaped the kill (Windows
// has no process group) may hold the pipes open.
const readerGrace = time.Second

// portableResult says how one exchange ended.
type portableResult int

const (
	portableLine      portableResult = iota // a response line came
	portableDied                            // the process exited or closed its response pipe
	portableTimedOut                        // the time ran out; nothing killed yet
	portableCancelled                       // ctx ended; the process was killed
	portableGarbled                         // a response over its limit or out of protocol
)

// portableProc is one running worker process of the portable pool.
type portableProc struct {
	cmd     *exec.Cmd
	box     int // the sandbox slot (scratch directory) it runs in
	cleanup func() error

	req     *os.File // write end of the worker's stdin (its fd 3)
	resp    *os.File // read end of its stdout (its fd 4)
	outPipe *os.File // read end of its stderr (fd 1 and 2)
	writeMu sync.Mutex

	// limit is the longest response line the reader accepts now: the
	// current request's. A longer one is never buffered past it.
	limit   atomic.Int64
	lines   chan []byte
	respEnd chan struct{} // closed when the response reader stops
	tooLong atomic.Bool   // it stopped at a line over limit
	peak    atomic.Int64  // the most response bytes it buffered at once

	out    markedOutput
	outEnd chan struct{} // closed when the output reader stops

	exited   chan struct{} // closed when the process has been reaped
	stopping chan struct{} // closed by stop: readers stop handing lines over

	mu     sync.Mutex
	killed bool // gradegate killed it (timeout, cancel, close, protocol)
	// exitedAlone: the process ended before gradegate killed it, so its
	// exit status is its own.
	exitedAlone bool
	state       *os.ProcessState
	stopOnce    sync.Once
	stopErr     error
}

// startPortableProc starts cmd with the request pipe as stdin, the response
// pipe as stdout and one pipe for stderr (fd 1 is joined to it by the
// bootstrap, so the interleaving of both is kept).
func startPortableProc(cmd *exec.Cmd, outputLimit int, cleanup func() error) (*portableProc, error) {
	var files [6]*os.File // reqR, reqW, respR, respW, outR, outW
	closeAll := func() {
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
	}
	for i := 0; i < len(files); i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("pipe: %w", err)
		}
		files[i], files[i+1] = r, w
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = files[0], files[3], files[5]
	startPortableGroup(cmd)
	startErr := cmd.Start()
	// The child has its ends now; the parent keeps only its own.
	files[0].Close()
	files[3].Close()
	files[5].Close()
	if startErr != nil {
		files[1].Close()
		files[2].Close()
		files[4].Close()
		return nil, fmt.Errorf("starting %s: %w", cmd.Path, startErr)
	}
	pr := &portableProc{
		cmd:      cmd,
		cleanup:  cleanup,
		req:      files[1],
		resp:     files[2],
		outPipe:  files[4],
		lines:    make(chan []byte, 1),
		respEnd:  make(chan struct{}),
		outEnd:   make(chan struct{}),
		exited:   make(chan struct{}),
		stopping: make(chan struct{}),
		out:      markedOutput{s: newMarkedStream(outputLimit, maxSegments), notify: make(chan struct{}, 1)},
	}
	pr.limit.Store(portableInitLimit)
	go pr.readResponses()
	go pr.readOutput()
	go func() {
		_ = cmd.Wait() // the exit status is read from ProcessState
		pr.mu.Lock()
		pr.state = cmd.ProcessState
		pr.exitedAlone = !pr.killed
		pr.mu.Unlock()
		close(pr.exited)
	}()
	return pr, nil
}

// readResponses splits the response pipe into lines and hands them over one
// at a time. It stops at EOF, at a read error, or at a line longer than
// limit, before buffering more than limit and one read of it.
func (pr *portableProc) readResponses() {
	defer close(pr.respEnd)
	chunk := make([]byte, 64<<10)
	var buf []byte
	for {
		n, err := pr.resp.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if int64(len(buf)) > pr.peak.Load() {
			pr.peak.Store(int64(len(buf)))
		}
		for {
			limit := int(pr.limit.Load())
			i := bytes.IndexByte(buf, '\n')
			if i < 0 && len(buf) > limit || i > limit {
				pr.tooLong.Store(true)
				return
			}
			if i < 0 {
				break
			}
			line := bytes.Clone(buf[:i])
			buf = buf[i+1:]
			select {
			case pr.lines <- line:
			case <-pr.stopping:
				return
			}
		}
		if len(buf) == 0 {
			buf = nil // let a large line's array go
		}
		if err != nil {
			return
		}
	}
}

// readOutput reads fd 1/2 until EOF, splitting it at the end markers.
func (pr *portableProc) readOutput() {
	defer close(pr.outEnd)
	chunk := make([]byte, 64<<10)
	for {
		n, err := pr.outPipe.Read(chunk)
		if n > 0 {
			pr.out.scan(chunk[:n])
		}
		if err != nil {
			pr.out.end()
			return
		}
	}
}

// send writes b to the request pipe from a goroutine of its own: a worker
// that stops reading its requests must not block the caller past its
// timer. A failed write (the worker is gone) shows up as its exit.
func (pr *portableProc) send(b []byte) {
	go func() {
		pr.writeMu.Lock()
		defer pr.writeMu.Unlock()
		_, _ = pr.req.Write(b)
	}()
}

// exchange sends msg and waits for one response line, at most timeout.
// On portableTimedOut nothing is killed yet (the caller asks for the stack
// first); on every other result but portableLine the process is killed or
// gone.
func (pr *portableProc) exchange(ctx context.Context, msg []byte, limit int, timeout time.Duration) ([]byte, portableResult) {
	pr.limit.Store(int64(limit))
	pr.send(msg)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case line := <-pr.lines:
		return line, portableLine
	case <-pr.respEnd:
		if line, ok := pr.lineLeft(); ok {
			return line, portableLine
		}
		if pr.tooLong.Load() {
			pr.kill()
			return nil, portableGarbled
		}
		// EOF comes a moment before the exit is visible; wait for it so
		// the exit status is the process's own.
		select {
		case <-pr.exited:
		case <-time.After(200 * time.Millisecond):
		}
		pr.kill()
		return nil, portableDied
	case <-pr.exited:
		// Take what it managed to write: the reader sees EOF once the
		// last holder of the pipe is gone (its children are killed with it).
		pr.kill()
		select {
		case <-pr.respEnd:
		case <-time.After(readerGrace):
		}
		if line, ok := pr.lineLeft(); ok {
			return line, portableLine
		}
		if pr.tooLong.Load() {
			return nil, portableGarbled
		}
		return nil, portableDied
	case <-timer.C:
		return nil, portableTimedOut
	case <-ctx.Done():
		pr.kill()
		return nil, portableCancelled
	}
}

// lineLeft takes a response line the reader handed over, if any.
func (pr *portableProc) lineLeft() ([]byte, bool) {
	select {
	case line := <-pr.lines:
		return line, true
	default:
		return nil, false
	}
}

// kill ends the worker and, where the system has process groups, every
// process it started. Safe from any goroutine and after the process ended.
func (pr *portableProc) kill() {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.killed = true
	if pr.state != nil {
		return // reaped: the pid may belong to someone else by now
	}
	killPortableGroup(pr.cmd.Process)
}

// dumpStack asks the worker to print the grader's Python stack to fd 2
// before it is killed for a timeout (Unix: SIGUSR1, which worker.py hands
// to faulthandler), and gives it a moment to do so.
func (pr *portableProc) dumpStack() {
	pr.mu.Lock()
	sent := pr.state == nil && signalPortableStack(pr.cmd.Process)
	pr.mu.Unlock()
	if !sent {
		return
	}
	// Up to half a second for the dump to start: on a loaded machine the
	// signalled process may wait that long for a CPU. Only a timeout pays.
	wait := 500 * time.Millisecond
	for {
		select {
		case <-pr.out.notify:
			// The dump is a few hundred bytes written at once; one more
			// short wait catches a second thread's part.
			wait = 10 * time.Millisecond
		case <-time.After(wait):
			return
		}
	}
}

// stop kills and reaps the process, lets the readers take what it left in
// its pipes, closes the parent's ends and removes the scratch directory. It
// returns the cleanup error, if any. Safe to call more than once.
func (pr *portableProc) stop() error {
	pr.stopOnce.Do(func() {
		pr.kill()
		<-pr.exited
		close(pr.stopping)
		if pr.writeMu.TryLock() {
			pr.req.Close()
			pr.writeMu.Unlock()
		} else {
			// A write is stuck: a process outside the group holds the
			// pipe's other end and does not read. Close wakes it on Unix;
			// on Windows Close would wait for it, so it must not hold
			// stop up.
			go pr.req.Close()
		}
		for _, f := range []struct {
			end  chan struct{}
			file *os.File
		}{{pr.respEnd, pr.resp}, {pr.outEnd, pr.outPipe}} {
			select {
			case <-f.end:
				f.file.Close()
			case <-time.After(readerGrace):
				// A process outside the group holds the pipe. Closing it
				// wakes the reader on Unix; on Windows Close would wait
				// for the read, so it must not hold stop up.
				go f.file.Close()
			}
		}
		if pr.cleanup != nil {
			if err := pr.cleanup(); err != nil {
				pr.stopErr = fmt.Errorf("removing scratch directory: %w", err)
			}
		}
	})
	return pr.stopErr
}

// maxSegments bounds the closed segments kept while none is claimed (a
// process runs one request at a time here; see markedStream).
const maxSegments = 64

// markedOutput is the fd 1/2 stream of one process split at worker.py's end
// markers, read in a goroutine of its own and claimed by the grading one.
type markedOutput struct {
	mu     sync.Mutex
	s      markedStream
	ended  bool // the pipe reached EOF
	notify chan struct{}
}

func (o *markedOutput) wake() {
	select {
	case o.notify <- struct{}{}:
	default:
	}
}

func (o *markedOutput) end() {
	o.mu.Lock()
	o.ended = true
	o.mu.Unlock()
	o.wake()
}

// scan adds bytes read from fd 1/2.
func (o *markedOutput) scan(data []byte) {
	o.mu.Lock()
	o.s.scan(data)
	o.mu.Unlock()
	o.wake()
}

// take returns the output of request id: everything up to its end marker,
// waiting up to wait for the marker, or everything so far when it does not
// come (id -1: the process is gone).
func (o *markedOutput) take(id int64, wait time.Duration) bounded {
	deadline := time.Now().Add(wait)
	o.mu.Lock()
	for id >= 0 && !o.s.has(id) && !o.ended {
		remaining := time.Until(deadline)
		if remaining <= 0 {
			break
		}
		o.mu.Unlock()
		select {
		case <-o.notify:
		case <-time.After(remaining):
		}
		o.mu.Lock()
	}
	defer o.mu.Unlock()
	got := bounded{limit: o.s.limit}
	o.s.take(id, &got)
	return got
}

// forget drops output not yet claimed.
func (o *markedOutput) forget() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.s.forget()
}
