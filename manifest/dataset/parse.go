package dataset

import (
	"runtime"

	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/input"
)

// The reader parses the dataset on more than one core: Next reads lines
// ahead, in batches, and each batch is parsed (scanned, its fields read
// and checked) on a goroutine of its own while the rows before it are
// joined and folded, which stays on the caller's goroutine and in file
// order. A batch is folded only once parsed, row by row in line order, so
// every finding and input error comes in the order of a serial read.

// parseState is what parsing a line reuses from one line to the next: one
// a batch, never shared by two goroutines.
type parseState struct {
	keys  keyTable
	names internTable
}

// lineBatch is dataset lines read ahead: their bytes end to end, and once
// done is closed, what parsing each gave.
type lineBatch struct {
	data  []byte
	lines []batchLine
	rows  []parsedLine
	st    parseState
	done  chan struct{}
}

type batchLine struct {
	end  int   // the line is data[previous end:end]
	n    int   // its number in the file
	over int64 // a line too long to keep: its length, and no bytes
}

type parsedLine struct {
	row caseRow
	err error
}

// Batches: at most batchLines lines or batchBytes bytes (a longer line
// goes alone), and a batch in flight per core plus one.
const (
	batchLines = 256
	batchBytes = 256 << 10
)

func parseAhead() int { return runtime.GOMAXPROCS(0) + 1 }

// nextParsed returns the next parsed line of the dataset, in file order;
// ok is false at the end (r.cases.err then tells a read error).
func (r *Reader) nextParsed() (bl batchLine, p *parsedLine, ok bool) {
	for {
		if b := r.cur; b != nil && r.curAt < len(b.lines) {
			k := r.curAt
			r.curAt++
			return b.lines[k], &b.rows[k], true
		}
		if r.cur != nil {
			if cap(r.cur.data) > 4*batchBytes {
				r.cur.data = nil // it held a long line: not kept for the next batch
			}
			r.free = append(r.free, r.cur)
			r.cur = nil
		}
		r.readAhead()
		if len(r.ahead) == 0 {
			return batchLine{}, nil, false
		}
		r.cur, r.curAt = r.ahead[0], 0
		r.ahead = r.ahead[1:]
		<-r.cur.done
		r.readAhead()
	}
}

// readAhead reads batches of lines and starts parsing them until
// parseAhead are in flight or the file is read.
func (r *Reader) readAhead() {
	for !r.linesDone && len(r.ahead) < parseAhead() {
		var b *lineBatch
		if n := len(r.free); n > 0 {
			b, r.free = r.free[n-1], r.free[:n-1]
			b.data, b.lines = b.data[:0], b.lines[:0]
		} else {
			b = &lineBatch{}
		}
		for len(b.lines) < batchLines && len(b.data) < batchBytes {
			line, n, _, ok := r.cases.next()
			if !ok {
				r.linesDone = true
				break
			}
			if r.cases.over > 0 {
				b.lines = append(b.lines, batchLine{end: len(b.data), n: n, over: r.cases.over})
				continue
			}
			b.data = append(b.data, line...)
			b.lines = append(b.lines, batchLine{end: len(b.data), n: n})
		}
		if len(b.lines) == 0 {
			r.free = append(r.free, b)
			return
		}
		b.done = make(chan struct{})
		go r.parseBatch(b)
		r.ahead = append(r.ahead, b)
	}
}

// parseBatch parses every line of b that was kept.
func (r *Reader) parseBatch(b *lineBatch) {
	defer close(b.done)
	if cap(b.rows) < len(b.lines) {
		b.rows = make([]parsedLine, len(b.lines))
	} else {
		b.rows = b.rows[:len(b.lines)]
		clear(b.rows)
	}
	start := 0
	for k, bl := range b.lines {
		line := b.data[start:bl.end]
		start = bl.end
		if bl.over > 0 {
			continue
		}
		b.rows[k].row, b.rows[k].err = r.parseCase(&b.st, line, bl.n)
	}
}

// tooLong is the input error of a line the reader skipped as too long.
func (r *Reader) tooLong(bl batchLine) error {
	err := input.LineTooLong(r.file, bl.over, r.cases.max)
	return &manifest.Error{File: r.file, Line: bl.n, Msg: err.Msg, Err: err}
}
