package worker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/gradegate/gradegate/gate"
)

// This file is the portable pool's side of worker.py's messages: the
// requests it sends and the responses it reads and classifies.

// Size limits on what the portable pool reads from a worker, enforced
// before the bytes are buffered further.
const (
	// portableResultLimit bounds one case's response without its output;
	// worker.py holds its results to the same figure (RESULT_LIMIT).
	portableResultLimit = 160 << 10
	// portableEscapeFactor: JSON can spell one byte of output as \u00XX.
	portableEscapeFactor = 6
)

// portableRequest is one line sent to a worker: one task, or one batch of
// tasks (contract batch), and where its outcomes go.
type portableRequest struct {
	// id is random, and the response must carry it back: a grader that
	// writes a made-up response to the protocol pipe cannot know it.
	id    int64
	seqs  []int    // stream sequence numbers of its tasks
	ids   []string // their task ids, for messages
	line  []byte
	batch bool
}

// limit is the longest response line the request may get.
func (r *portableRequest) limit(outputLimit int) int {
	return len(r.seqs)*portableResultLimit + portableEscapeFactor*outputLimit + 4096
}

// appendRawLine appends m as one line of JSON: bytes holding a newline
// (pretty-printed JSON from a caller) are compacted, since the protocol is
// one request per line; anything the worker cannot decode comes back as a
// bad_request naming the case.
func appendRawLine(b []byte, m json.RawMessage) []byte {
	if len(m) == 0 {
		return append(b, "null"...)
	}
	if bytes.IndexByte(m, '\n') >= 0 {
		var c bytes.Buffer
		if json.Compact(&c, m) == nil {
			return append(b, c.Bytes()...)
		}
		return append(b, bytes.ReplaceAll(m, []byte{'\n'}, []byte{' '})...)
	}
	return append(b, m...)
}

