package worker

// The worker protocol as the gate speaks it, on every system: the request
// lines sent to worker.py and the response lines read back. The Linux pool
// and the portable pool both use it.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gradegate/gradegate/gate/grading"
)

// Size limits on what the gate reads from a worker, enforced before the
// bytes are buffered further: a grader that writes its own "responses" to
// the protocol pipe cannot grow the gate's memory past them.
const (
	// resultLimit bounds one case's response without its output; worker.py
	// holds its own results to the same figure (RESULT_LIMIT).
	resultLimit = 160 << 10
	// escapeFactor: JSON can spell one byte of output as \u00XX.
	escapeFactor = 6
)

// request is one line sent to a worker: one task, or one batch of tasks
// (contract batch), and where its outcomes go.
type request struct {
	// id is random, and the response must carry it back: a grader that
	// writes a made-up response straight to fd 4 cannot know it (short of
	// reading the worker's own frames), so its line is rejected.
	id    int64
	seqs  []int    // stream sequence numbers of its tasks
	ids   []string // their task ids, for messages
	line  []byte
	batch bool
	// queued is when the request was handed to the process; with the time
	// of the previous answer it gives the moment its case started.
	queued time.Time
}

// limit is the longest response line the request may get.
func (r *request) limit(outputLimit int) int {
	return len(r.seqs)*resultLimit + escapeFactor*outputLimit + 4096
}

// requestLine builds a task's request from the bytes as read: sample and
// item are passed through, never decoded and encoded again. Only bytes
// holding a newline (pretty-printed JSON from a caller) are compacted, since
// the protocol is one request per line; anything the worker cannot decode
// comes back as a protocol error naming the case.
func appendRaw(b []byte, m json.RawMessage) []byte {
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

// requestShape is how a pool's requests are written: one task each or
// batches (contract), and whether a task's request names its case
// (caseIDs: MKA1's sample_id is derived from it).
type requestShape struct {
	contract string
	caseIDs  bool
}

func taskRequest(seq int, t grading.Task, caseID bool) *request {
	id := rand.Int64()
	b := make([]byte, 0, len(t.Sample)+len(t.Item)+48)
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, id, 10)
	if caseID {
		if cid, err := json.Marshal(t.ID); err == nil {
			b = append(b, `,"case_id":`...)
			b = append(b, cid...)
		}
	}
	b = append(b, `,"sample":`...)
	b = appendRaw(b, t.Sample)
	b = append(b, `,"item":`...)
	b = appendRaw(b, t.Item)
	if t.Trace {
		b = append(b, `,"trace":true`...)
	}
	if t.RecordReads {
		b = append(b, `,"reads":1`...)
	}
	b = append(b, "}\n"...)
	return &request{id: id, seqs: []int{seq}, ids: []string{t.ID}, line: b}
}

func batchRequest(first int, tasks []grading.Task) (*request, error) {
	r := &request{id: rand.Int64(), batch: true}
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
		b = appendRaw(b, t.Sample)
		b = append(b, `,"item":`...)
		b = appendRaw(b, t.Item)
		if t.RecordReads {
			b = append(b, `,"reads":1`...)
		}
		b = append(b, '}')
		r.seqs = append(r.seqs, first+i)
		r.ids = append(r.ids, t.ID)
	}
	r.line = append(b, "]}\n"...)
	return r, nil
}

// response is one line from the worker's fd 4.
type response struct {
	Op      string             `json:"op"` // init answers: ready | load_error; bad_request
	ID      int64              `json:"id"`
	Class   string             `json:"class"` // ok | invalid_return | grader_exception | memory_exceeded | sandbox_violation | died
	Scores  map[string]float64 `json:"scores"`
	Judge   json.RawMessage    `json:"judge"`
	Type    string             `json:"type"`
	Message string             `json:"message"`
	Line    int                `json:"line"`
	// ReturnLine answers a traced request: the grader line whose return
	// produced the score.
	ReturnLine int        `json:"return_line"`
	Output     string     `json:"output"`
	OutputCut  int        `json:"output_cut"`
	Results    []response `json:"results"` // batch: one per case, in order
	// Metrics and MetricsDropped are a batch's aggregate metrics under
	// MKA1's contract; Dropped are a result's score keys its rules
	// dropped.
	Metrics        map[string]float64 `json:"metrics"`
	MetricsDropped []string           `json:"metrics_dropped"`
	Dropped        []string           `json:"dropped"`
	// ExtractedOutput is a batch update's replacement of the sample's
	// extracted_output (a JSON string or null); nil when not replaced.
	ExtractedOutput json.RawMessage `json:"extracted_output"`
	// Reads are the item keys the grade read, when the request asked.
	Reads []string `json:"reads"`
	// Pre marks a result the preprocessor caused (it raised, returned what
	// is not a row, or ran past its time); class preprocessed_out is a row
	// it dropped.
	Pre bool `json:"pre"`
	// T is how long the request took in the worker, in milliseconds.
	T float64 `json:"t"`
	// Replace is set when the worker asks to be replaced after this
	// request: its memory grew, or its CPU time nears the limit.
	Replace string `json:"replace"`
	// Leftover is set when a child process of the grader was still running
	// after the case: the process group is then killed with the worker.
	Leftover bool `json:"leftover"`
	// Ctx is set in "ready" when the grader takes ctx (model calls).
	Ctx bool `json:"ctx"`
	// Died is set with class "died" (isolation case): the forked child ended
	// without a result, and the worker reports how.
	Died *struct {
		Signal   int   `json:"signal"`
		Status   int   `json:"status"`
		MaxRSSKB int64 `json:"maxrss_kb"`
	} `json:"died"`
}

