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
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 256<<10), first: true}
}

// next returns the next non-blank line, trimmed, and the offset of its
// first (untrimmed) byte; ok is false at the end or on a read error.
func (l *lineReader) next() (line []byte, n int, off int64, ok bool) {
	for {
		raw, err := l.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			l.long = append(l.long[:0], raw...)
			for errors.Is(err, bufio.ErrBufferFull) {
				raw, err = l.br.ReadSlice('\n')
				l.long = append(l.long, raw...)
			}
			raw = l.long
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
