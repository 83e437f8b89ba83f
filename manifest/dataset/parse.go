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

// parsedLine is what parsing a dataset line gave.
type parsedLine struct {
	row caseRow
	err error
}

// readAhead reads a file's lines ahead, in batches, and parses each batch
// on a goroutine of its own, handing the results out in file order: the
// dataset's reader and the samples file's use one each. S is what parsing
// reuses within a batch (one a batch, never shared by two goroutines), T
// what parsing one line gives.
type readAhead[S, T any] struct {
	lines *lineReader
	parse func(st *S, line []byte, l aheadLine) T
	// ahead in file order, cur the batch being handed out, free the
	// batches to reuse.
	ahead, free []*aheadBatch[S, T]
	cur         *aheadBatch[S, T]
	curAt       int
	done        bool
}

// aheadBatch is lines read ahead: their bytes end to end, and once done is
// closed, what parsing each gave.
type aheadBatch[S, T any] struct {
	data  []byte
	lines []aheadLine
	out   []T
	st    S
	done  chan struct{}
}

type aheadLine struct {
	end  int   // the line is data[previous end:end]
	n    int   // its number in the file
	off  int64 // its offset in the file
	over int64 // a line too long to keep: its length, and no bytes (nor a parse)
}

// Batches: at most batchLines lines or batchBytes bytes (a longer line
// goes alone), and a batch in flight per core plus one.
const (
	batchLines = 256
	batchBytes = 256 << 10
)

func parseAhead() int { return runtime.GOMAXPROCS(0) + 1 }

func newReadAhead[S, T any](lines *lineReader, parse func(st *S, line []byte, l aheadLine) T) *readAhead[S, T] {
	return &readAhead[S, T]{lines: lines, parse: parse}
}

// next returns the next line and what parsing it gave, in file order; ok
// is false at the end (the lineReader's err then tells a read error). What
// T holds of the line's bytes stays valid until the next batch's first
// line is taken.
func (a *readAhead[S, T]) next() (l aheadLine, p *T, ok bool) {
	for {
		if b := a.cur; b != nil && a.curAt < len(b.lines) {
			k := a.curAt
			a.curAt++
			return b.lines[k], &b.out[k], true
		}
		if a.cur != nil {
			if cap(a.cur.data) > 4*batchBytes {
				a.cur.data = nil // it held a long line: not kept for the next batch
			}
			a.free = append(a.free, a.cur)
			a.cur = nil
		}
		a.fill()
		if len(a.ahead) == 0 {
			return aheadLine{}, nil, false
		}
		a.cur, a.curAt = a.ahead[0], 0
		a.ahead = a.ahead[1:]
		<-a.cur.done
		a.fill()
	}
}

// fill reads batches of lines and starts parsing them until parseAhead are
// in flight or the file is read.
func (a *readAhead[S, T]) fill() {
	for !a.done && len(a.ahead) < parseAhead() {
		var b *aheadBatch[S, T]
		if n := len(a.free); n > 0 {
			b, a.free = a.free[n-1], a.free[:n-1]
			b.data, b.lines = b.data[:0], b.lines[:0]
		} else {
			b = &aheadBatch[S, T]{}
		}
		for len(b.lines) < batchLines && len(b.data) < batchBytes {
			line, n, off, ok := a.lines.next()
			if !ok {
				a.done = true
				break
			}
			if a.lines.over > 0 {
				b.lines = append(b.lines, aheadLine{end: len(b.data), n: n, over: a.lines.over})
				continue
			}
			b.data = append(b.data, line...)
			b.lines = append(b.lines, aheadLine{end: len(b.data), n: n, off: off})
		}
		if len(b.lines) == 0 {
			a.free = append(a.free, b)
			return
		}
		b.done = make(chan struct{})
		go a.parseBatch(b)
		a.ahead = append(a.ahead, b)
	}
}

// parseBatch parses every line of b that was kept.
func (a *readAhead[S, T]) parseBatch(b *aheadBatch[S, T]) {
	defer close(b.done)
	if cap(b.out) < len(b.lines) {
		b.out = make([]T, len(b.lines))
	} else {
		b.out = b.out[:len(b.lines)]
		clear(b.out)
	}
	start := 0
	for k, l := range b.lines {
		// The line's capacity ends with it: a parse that appends to it
		// cannot write over the next line.
		line := b.data[start:l.end:l.end]
		start = l.end
		if l.over > 0 {
			continue
		}
		b.out[k] = a.parse(&b.st, line, l)
	}
}

// tooLong is the input error of a line of file that was skipped as longer
// than max.
func tooLong(file string, l aheadLine, max int64) error {
	err := input.LineTooLong(file, l.over, max)
	return &manifest.Error{File: file, Line: l.n, Msg: err.Msg, Err: err}
}