// workerClasses are the classes the worker may report; anything else is a
// protocol failure.
var workerClasses = map[string]grading.Class{
	"ok":                grading.ClassOK,
	"invalid_return":    grading.ClassInvalidReturn,
	"grader_exception":  grading.ClassGraderException,
	"memory_exceeded":   grading.ClassMemoryExceeded,
	"sandbox_violation": grading.ClassSandboxViolation,
	// Only the preprocessor's call, which the worker stops itself.
	"timeout": grading.ClassTimeout,
}

// loadError is what a "load_error" answer to init reports, with output,
// what the process wrote while it loaded.
func (r *response) loadError(output string) *LoadError {
	return &LoadError{
		Err:        grading.CaseError{Class: r.class(), Type: r.Type, Message: r.Message, Line: r.Line},
		Output:     output,
		Preprocess: r.Pre,
	}
}

func (r *response) class() grading.Class {
	if c, ok := workerClasses[r.Class]; ok {
		return c
	}
	return grading.ClassWorkerCrash
}

// recycle says whether the process must be replaced after this response.
// Results the grader returned (ok, invalid_return) and plain exceptions
// leave it trusted; a memory error (a fragmented heap), a sandbox refusal,
// a dead child (isolation case), a child process left running, or the
// worker's own request (memory growth, CPU time) do not.
func (r *response) recycle() bool {
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
	case "grader_exception", "invalid_return", omittedPreprocessedOut:
		return false
	}
	return true
}

func parseResponse(line []byte, id int64) (*response, error) {
	var r response
	if parseCommon(line, &r) {
		if r.ID != id {
			return nil, fmt.Errorf("worker response for request %d, want %d", r.ID, id)
		}
		return &r, nil
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return nil, fmt.Errorf("worker response: %w", err)
	}
	if r.Op == "bad_request" || r.Op == "ended" {
		// The worker could not read the request, or (a zygote) reports
		// that its child ended: neither has an id to echo.
		return &r, nil
	}
	if r.ID != id {
		return nil, fmt.Errorf("worker response for request %d, want %d", r.ID, id)
	}
	return &r, nil
}

// parseCommon reads the common answer, one score and nothing printed, in
// the exact form worker.py writes it:
//
//	{"id":N,"t":T,"class":"ok","scores":{"<metric>":F}}
//
// without encoding/json's reflection. Any other line is left to
// json.Unmarshal.
func parseCommon(line []byte, r *response) bool {
	rest, ok := bytes.CutPrefix(line, []byte(`{"id":`))
	if !ok {
		return false
	}
	var id, t, score []byte
	if id, rest, ok = bytes.Cut(rest, []byte(`,"t":`)); !ok {
		return false
	}
	if t, rest, ok = bytes.Cut(rest, []byte(`,"class":"ok","scores":{"`)); !ok {
		return false
	}
	// A metric with a quote or backslash in its name is left to the
	// general parser.
	q := bytes.IndexByte(rest, '"')
	if q < 0 || bytes.IndexByte(rest[:q], '\\') >= 0 || !bytes.HasPrefix(rest[q:], []byte(`":`)) || !bytes.HasSuffix(rest, []byte("}}")) {
		return false
	}
	metric := rest[:q]
	score = rest[q+2 : len(rest)-2]
	n, err1 := strconv.ParseInt(string(id), 10, 64)
	d, err2 := strconv.ParseFloat(string(t), 64)
	f, err3 := strconv.ParseFloat(string(score), 64)
	if err1 != nil || err2 != nil || err3 != nil || !utf8.Valid(metric) {
		return false
	}
	*r = response{ID: n, T: d, Class: "ok", Scores: map[string]float64{string(metric): f}}
	return true
}

