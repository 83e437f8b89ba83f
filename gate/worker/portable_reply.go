package worker

import (
	"bytes"
	"fmt"
	"syscall"

	"github.com/gradegate/gradegate/gate/grading"
)

// This file is the portable pool's side of worker.py's messages: the
// requests it sends and the responses it reads and classifies.

// portableOutcomes turns a well-formed reply into one Outcome per task of
// req.
func portableOutcomes(cfg *Config, r *response, req *request, output string, dur float64) []grading.Outcome {
	outs := make([]grading.Outcome, len(req.seqs))
	if !req.batch || r.Class != "ok" || len(r.Results) != len(req.seqs) {
		if req.batch && r.Class == "ok" {
			r = &response{Class: "died", Message: "worker answered a batch with the wrong number of results"}
		}
		o := resultOutcome(r, cfg.Metric, output, dur)
		for i := range outs {
			outs[i] = o
		}
		return outs
	}
	// The batch ran as one call: its output and time belong to every case.
	report := batchReport(r)
	for k := range r.Results {
		outs[k] = resultOutcome(&r.Results[k], cfg.Metric, output, dur)
		outs[k].Batch = report
	}
	return outs
}

// portableMemoryMarkers are what C code and the interpreter print when an
// allocation fails.
var portableMemoryMarkers = []string{"MemoryError", "std::bad_alloc", "Cannot allocate memory", "out of memory", "Out of memory"}

// portableDeadOutcome describes a task whose process died, was killed for
// its time, or broke the protocol. output is what reached fd 1/2.
func portableDeadOutcome(cfg *Config, pr *portableProc, res portableResult, output bounded, dur float64) grading.Outcome {
	var ce grading.CaseError
	switch res {
	case portableTimedOut:
		ce = grading.CaseError{Class: grading.ClassTimeout, Message: fmt.Sprintf("the grader ran past timeout_seconds=%d; its process was killed", cfg.TimeoutSeconds)}
	case portableGarbled:
		ce = grading.CaseError{Class: grading.ClassWorkerCrash, Message: "the grader process broke the response protocol (it wrote to the worker's private pipe, or the worker failed)"}
	default:
		ce = portableExitError(pr, output.buf)
	}
	ce.Line = tracebackLine(output.buf, cfg.SourceName)
	return grading.Outcome{
		Class:      ce.Class,
		Error:      &ce,
		Output:     (&response{}).output(output, cfg.OutputLimit),
		DurationMS: dur,
	}
}

// portableExitError classifies the end of a worker process that was reaped
// without answering. A failed allocation named in its output is
// memory_exceeded; every other end is a worker_crash. (The portable pool
// puts no memory limit in force, so there is no limit to compare the
// process's peak memory with.)
func portableExitError(pr *portableProc, output []byte) grading.CaseError {
	pr.mu.Lock()
	st, alone := pr.state, pr.exitedAlone
	pr.mu.Unlock()
	if st == nil {
		return grading.CaseError{Class: grading.ClassWorkerCrash, Message: "the grader process stopped answering"}
	}
	if !alone {
		// gradegate killed it: it closed its response pipe but kept running.
		return grading.CaseError{Class: grading.ClassWorkerCrash, Message: "the grader process closed its response pipe"}
	}
	how := "the grader process ended before answering"
	if ws, ok := st.Sys().(interface {
		Signaled() bool
		Signal() syscall.Signal
	}); ok && ws.Signaled() {
		how = "the grader process was killed by signal " + portableSignalName(ws.Signal())
	} else if code := st.ExitCode(); code >= 0 {
		how = fmt.Sprintf("the grader process exited with status %d before answering", code)
	}
	for _, m := range portableMemoryMarkers {
		if bytes.Contains(output, []byte(m)) {
			return grading.CaseError{Class: grading.ClassMemoryExceeded, Message: how + " while out of memory"}
		}
	}
	return grading.CaseError{Class: grading.ClassWorkerCrash, Message: how}
}
