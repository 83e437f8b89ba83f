package dataset

import (
	"runtime"
	"slices"
	"sync"
)

// readBatch is rows read again, in file order, on their way to a worker:
// their indexes into s.rows and their lines, end to end in data.
type readBatch struct {
	rows []int32
	ends []int
	data []byte
}

// readBatchRows is how many rows a readBatch carries at most; it carries
// at most batchBytes of lines too (a longer line goes alone).
const readBatchRows = 256

// rowFunc is what a worker does with one row read again.
type rowFunc func(w int32, rec *rowRec, item []byte) error

// readWorkers is how many goroutines sign or hash the rows read again: one
// a core.
func readWorkers() int { return max(1, runtime.GOMAXPROCS(0)) }

// walkRowsParallel reads the wanted rows again as walkLines does, in file
// order on this goroutine, and hands their lines in batches to workers
// goroutines; worker k calls newFn(k)'s function on the item of each of
// its rows, in file order. A worker stops at its first error; the error returned is the
// one of the earliest row.
func (s *Screen) walkRowsParallel(n int, at func(k int) int32, workers int, newFn func(k int) rowFunc) error {
	batches := make(chan *readBatch, 2*workers)
	free := make(chan *readBatch, 3*workers)
	for range 3 * workers {
		free <- &readBatch{}
	}
	type rowErr struct {
		w   int32
		err error
	}
	errs := make([]rowErr, workers)
	var wg sync.WaitGroup
	for k := range workers {
		fn := newFn(k)
		errs[k].w = -1
		wg.Go(func() {
			for b := range batches {
				start := 0
				for j, w := range b.rows {
					item := b.data[start:b.ends[j]]
					start = b.ends[j]
					if errs[k].w >= 0 {
						continue
					}
					if err := fn(w, s.rows.at(int(w)), objectField(item, "item")); err != nil {
						errs[k] = rowErr{w, err}
					}
				}
				b.rows, b.ends, b.data = b.rows[:0], b.ends[:0], b.data[:0]
				if cap(b.data) > 4*batchBytes {
					b.data = nil // it held a long line: not kept for the next batch
				}
				free <- b
			}
		})
	}
	cur := <-free
	readErr := s.walkLines(n, at, func(w int32, _ *rowRec, line []byte) error {
		cur.rows = append(cur.rows, w)
		cur.data = append(cur.data, line...)
		cur.ends = append(cur.ends, len(cur.data))
		if len(cur.rows) == readBatchRows || len(cur.data) >= batchBytes {
			batches <- cur
			cur = <-free
		}
		return nil
	})
	if len(cur.rows) > 0 {
		batches <- cur
	}
	close(batches)
	wg.Wait()
	// Every row a worker saw comes before the one the read failed at.
	first := rowErr{w: -1}
	for _, e := range errs {
		if e.w >= 0 && (first.w < 0 || e.w < first.w) {
			first = e
		}
	}
	if first.w >= 0 {
		return first.err
	}
	return readErr
}

// blocks holds one T a row in blocks of blockRows, so that a large table
// is allocated a block at a time (the collector can give back what the
// pass left, the case-id table, while it is) and let go as a whole.
type blocks[T any] [][]T

func newBlocks[T any](n int) blocks[T] {
	b := make(blocks[T], (n+blockRows-1)/blockRows)
	for k := range b {
		b[k] = make([]T, min(blockRows, n-k*blockRows))
	}
	return b
}

func (b blocks[T]) at(i int) *T { return &b[i/blockRows][i%blockRows] }

// truncate keeps the blocks of the first n rows.
func (b blocks[T]) truncate(n int) blocks[T] { return b[:(n+blockRows-1)/blockRows] }

