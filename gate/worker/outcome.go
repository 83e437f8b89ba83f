//go:build linux

package worker

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gradegate/gradegate/gate/grading"
	"golang.org/x/sys/unix"
)

// outcomes turns a well-formed response into one Outcome per task of j.
func (p *Pool) outcomes(pr *proc, r *response, j *request, elapsed time.Duration) []grading.Outcome {
	out := r.output(pr.output, p.cfg.OutputLimit)
	dur := ms(elapsed)
	if r.Class == "died" {
		o := p.deadOutcome(pr, garbled, elapsed, r)
		return repeat(o, len(j.seqs))
	}
	if !j.batch {
		return []grading.Outcome{p.caseOutcome(r, out, dur)}
	}
	if r.Class != "ok" || len(r.Results) != len(j.seqs) {
		if r.Class == "ok" {
			r = &response{Class: "died", Message: "worker answered a batch with the wrong number of results"}
		}
		return repeat(p.caseOutcome(r, out, dur), len(j.seqs))
	}
	// The batch ran as one call: its output and time belong to every case.
	outs := make([]grading.Outcome, len(j.seqs))
	report := batchReport(r)
	for k := range r.Results {
		outs[k] = p.caseOutcome(&r.Results[k], out, dur)
		outs[k].Batch = report
	}
	return outs
}

func repeat(o grading.Outcome, n int) []grading.Outcome {
	outs := make([]grading.Outcome, n)
	for i := range outs {
		outs[i] = o
	}
	return outs
}

// caseOutcome checks one classified result (resultOutcome), with what
// only this pool's worker reports: the line of the return and what the
// preprocessor did.
func (p *Pool) caseOutcome(r *response, output string, dur float64) grading.Outcome {
	if p.cfg.Preprocess != nil && r.Class == omittedPreprocessedOut {
		return droppedOutcome(output, dur)
	}
	o := resultOutcome(r, p.cfg.Metric, output, dur)
	o.ReturnLine, o.Preprocess = max(r.ReturnLine, 0), r.Pre
	return o
}

// deadOutcome describes a task whose process died, was killed or broke the
// protocol. r is the worker's report when the process that died was a
// forked child (isolation case); otherwise the process itself is examined.
func (p *Pool) deadOutcome(pr *proc, res exchangeResult, elapsed time.Duration, r *response) grading.Outcome {
	output := (&response{}).output(pr.output, p.cfg.OutputLimit)
	if r != nil {
		output = r.output(pr.output, p.cfg.OutputLimit)
	}
	line := tracebackLine(pr.output.buf, p.cfg.SourceName)
	o := grading.Outcome{Output: output, DurationMS: ms(elapsed)}
	var ce grading.CaseError
	switch {
	case pr.guard.Exceeded() != nil:
		// The sandbox killed the group for its total memory or disk.
		be := pr.guard.Exceeded()
		ce = grading.CaseError{Class: be.Class, Message: be.Message}
	case res == timedOut:
		ce = grading.CaseError{Class: grading.ClassTimeout, Message: fmt.Sprintf("the grader ran past timeout_seconds=%d; its process was killed", p.cfg.TimeoutSeconds)}
	case r != nil && r.Died != nil:
		var ws unix.WaitStatus
		if r.Died.Signal != 0 {
			ws = unix.WaitStatus(r.Died.Signal & 0x7f)
		} else {
			ws = unix.WaitStatus((r.Died.Status & 0xff) << 8)
		}
		ce = crashError(syscall.WaitStatus(ws), r.Died.MaxRSSKB, pr.output.buf, p.cfg.MemoryMB, "the grader's child process")
	case r != nil:
		ce = grading.CaseError{Class: grading.ClassWorkerCrash, Message: "the grader's child process: " + r.Message}
	case res == garbled:
		ce = grading.CaseError{Class: grading.ClassWorkerCrash, Message: "the grader process broke the response protocol (it wrote to the worker's private pipe, or the worker failed)"}
	default:
		ce = processError(pr, p.cfg.MemoryMB)
	}
	ce.Line = line
	if pl, ok := p.cfg.Preprocess.preprocessRunning(pr.output.buf, p.cfg.SourceName); ok && res == timedOut {
		// The line is the preprocessor's, not the grader's: it goes in
		// the message.
		ce, o.Preprocess = p.cfg.Preprocess.timeoutError(pl), true
	}
	o.Class = ce.Class
	o.Error = &ce
	return o
}

