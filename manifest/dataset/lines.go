package dataset

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// lineReader yields the non-blank lines of a JSON Lines stream with their
// 1-based numbers and byte offsets, tolerating CRLF endings and a UTF-8 byte
// order mark. A line's bytes are valid until the next call.
type lineReader struct {
	br    *bufio.Reader
	n     int   // number of the last line read
	off   int64 // offset of the next line
	long  []byte
	first bool
	err   error // a read error other than io.EOF
	// max is the longest line next holds (input.Line's limit); a longer one
	// is read past without being kept, and next returns it as a nil line
	// with over set to its length.
	max  int64
	over int64
}

func newLineReader(r io.Reader, max int64) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 256<<10), first: true, max: max}
}

// next returns the next non-blank line, trimmed, and the offset of its
// first (untrimmed) byte; ok is false at the end or on a read error.
func (l *lineReader) next() (line []byte, n int, off int64, ok bool) {
	for {
		l.over = 0
		raw, err := l.br.ReadSlice('\n')
		total := int64(len(raw))
		if errors.Is(err, bufio.ErrBufferFull) {
			l.long = append(l.long[:0], raw...)
			for errors.Is(err, bufio.ErrBufferFull) {
				raw, err = l.br.ReadSlice('\n')
				total += int64(len(raw))
				if total <= l.max {
					l.long = append(l.long, raw...)
				}
			}
			raw = l.long
		}
		if total > l.max {
			// Past the limit nothing more of the line is kept: a 1 GiB
			// line costs the reader's buffer and the limit, not a
			// gigabyte.
			if cap(l.long) > 4<<20 {
				l.long = nil
			}
			if err != nil && !errors.Is(err, io.EOF) {
				l.err = err
			}
			l.n++
			l.first = false
			l.over = total
			l.off += total
			return nil, l.n, l.off - total, true
		}
		if len(raw) == 0 && err != nil {
			if !errors.Is(err, io.EOF) {
				l.err = err
			}
			return nil, 0, 0, false
		}
		l.n++
		start := l.off
		l.off += int64(len(raw))
		if l.first {
			l.first = false
			if trimmed, ok := bytes.CutPrefix(raw, []byte("\xef\xbb\xbf")); ok {
				raw = trimmed
				start += 3
			}
		}
		line = bytes.TrimSpace(raw)
		if len(line) > 0 {
			// line is a subslice of raw: the difference of capacities is
			// where it starts.
			return line, l.n, start + int64(cap(raw)-cap(line)), true
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				l.err = err
			}
			return nil, 0, 0, false
		}
	}
}
