//go:build linux

package worker

// Model calls from Python (ctx.responses_create, ctx.embeddings_create):
// worker.py writes each call as one line to fd 5, and reads the answer
// from fd 6. The gate, not the grader, holds the key and the budget: a
// call is made by Config.Broker, counted against Config.MaxModelCalls for
// the request (one case, or one batch) it belongs to, and recorded with the
// request's outcome.
//
// These pipes are apart from the request and response pipes (fd 3, 4), so
// the window of requests queued ahead on fd 3 never stands between a call
// and its answer.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/gradegate/gradegate/gate/grading"
)

// maxCallLine bounds one call line from the worker: the grader's arguments.
const maxCallLine = 8 << 20

// callMsg is one line from the worker's fd 5.
type callMsg struct {
	ID   int64           `json:"id"`   // the request (case or batch) it belongs to
	Kind string          `json:"kind"` // responses | embeddings
	Args json.RawMessage `json:"args"`
}

// answerMsg is one line to the worker's fd 6.
type answerMsg struct {
	OK    json.RawMessage `json:"ok,omitempty"`
	Error *answerError    `json:"error,omitempty"`
}

type answerError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	// Fatal: the gate failed; the run fails whatever the grader does.
	Fatal bool `json:"fatal,omitempty"`
}

// callServer serves one process's calls, from the time it starts until it
// is stopped.
type callServer struct {
	broker grading.ModelBroker
	max    int
	in     *os.File // the gate's end of fd 5
	out    *os.File // the gate's end of fd 6
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	execs map[int64]*execution
	// broken is set when the process broke the call protocol: every
	// request after it fails the run.
	broken error
}

// execution is what one request's calls did.
type execution struct {
	n     int // calls asked for, the refused ones included
	calls []grading.ModelCall
	fatal error
}

// callPipes are both ends of the two call pipes; child holds the worker's
// ends, in descriptor order (fd 5, fd 6).
type callPipes struct {
	in, out *os.File
	child   [2]*os.File
}

func newCallPipes() (*callPipes, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("call pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("call pipe: %w", err)
	}
	return &callPipes{in: inR, out: outW, child: [2]*os.File{inW, outR}}, nil
}

func (c *callPipes) closeChild() {
	c.child[0].Close()
	c.child[1].Close()
}

func (c *callPipes) closeAll() {
	c.closeChild()
	c.in.Close()
	c.out.Close()
}

// serveCalls starts serving the calls of a process that has the child
// ends of pipes.
func serveCalls(pipes *callPipes, broker grading.ModelBroker, maxCalls int) *callServer {
	ctx, cancel := context.WithCancel(context.Background())
	cs := &callServer{broker: broker, max: maxCalls, in: pipes.in, out: pipes.out, cancel: cancel,
		done: make(chan struct{}), execs: map[int64]*execution{}}
	go cs.run(ctx)
	return cs
}

// open says that request id was sent to the process: calls for it are
// served from now on.
func (cs *callServer) open(id int64) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.execs[id] == nil {
		cs.execs[id] = &execution{}
	}
}

// take ends request id and returns its calls; err is set when the gate
// failed making one of them (the run fails), or the process broke the call
// protocol.
func (cs *callServer) take(id int64) ([]grading.ModelCall, error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	e := cs.execs[id]
	delete(cs.execs, id)
	if cs.broken != nil {
		return nil, cs.broken
	}
	if e == nil {
		return nil, nil
	}
	return e.calls, e.fatal
}

// stop ends the server: a call in flight is cancelled.
func (cs *callServer) stop() {
	cs.cancel()
	cs.in.Close()
	cs.out.Close()
	<-cs.done
}

func (cs *callServer) run(ctx context.Context) {
	defer close(cs.done)
	r := bufio.NewReaderSize(cs.in, 64<<10)
	for {
		line, err := readCallLine(r)
		if err != nil {
			if !errors.Is(err, errEOF) && ctx.Err() == nil {
				cs.fail(fmt.Errorf("worker: the grader process broke the model call protocol: %w", err))
			}
			return
		}
		a := cs.serve(ctx, line)
		b, err := json.Marshal(a)
		if err != nil {
			cs.fail(fmt.Errorf("worker: encoding a model call's answer: %w", err))
			return
		}
		if _, err := cs.out.Write(append(b, '\n')); err != nil {
			return // the process is gone
		}
	}
}

var errEOF = errors.New("EOF")

// readCallLine reads one line, at most maxCallLine bytes.
func readCallLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxCallLine {
			return nil, fmt.Errorf("a call of over %d bytes", maxCallLine)
		}
		if err == nil {
			return line, nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(line) == 0 {
			return nil, errEOF
		}
		return nil, fmt.Errorf("a call cut short: %w", err)
	}
}

func (cs *callServer) fail(err error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.broken == nil {
		cs.broken = err
	}
}

// serve makes one call, or refuses it.
func (cs *callServer) serve(ctx context.Context, line []byte) answerMsg {
	var m callMsg
	if err := json.Unmarshal(line, &m); err != nil {
		return refusal("ModelCallError", "the call could not be read: "+err.Error())
	}
	cs.mu.Lock()
	e := cs.execs[m.ID]
	var over bool
	if e != nil {
		e.n++
		over = e.n > cs.max
	}
	cs.mu.Unlock()
	if e == nil {
		// Not a request this process was sent (a grader writing its own
		// lines to fd 5): no budget to spend.
		return refusal("ModelCallError", "the call names no request of this process")
	}
	if m.Kind != "responses" && m.Kind != "embeddings" {
		return refusal("ModelCallError", fmt.Sprintf("unknown call kind %q", m.Kind))
	}
	if over {
		msg := fmt.Sprintf("grader.max_model_calls (%d) allows no more model calls for this execution", cs.max)
		cs.record(m.ID, grading.ModelCall{Kind: m.Kind, Error: "ModelCallBudgetExceeded: " + msg}, nil)
		return refusal("ModelCallBudgetExceeded", msg)
	}
	body, call, err := cs.broker.Call(ctx, m.Kind, m.Args)
	var mce *grading.ModelCallError
	switch {
	case errors.As(err, &mce):
		call.Kind = m.Kind
		call.Error = mce.Error()
		cs.record(m.ID, call, nil)
		return refusal(mce.Type, mce.Message)
	case err != nil:
		cs.record(m.ID, grading.ModelCall{Kind: m.Kind, Error: err.Error()}, err)
		return answerMsg{Error: &answerError{Type: "GateFailure", Message: "the gate could not make the model call: " + err.Error(), Fatal: true}}
	}
	cs.record(m.ID, call, nil)
	return answerMsg{OK: body}
}

func refusal(typ, msg string) answerMsg {
	return answerMsg{Error: &answerError{Type: typ, Message: msg}}
}

// record adds a call to request id, and the gate's failure making it.
func (cs *callServer) record(id int64, call grading.ModelCall, fatal error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	e := cs.execs[id]
	if e == nil {
		return
	}
	e.calls = append(e.calls, call)
	if fatal != nil && e.fatal == nil {
		e.fatal = fmt.Errorf("a model call of the grader: %w", fatal)
	}
}