func portableTaskRequest(seq int, t gate.Task) *portableRequest {
	id := rand.Int64()
	b := make([]byte, 0, len(t.Sample)+len(t.Item)+48)
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"sample":`...)
	b = appendRawLine(b, t.Sample)
	b = append(b, `,"item":`...)
	b = appendRawLine(b, t.Item)
	b = append(b, "}\n"...)
	return &portableRequest{id: id, seqs: []int{seq}, ids: []string{t.ID}, line: b}
}

func portableBatchRequest(first int, tasks []gate.Task) (*portableRequest, error) {
	r := &portableRequest{id: rand.Int64(), batch: true}
	b := append([]byte(`{"id":`), strconv.FormatInt(r.id, 10)...)
	b = append(b, `,"batch":[`...)
	seen := make(map[string]bool, len(tasks))
	for i, t := range tasks {
		// grade_batch answers by case_id, so ids must tell cases apart.
		if seen[t.ID] {
			return nil, fmt.Errorf("worker: task id %q appears twice; grade_batch needs unique case_ids", t.ID)
		}
		seen[t.ID] = true
		if i > 0 {
			b = append(b, ',')
		}
		id, err := json.Marshal(t.ID)
		if err != nil {
			return nil, fmt.Errorf("worker: task id %q: %w", t.ID, err)
		}
		b = append(b, `{"case_id":`...)
		b = append(b, id...)
		b = append(b, `,"sample":`...)
		b = appendRawLine(b, t.Sample)
		b = append(b, `,"item":`...)
		b = appendRawLine(b, t.Item)
		b = append(b, '}')
		r.seqs = append(r.seqs, first+i)
		r.ids = append(r.ids, t.ID)
	}
	r.line = append(b, "]}\n"...)
	return r, nil
}

// portableReply is one line from the worker's fd 4.
type portableReply struct {
	Op        string             `json:"op"` // init answers: ready | load_error; bad_request
	ID        int64              `json:"id"`
	Class     string             `json:"class"`
	Scores    map[string]float64 `json:"scores"`
	Judge     json.RawMessage    `json:"judge"`
	Type      string             `json:"type"`
	Message   string             `json:"message"`
	Line      int                `json:"line"`
	Output    string             `json:"output"`
	OutputCut int                `json:"output_cut"`
	Results   []portableReply    `json:"results"` // batch: one per case, in order
	T         float64            `json:"t"`       // milliseconds the request took in the worker
	Replace   string             `json:"replace"` // the worker asks to be replaced
	Leftover  bool               `json:"leftover"`
}

// portableClasses are the classes the worker may report; anything else is
// a broken protocol.
var portableClasses = map[string]gate.Class{
	"ok":                gate.ClassOK,
	"invalid_return":    gate.ClassInvalidReturn,
	"grader_exception":  gate.ClassGraderException,
	"memory_exceeded":   gate.ClassMemoryExceeded,
	"sandbox_violation": gate.ClassSandboxViolation,
}

func (r *portableReply) class() gate.Class {
	if c, ok := portableClasses[r.Class]; ok {
		return c
	}
	return gate.ClassWorkerCrash
}

// recycle says whether the process must be replaced after this reply:
// results the grader returned and plain exceptions leave it trusted; a
// memory error, a child process left running, or the worker's own request
// do not.
func (r *portableReply) recycle() bool {
	if r.Leftover || r.Replace != "" {
		return true
	}
	switch r.Class {
	case "ok":
		for _, res := range r.Results {
			if res.recycle() {
				return true
			}
		}
		return false
	case "grader_exception", "invalid_return":
		return false
	}
	return true
}

func parsePortableReply(line []byte, id int64) (*portableReply, error) {
	var r portableReply
	if err := json.Unmarshal(line, &r); err != nil {
		return nil, fmt.Errorf("worker response: %w", err)
	}
	if r.Op == "bad_request" {
		return &r, nil // it has no id to echo
	}
	if r.ID != id {
		return nil, fmt.Errorf("worker response for request %d, want %d", r.ID, id)
	}
	return &r, nil
}

// output joins what Python captured with what reached fd 1/2, within limit.
func (r *portableReply) output(fd capped, limit int) string {
	var b strings.Builder
	b.WriteString(r.Output)
	cut := r.OutputCut
	if len(fd.buf) > 0 {
		if b.Len() > 0 && !strings.HasSuffix(r.Output, "\n") {
			b.WriteByte('\n')
		}
		room := max(limit-b.Len(), 0)
		kept := fd.buf[:min(room, len(fd.buf))]
		b.Write(kept)
		cut += len(fd.buf) - len(kept)
	}
	cut += fd.cut
	if cut > 0 {
		fmt.Fprintf(&b, "\n[gradegate: %d more bytes of output cut]", cut)
	}
	return strings.ToValidUTF8(b.String(), "\uFFFD")
}

// portableOutcomes turns a well-formed reply into one Outcome per task of
// req.
func portableOutcomes(cfg *Config, r *portableReply, req *portableRequest, output string, dur float64) []gate.Outcome {
	outs := make([]gate.Outcome, len(req.seqs))
	if !req.batch || r.Class != "ok" || len(r.Results) != len(req.seqs) {
		if req.batch && r.Class == "ok" {
			r = &portableReply{Class: "died", Message: "worker answered a batch with the wrong number of results"}
		}
		o := portableCaseOutcome(cfg, r, output, dur)
		for i := range outs {
			outs[i] = o
		}
		return outs
	}
	// The batch ran as one call: its output and time belong to every case.
	for k := range r.Results {
		outs[k] = portableCaseOutcome(cfg, &r.Results[k], output, dur)
	}
	return outs
}

// portableCaseOutcome checks one classified result. The worker classifies,
// but Go checks an ok result again: a process the grader runs in is not
// trusted to say a score is valid.
func portableCaseOutcome(cfg *Config, r *portableReply, output string, dur float64) gate.Outcome {
	o := gate.Outcome{Class: r.class(), Output: output, DurationMS: dur}
	msg := r.Message
	if o.Class == gate.ClassOK {
		score, ok := r.Scores[cfg.Metric]
		valid := ok
		for _, v := range r.Scores {
			valid = valid && !math.IsNaN(v) && !math.IsInf(v, 0)
		}
		if valid {
			o.Score = &score
			o.Scores = r.Scores
			if len(r.Judge) > 0 && string(r.Judge) != "null" {
				o.Judge = r.Judge
			}
			return o
		}
		o.Class = gate.ClassWorkerCrash
		msg = "worker reported ok without a valid " + strconv.Quote(cfg.Metric)
	}
	if o.Class == gate.ClassWorkerCrash && msg == "" {
		msg = "worker sent an unknown class " + strconv.Quote(r.Class)
	}
	o.Error = &gate.CaseError{Class: o.Class, Type: r.Type, Message: msg, Line: r.Line}
	return o
}

// portableMemoryMarkers are what C code and the interpreter print when an
// allocation fails.
var portableMemoryMarkers = []string{"MemoryError", "std::bad_alloc", "Cannot allocate memory", "out of memory", "Out of memory"}

// portableDeadOutcome describes a task whose process died, was killed for
// its time, or broke the protocol. output is what reached fd 1/2.
func portableDeadOutcome(cfg *Config, pr *portableProc, res portableResult, output capped, dur float64) gate.Outcome {
	var ce gate.CaseError
	switch res {
	case portableTimedOut:
		ce = gate.CaseError{Class: gate.ClassTimeout, Message: fmt.Sprintf("the grader ran past timeout_seconds=%d; its process was killed", cfg.TimeoutSeconds)}
	case portableGarbled:
		ce = gate.CaseError{Class: gate.ClassWorkerCrash, Message: "the grader process broke the response protocol (it wrote to the worker's private pipe, or the worker failed)"}
	default:
		ce = portableExitError(pr, output.buf)
	}
	ce.Line = portableTracebackLine(output.buf, cfg.SourceName)
	return gate.Outcome{
		Class:      ce.Class,
		Error:      &ce,
		Output:     (&portableReply{}).output(output, cfg.OutputLimit),
		DurationMS: dur,
	}
}

// portableExitError classifies the end of a worker process that was reaped
// without answering. A failed allocation named in its output is
// memory_exceeded; every other end is a worker_crash. (The portable pool
// puts no memory limit in force, so there is no limit to compare the
// process's peak memory with.)
func portableExitError(pr *portableProc, output []byte) gate.CaseError {
	pr.mu.Lock()
	st, alone := pr.state, pr.exitedAlone
	pr.mu.Unlock()
	if st == nil {
		return gate.CaseError{Class: gate.ClassWorkerCrash, Message: "the grader process stopped answering"}
	}
	if !alone {
		// gradegate killed it: it closed its response pipe but kept running.
		return gate.CaseError{Class: gate.ClassWorkerCrash, Message: "the grader process closed its response pipe"}
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
			return gate.CaseError{Class: gate.ClassMemoryExceeded, Message: how + " while out of memory"}
		}
	}
	return gate.CaseError{Class: gate.ClassWorkerCrash, Message: how}
}

// portableTracebackLine finds the grader line in a faulthandler dump on fd
// 2 (written on a fatal signal or, on Unix, just before a timeout).
// Faulthandler prints the most recent call first, so the first frame in the
// grader's file is the line.
func portableTracebackLine(output []byte, sourceName string) int {
	re := regexp.MustCompile(`File "` + regexp.QuoteMeta(sourceName) + `", line (\d+)`)
	m := re.FindSubmatch(output)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}
