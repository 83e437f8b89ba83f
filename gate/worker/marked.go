package worker

import (
	"bytes"
	"strconv"
)

// queue is a first-in, first-out list kept in one slice: buf[head:] are
// the items, oldest first. Taking items moves head instead of shifting the
// rest or cutting the slice from the front (which either costs the queue's
// length each time or reallocates every few hundred items); the items move
// to the front only when the slice is full and the taken part is the
// larger, so the slice stays within about twice the most it held.
type queue[T any] struct {
	buf  []T
	head int
	// keep: once empty, a slice of more than keep items is let go, so a
	// burst does not stay behind for the rest of a session. 0: kept at
	// any size.
	keep int
}

// len is how many items are queued.
func (q *queue[T]) len() int { return len(q.buf) - q.head }

// live is the queued items, oldest first; valid until the next push.
func (q *queue[T]) live() []T { return q.buf[q.head:] }

// push adds items at the end.
func (q *queue[T]) push(v ...T) {
	if q.head > 0 && len(q.buf)+len(v) > cap(q.buf) && q.head >= q.len() {
		k := copy(q.buf, q.buf[q.head:])
		clear(q.buf[k:])
		q.buf, q.head = q.buf[:k], 0
	}
	q.buf = append(q.buf, v...)
}

// drop takes the oldest n items, clearing their slots so what they point
// to can go.
func (q *queue[T]) drop(n int) {
	clear(q.buf[q.head : q.head+n])
	q.head += n
	if q.head == len(q.buf) {
		q.reset()
	}
}

// reset empties the queue.
func (q *queue[T]) reset() {
	if q.keep > 0 && cap(q.buf) > q.keep {
		q.buf = nil
	}
	clear(q.buf)
	q.buf, q.head = q.buf[:0], 0
}

// endMarker starts the line worker.py writes to fd 2 after each request,
// before its response: "\x00gradegate-end:<request id>\n".
var endMarker = []byte("\x00gradegate-end:")

// segment is the fd 1/2 output of one request, closed by its end marker.
type segment struct {
	id  int64
	out bounded
}

// markedStream is the fd 1/2 stream of one process split at worker.py's
// end markers. Each segment keeps at most limit bytes and counts the rest.
//
// The grader writes to the same descriptors, so it can write markers of
// its own: a million of them, each after limit bytes of text, would be a
// million segments held in gradegate until the case's time ran out. Two
// bounds hold whatever the grader writes: at most maxSegs segments wait
// (one more merges the two oldest, so whoever claims either takes both, as
// it would have anyway), and at most budget bytes are kept over all of
// them (more are cut and counted, like bytes over limit).
type markedStream struct {
	limit   int
	maxSegs int
	budget  int
	cur     bounded // since the last marker
	segs    queue[segment]
	held    int    // bytes kept in cur and segs
	carry   []byte // a marker cut in two by a read
}

func newMarkedStream(limit, maxSegs int) markedStream {
	return markedStream{limit: limit, maxSegs: maxSegs, budget: max(markedBudget, 4*limit), cur: bounded{limit: limit}}
}

// markedBudget is the most bytes of not yet claimed output a process's
// stream keeps (at least four segments' worth): 256 segments of the default
// 8 KiB, more than a window's cases print unless they print to fill it.
const markedBudget = 2 << 20

// write adds output to the current segment, within the budget.
func (m *markedStream) write(p []byte) {
	if room := m.budget - m.held; room < len(p) {
		m.cur.cut += len(p) - max(room, 0)
		p = p[:max(room, 0)]
	}
	n := len(m.cur.buf)
	m.cur.write(p)
	m.held += len(m.cur.buf) - n
}

// close ends the current segment at request id's marker.
func (m *markedStream) close(id int64) {
	if m.segs.len() >= m.maxSegs {
		// The oldest goes into the next.
		live := m.segs.live()
		next := bounded{limit: m.limit}
		next.merge(live[0].out)
		next.merge(live[1].out)
		m.held += len(next.buf) - len(live[0].out.buf) - len(live[1].out.buf)
		live[1].out = next
		m.segs.drop(1)
	}
	m.segs.push(segment{id: id, out: m.cur})
	m.cur = bounded{limit: m.limit}
}

// scan splits bytes read from fd 1/2 at the end markers.
func (m *markedStream) scan(data []byte) {
	if len(m.carry) > 0 {
		data = append(m.carry, data...)
		m.carry = nil
	}
	for len(data) > 0 {
		i := bytes.Index(data, endMarker)
		if i < 0 {
			// Keep back a tail that may be the start of a marker.
			k := 0
			for n := min(len(endMarker)-1, len(data)); n > 0; n-- {
				if bytes.HasPrefix(endMarker, data[len(data)-n:]) {
					k = n
					break
				}
			}
			m.write(data[:len(data)-k])
			if k > 0 {
				m.carry = bytes.Clone(data[len(data)-k:])
			}
			return
		}
		m.write(data[:i])
		rest := data[i+len(endMarker):]
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 && len(rest) < 21 {
			m.carry = bytes.Clone(data[i:])
			return
		}
		var id int64
		var err error
		if nl >= 0 {
			id, err = strconv.ParseInt(string(rest[:nl]), 10, 64)
		}
		if nl < 0 || err != nil {
			// Not a marker the worker wrote: it is output.
			m.write(data[i : i+1])
			data = data[i+1:]
			continue
		}
		m.close(id)
		data = rest[nl+1:]
	}
}

// has reports whether the marker of request id has come.
func (m *markedStream) has(id int64) bool {
	for _, sg := range m.segs.live() {
		if sg.id == id {
			return true
		}
	}
	return false
}

// take appends to out the output of request id: everything up to its end
// marker, or everything so far when the marker has not come (the process
// died or was stopped in the middle of it; id -1: it is gone).
//
// A window's answers usually arrive together, so up to a window of
// segments wait and are claimed first to last: each claim moves the
// queue's head past its segment.
func (m *markedStream) take(id int64, out *bounded) {
	for k, sg := range m.segs.live() {
		out.merge(sg.out)
		m.held -= len(sg.out.buf)
		if sg.id == id {
			m.segs.drop(k + 1)
			return
		}
	}
	m.segs.reset()
	out.merge(m.cur)
	out.write(m.carry)
	m.carry = nil
	m.cur.reset()
	m.held = 0
}

// forget drops output not yet claimed.
func (m *markedStream) forget() {
	m.segs.reset()
	m.cur.reset()
	m.carry = nil
	m.held = 0
}