// signRows reads every row again, on every core, hashes and signs its
// compared texts, learns which near_duplicates.fields some item has, and
// keeps only the rows with compared text in s.rows, in row order; it
// returns their exact hashes (the sum of their leaves', never 0) and their
// band hashes (56 bytes a row), one entry a row kept, and the spill that
// holds their shingle sets (nil when there is none). A row whose item is
// not the one the pass saw is an error: the file changed while it was
// read.
func (s *Screen) signRows() (blocks[uint64], blocks[[numBands]uint32], *setSpill, error) {
	total := s.rows.len()
	exact, bands := newBlocks[uint64](total), newBlocks[[numBands]uint32](total)
	workers := readWorkers()
	exts := make([]*extractor, workers)
	// The sets go to a spill (see setSpill), or nowhere when none can be
	// made (nil): the candidates are then read again.
	spill, _ := newSetSpill(s.spillDir, workers)
	err := s.walkRowsParallel(total, func(k int) int32 { return int32(k) }, workers, func(k int) rowFunc {
		ext := s.ext.clone()
		exts[k] = ext
		g := &signer{}
		var part *spillPart
		ext.onLeaf = g.leaf
		if spill != nil {
			part = spill.parts[k]
			ext.onLeaf = func(l *leaf, p []pathStep) {
				g.leaf(l, p)
				part.shingles(l.shingles)
			}
		}
		return func(w int32, rec *rowRec, item []byte) error {
			if !s.same(rec, item) {
				return s.changed(rec.line, nil)
			}
			g.reset()
			if part != nil {
				part.begin()
			}
			if !ext.item(item) || !g.any {
				return nil // nothing to compare
			}
			*exact.at(int(w)) = g.exact | 1 // never 0; 0: no compared text
			*bands.at(int(w)) = g.bands()
			if part != nil {
				part.end(w)
			}
			return nil
		}
	})
	if spill != nil && (err != nil || spill.finish() != nil) {
		spill.close()
		spill = nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	for _, e := range exts {
		for k, seen := range e.seen {
			s.ext.seen[k] = s.ext.seen[k] || seen
		}
	}
	n := 0
	for i := range total {
		if *exact.at(i) == 0 {
			continue
		}
		if n != i {
			*s.rows.at(n) = *s.rows.at(i)
			*exact.at(n), *bands.at(n) = *exact.at(i), *bands.at(i)
		}
		n++
	}
	s.rows.truncate(n)
	return exact.truncate(n), bands.truncate(n), spill, nil
}

// candidateSets holds the shingle sets of the rows read again, one part a
// worker, and where each row's set is.
type candidateSets struct {
	parts []setArena
	// where is, for each row, its part and its place there plus one
	// (part<<32 | k+1); 0 for a row not read again.
	where []uint64
}

// setArena holds shingle sets one after the other in chunks of setChunk
// shingles (a set never straddles two; a larger one has a chunk of its
// own), so that growing never copies what is held: set k is
// chunks[at[k]>>32][uint32(at[k]):][:n[k]].
type setArena struct {
	at     []uint64
	n      []uint32
	chunks [][]uint32
}

const setChunk = 1 << 16

// add appends a set and returns its place.
func (c *setArena) add(set []uint32) int {
	last := len(c.chunks) - 1
	if last < 0 || len(c.chunks[last])+len(set) > cap(c.chunks[last]) {
		c.chunks = append(c.chunks, make([]uint32, 0, max(setChunk, len(set))))
		last++
	}
	c.at = append(c.at, uint64(last)<<32|uint64(len(c.chunks[last])))
	c.n = append(c.n, uint32(len(set)))
	c.chunks[last] = append(c.chunks[last], set...)
	return len(c.at) - 1
}

// of returns row x's set, and whether x was read again.
func (c *candidateSets) of(x int32) ([]uint32, bool) {
	v := c.where[x]
	if v == 0 {
		return nil, false
	}
	p := &c.parts[v>>32]
	k := uint32(v) - 1
	at := p.at[k]
	return p.chunks[at>>32][uint32(at):][:p.n[k]], true
}

// rereadSets reads the dataset again for the shingle sets of the wanted
// rows (ascending indexes into s.rows), on every core; a row that is not
// what it was is an error, as in reread.
func (s *Screen) rereadSets(wanted []int32) (*candidateSets, error) {
	workers := readWorkers()
	out := &candidateSets{parts: make([]setArena, workers), where: make([]uint64, s.rows.len())}
	err := s.walkRowsParallel(len(wanted), func(k int) int32 { return wanted[k] }, workers, func(k int) rowFunc {
		ext := s.ext.clone()
		var rowSet []uint32
		var compared bool
		ext.onLeaf = func(l *leaf, _ []pathStep) {
			compared = true
			for _, h := range l.shingles {
				rowSet = append(rowSet, uint32(h^h>>32))
			}
		}
		part := &out.parts[k]
		return func(w int32, rec *rowRec, item []byte) error {
			compared, rowSet = false, rowSet[:0]
			if !ext.item(item) || !compared || !s.same(rec, item) {
				return s.changed(rec.line, nil)
			}
			slices.Sort(rowSet)
			out.where[w] = uint64(k)<<32 | uint64(part.add(slices.Compact(rowSet))+1)
			return nil
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