// tracebackLine finds the grader line in a faulthandler dump on fd 2 (written
// on a fatal signal or just before a timeout). Faulthandler prints the most
// recent call first, so the first frame in the grader's file is the line.
func tracebackLine(output []byte, sourceName string) int {
	re := regexp.MustCompile(`File "` + regexp.QuoteMeta(sourceName) + `", line (\d+)`)
	m := re.FindSubmatch(output)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// aheadBytes bounds the bytes of the requests feed has queued in its
// channel and no process has taken: rows of a megabyte wait for room
// instead of filling memory cap(out) at a time. aheadPoll is how often a
// feed held back by it looks again.
const (
	aheadBytes = 4 << 20
	aheadPoll  = 100 * time.Microsecond
)

// aheadQueue tells how many bytes of feed's requests are still in its
// channel: the channel is first in, first out, and only feed sends on it,
// so the len(out) requests sent last are the ones still there.
type aheadQueue struct {
	sizes []int // of the requests sent and maybe still queued, oldest first
	bytes int   // their sum
}

// queued is the bytes still in a channel that holds inChannel requests.
func (q *aheadQueue) queued(inChannel int) int {
	taken := len(q.sizes) - inChannel
	for _, n := range q.sizes[:taken] {
		q.bytes -= n
	}
	q.sizes = q.sizes[taken:]
	return q.bytes
}

func (q *aheadQueue) sent(n int) {
	q.sizes = append(q.sizes, n)
	q.bytes += n
}

// feed pulls tasks from next and turns them into requests, batch tasks at a
// time under the batch contract. It closes out when next is done, and
// reports next's error through fail. It keeps at most cap(out) requests
// queued, and no more than aheadBytes of them unless the channel is empty.
func feed(ctx context.Context, shape requestShape, next func() (grading.Task, bool, error), batch int, out chan<- *request, fail func(error)) {
	defer close(out)
	seq := 0
	var q aheadQueue
	var poll *time.Ticker
	defer func() {
		if poll != nil {
			poll.Stop()
		}
	}()
	send := func(r *request) bool {
		for n := len(out); n > 0 && q.queued(n)+len(r.line) > aheadBytes; n = len(out) {
			if poll == nil {
				poll = time.NewTicker(aheadPoll)
			}
			select {
			case <-poll.C:
			case <-ctx.Done():
				return false
			}
		}
		select {
		case out <- r:
			q.sent(len(r.line))
			return true
		case <-ctx.Done():
			return false
		}
	}
	var pending []grading.Task
	flush := func() bool {
		if len(pending) == 0 {
			return true
		}
		r, err := batchRequest(seq, pending)
		if err != nil {
			fail(err)
			return false
		}
		seq += len(pending)
		pending = pending[:0:0]
		return send(r)
	}
	for ctx.Err() == nil {
		t, ok, err := next()
		if err != nil {
			fail(err)
			return
		}
		if !ok {
			flush()
			return
		}
		if shape.contract != ContractBatch {
			if !send(taskRequest(seq, t, shape.caseIDs)) {
				return
			}
			seq++
			continue
		}
		pending = append(pending, t)
		if len(pending) >= batch && !flush() {
			return
		}
	}
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

// merge appends what o kept and counts what o cut.
func (b *bounded) merge(o bounded) {
	b.write(o.buf)
	b.cut += o.cut
}

// output joins what Python captured with what reached fd 1/2, within limit.
func (r *response) output(fd bounded, limit int) string {
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

// DefaultStreamBatch is the grade_batch size of Stream when
// Config.BatchSize is 0.
const DefaultStreamBatch = 64

// slotPool is what streamOn needs of a pool: a slot taken and given
// back, and a slot serving requests until they run out.
type slotPool[S any] interface {
	acquire(ctx context.Context) (S, error)
	release(S)
	// loading returns a channel closed once the process started ahead for
	// s (Config.StartAll) has loaded, or nil when s has its process or
	// starts one when a request needs it.
	loading(S) <-chan struct{}
	// cold says that s has no process and none is loading.
	cold(S) bool
	serve(ctx context.Context, s S, first *request, reqs <-chan *request, deliver func(int, grading.Outcome)) error
}

// streamOn grades tasks as next produces them on up to workers slots of
// pool, a feeder keeping ahead requests ready, and hands each outcome to
// emit (one call at a time). next runs in a goroutine of its own; when the
// stream stops early (an error, ctx ending) it is not waited for, and not
// called again.
func streamOn[S any](ctx context.Context, pool slotPool[S], shape requestShape, workers, ahead, batch int, next func() (grading.Task, bool, error), emit func(seq int, o grading.Outcome) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	reqs := make(chan *request, ahead)
	// fed is closed once every request is queued.
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		feed(ctx, shape, next, batch, reqs, cancel)
	}()

	var emitMu sync.Mutex
	deliver := func(seq int, o grading.Outcome) {
		emitMu.Lock()
		defer emitMu.Unlock()
		if ctx.Err() != nil {
			return
		}
		if err := emit(seq, o); err != nil {
			cancel(err)
		}
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			s, err := pool.acquire(ctx)
			if err != nil {
				return // ctx ended; the stream reports its cause
			}
			defer pool.release(s)
			if ready := pool.loading(s); ready != nil {
				// Its process is still loading: the slots that are up take
				// the requests meanwhile, and when all are queued first,
				// they finish the stream without it.
				select {
				case <-ready:
				case <-fed:
					return
				case <-ctx.Done():
					return
				}
			} else if pool.cold(s) && !backlog(ctx, reqs, fed) {
				// The stream was short enough for the processes already
				// up: starting one more would only have delayed its end.
				return
			}
			var first *request
			select {
			case r, ok := <-reqs:
				if !ok {
					return
				}
				first = r
			case <-ctx.Done():
				return
			}
			if err := pool.serve(ctx, s, first, reqs, deliver); err != nil {
				cancel(err)
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}

// startWait is how long requests must have been waiting, with every
// process that is up busy, before a slot without a process starts one for
// them (backlog). A fast grader's process takes a short stream whole in
// less time; a process's start (35 ms or more) is far longer.
const startWait = 5 * time.Millisecond

// backlogPoll is how often backlog looks at the queue: a short stream's
// end is noticed within it.
const backlogPoll = startWait / 20

// backlog waits until requests have been queued without pause for
// startWait, and says true; it says false when every request was queued
// and none is left (or ctx ended). A cold slot starts a process only for
// such a backlog: a short stream of a fast grader is over before a second
// process could load, and a slow grader's queue stays long enough.
func backlog(ctx context.Context, reqs <-chan *request, fed <-chan struct{}) bool {
	tick := time.NewTicker(backlogPoll)
	defer tick.Stop()
	var since time.Time // when the queue last stopped being empty
	for {
		switch {
		case len(reqs) > 0:
			if since.IsZero() {
				since = time.Now()
			} else if time.Since(since) >= startWait {
				return true
			}
		case isClosed(fed) && len(reqs) == 0:
			return false
		default:
			since = time.Time{}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return false
		}
	}
}

// isClosed says whether ch is closed, without waiting.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// gradeTasks grades tasks through stream and returns one outcome per task,
// in order. Under the batch contract they go into batches of batchSize, or
// one batch when it is 0.
func gradeTasks(tasks []grading.Task, batchSize int, stream func(next func() (grading.Task, bool, error), emit func(int, grading.Outcome) error, batch int) error) ([]grading.Outcome, error) {
	outcomes := make([]grading.Outcome, len(tasks))
	if len(tasks) == 0 {
		return outcomes, nil
	}
	batch := batchSize
	if batch <= 0 {
		batch = len(tasks)
	}
	i := 0
	next := func() (grading.Task, bool, error) {
		if i >= len(tasks) {
			return grading.Task{}, false, nil
		}
		i++
		return tasks[i-1], true, nil
	}
	emit := func(seq int, o grading.Outcome) error {
		outcomes[seq] = o
		return nil
	}
	if err := stream(next, emit, batch); err != nil {
		return nil, err
	}
	return outcomes, nil
}

// resultOutcome checks one classified result, as both pools read it. The
// worker classifies, but Go checks an ok result again: a process the
// grader runs in is not trusted to say a score is valid.
func resultOutcome(r *response, metric, output string, dur float64) grading.Outcome {
	o := grading.Outcome{Class: r.class(), Output: output, DurationMS: dur, Reads: r.Reads}
	msg := r.Message
	if o.Class == grading.ClassOK {
		score, ok := r.Scores[metric]
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
			o.DroppedScores = droppedScores(r)
			o.ExtractedOutput = extractedOutput(r)
			return o
		}
		o.Class = grading.ClassWorkerCrash
		msg = "worker reported ok without a valid " + strconv.Quote(metric)
	}
	if o.Class == grading.ClassWorkerCrash && msg == "" {
		msg = "worker sent an unknown class " + strconv.Quote(r.Class)
	}
	o.Error = &grading.CaseError{Class: o.Class, Type: r.Type, Message: msg, Line: r.Line}
	return o
}
