package dataset

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// setSpill keeps the shingle set of every row signRows signs, in files
// of its own (one a worker, each in row order), so that the candidates'
// sets are read back from there instead of from the dataset, which would
// be parsed, split and shingled a second time (a second of CPU a million
// rows). A file holds records of a row's index (as signRows numbers it,
// before the rows without compared text are dropped), its set's length,
// then its shingles, 4 bytes each, little-endian. The files are removed
// as soon as they are made: nothing is left on disk whatever ends the
// process. They hold about 4 bytes a word of compared text; where one
// cannot be made or written, the screen reads the dataset again instead.
type setSpill struct {
	parts []*spillPart
}

type spillPart struct {
	f   *os.File
	w   *bufio.Writer
	buf []byte
	err error
}

// newSetSpill makes workers files in dir ("" for the system's temporary
// directory).
func newSetSpill(dir string, workers int) (*setSpill, error) {
	sp := &setSpill{}
	for range workers {
		f, err := os.CreateTemp(dir, "gradegate-screen-*")
		if err == nil {
			err = os.Remove(f.Name())
		}
		if err != nil {
			if f != nil {
				f.Close()
			}
			sp.close()
			return nil, fmt.Errorf("near-duplicate screen: %w", err)
		}
		sp.parts = append(sp.parts, &spillPart{f: f, w: bufio.NewWriterSize(f, 64<<10)})
	}
	return sp, nil
}

// begin starts a row's record; shingles adds a compared text's shingles
// to it (as the screen compares them: any order, repeats allowed), and end
// writes it as row w's.
func (p *spillPart) begin() { p.buf = append(p.buf[:0], make([]byte, 8)...) }

func (p *spillPart) shingles(hs []uint64) {
	for _, h := range hs {
		p.buf = binary.LittleEndian.AppendUint32(p.buf, uint32(h^h>>32))
	}
}

func (p *spillPart) end(w int32) {
	if p.err != nil {
		return
	}
	binary.LittleEndian.PutUint32(p.buf, uint32(w))
	binary.LittleEndian.PutUint32(p.buf[4:], uint32(len(p.buf)/4-2))
	_, p.err = p.w.Write(p.buf)
}

// finish flushes every part and makes it ready to be read back.
func (sp *setSpill) finish() error {
	for _, p := range sp.parts {
		if p.err == nil {
			p.err = p.w.Flush()
		}
		if p.err == nil {
			_, p.err = p.f.Seek(0, io.SeekStart)
		}
		if p.err != nil {
			return fmt.Errorf("near-duplicate screen: %w", p.err)
		}
	}
	return nil
}

// close closes every part, which gives their room back; closing again
// does nothing.
func (sp *setSpill) close() {
	for _, p := range sp.parts {
		if p.f != nil {
			p.f.Close()
			p.f = nil
		}
	}
}

// spillReader reads one part's records back in order.
type spillReader struct {
	r   *bufio.Reader
	w   int32 // the row of the record at hand; -1 at the end
	n   int   // its set's length
	raw []byte
	hdr [8]byte
}

// next reads the next record's header.
func (r *spillReader) next() error {
	if _, err := io.ReadFull(r.r, r.hdr[:]); err != nil {
		if errors.Is(err, io.EOF) {
			r.w = -1
			return nil
		}
		return err
	}
	r.w = int32(binary.LittleEndian.Uint32(r.hdr[:4]))
	r.n = int(binary.LittleEndian.Uint32(r.hdr[4:]))
	return nil
}

// skip passes over the record's set.
func (r *spillReader) skip() error {
	_, err := r.r.Discard(4 * r.n)
	return err
}

// read returns the record's set, in set's room.
func (r *spillReader) read(set []uint32) ([]uint32, error) {
	r.raw = slices.Grow(r.raw[:0], 4*r.n)[:4*r.n]
	if _, err := io.ReadFull(r.r, r.raw); err != nil {
		return set, fmt.Errorf("a record cut short: %w", err)
	}
	set = set[:0]
	for k := 0; k < len(r.raw); k += 4 {
		set = append(set, binary.LittleEndian.Uint32(r.raw[k:]))
	}
	return set, nil
}

// sets reads the parts back and returns the sets of the candidate rows, by
// their index among the rows signRows kept. Every part lists its rows in
// ascending order and the parts together list exactly the rows kept, so
// merging them by row gives each record its index there.
func (sp *setSpill) sets(n int, cand bitset) (*candidateSets, error) {
	out := &candidateSets{parts: make([]setArena, 1), where: make([]uint64, n)}
	rs := make([]*spillReader, len(sp.parts))
	for k, p := range sp.parts {
		rs[k] = &spillReader{r: bufio.NewReaderSize(p.f, 64<<10)}
		if err := rs[k].next(); err != nil {
			return nil, fmt.Errorf("near-duplicate screen: reading its sets back: %w", err)
		}
	}
	arena := &out.parts[0]
	var set []uint32
	for i := 0; ; i++ {
		first := -1
		for k, r := range rs {
			if r.w >= 0 && (first < 0 || r.w < rs[first].w) {
				first = k
			}
		}
		if first < 0 {
			if i != n {
				return nil, fmt.Errorf("near-duplicate screen: %d sets read back for %d rows", i, n)
			}
			return out, nil
		}
		if i >= n {
			return nil, fmt.Errorf("near-duplicate screen: more sets read back than the %d rows", n)
		}
		r := rs[first]
		var err error
		if cand.has(i) {
			if set, err = r.read(set); err == nil {
				slices.Sort(set)
				out.where[i] = uint64(arena.add(slices.Compact(set)) + 1)
			}
		} else {
			err = r.skip()
		}
		if err == nil {
			err = r.next()
		}
		if err != nil {
			return nil, fmt.Errorf("near-duplicate screen: reading its sets back: %w", err)
		}
	}
}