// processError classifies the exit of a worker process that was reaped.
func processError(pr *proc, memoryMB int) grading.CaseError {
	st := pr.state
	if st == nil {
		return grading.CaseError{Class: grading.ClassWorkerCrash, Message: "the grader process stopped answering"}
	}
	ws, _ := st.Sys().(syscall.WaitStatus)
	var maxrss int64
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		maxrss = ru.Maxrss
	}
	if !pr.exitedAlone {
		// gradegate killed it: it closed its response pipe but kept running.
		return grading.CaseError{Class: grading.ClassWorkerCrash, Message: "the grader process closed its response pipe"}
	}
	return crashError(ws, maxrss, pr.output.buf, memoryMB, "the grader process")
}

// Markers that C code and the interpreter print when an allocation fails.
var memoryMarkers = []string{"MemoryError", "std::bad_alloc", "Cannot allocate memory", "out of memory", "Out of memory"}

// crashError classifies a process that ended without answering. It tells
// memory exhaustion from other crashes as well as the evidence allows:
//   - SIGKILL that gradegate did not send, with peak resident memory at
//     90% of memory_mb, is the kernel's OOM killer (or a cgroup limit):
//     memory_exceeded; without that evidence it is a crash (the grader may
//     have killed itself);
//   - an abort or segfault (or any exit) whose output names a failed
//     allocation, or whose peak resident memory reached 90% of memory_mb:
//     memory_exceeded (C code that cannot allocate under RLIMIT_AS usually
//     aborts or dereferences NULL);
//   - SIGXCPU is the CPU-time limit: timeout;
//   - everything else: worker_crash.
func crashError(ws syscall.WaitStatus, maxrssKB int64, output []byte, memoryMB int, who string) grading.CaseError {
	var how string
	switch {
	case ws.Signaled():
		how = fmt.Sprintf("%s was killed by signal %s", who, signalName(ws.Signal()))
	case ws.Exited():
		how = fmt.Sprintf("%s exited with status %d before answering", who, ws.ExitStatus())
	default:
		how = who + " ended before answering"
	}
	memoryHint := memoryMB > 0 && maxrssKB >= int64(memoryMB)*1024*9/10
	for _, m := range memoryMarkers {
		if strings.Contains(string(output), m) {
			memoryHint = true
		}
	}
	switch {
	case ws.Signaled() && ws.Signal() == syscall.SIGXCPU:
		return grading.CaseError{Class: grading.ClassTimeout, Message: how + " (CPU time limit)"}
	case ws.Signaled() && ws.Signal() == syscall.SIGKILL && memoryHint:
		return grading.CaseError{Class: grading.ClassMemoryExceeded, Message: fmt.Sprintf("%s near memory_mb=%d (peak resident %d MiB): the out-of-memory killer", how, memoryMB, maxrssKB/1024)}
	case memoryHint:
		return grading.CaseError{Class: grading.ClassMemoryExceeded, Message: fmt.Sprintf("%s while out of memory (memory_mb=%d, peak resident %d MiB)", how, memoryMB, maxrssKB/1024)}
	}
	return grading.CaseError{Class: grading.ClassWorkerCrash, Message: how}
}

func signalName(s syscall.Signal) string {
	if name := unix.SignalName(s); name != "" {
		return name
	}
	return strconv.Itoa(int(s))
}
