package blind

import (
	"encoding/json"
	"strconv"
	"strings"
)

// idShape is an id cut around its number: the last run of digits, its
// width, and the text either side ("ord-" 5 "" for "ord-00017").
type idShape struct {
	pre, suf string
	width    int
}

// maxIDShapes bounds the id shapes whose number ranges are kept: the
// memory of drawing ids does not grow with the dataset, even when every id
// has a shape of its own.
const maxIDShapes = 1024

// maxNumWidth is the widest number an id range is kept for (fits uint64).
const maxNumWidth = 18

// numRange is what the rows read so far showed of one id shape: the
// smallest and largest number, and how many ids of the shape there were;
// canaries counts the canary ids drawn inside it.
type numRange struct {
	min, max uint64
	n        int
	canaries int
	// rising: each id of the shape read so far had a larger number than
	// the one before (a dataset in id order).
	rising bool
	last   uint64
}

// splitID cuts id around its number; false when it has none, or one too
// wide to count.
func splitID(id string) (idShape, uint64, bool) {
	end := strings.LastIndexAny(id, "0123456789")
	if end < 0 {
		return idShape{}, 0, false
	}
	start := end
	for start > 0 && id[start-1] >= '0' && id[start-1] <= '9' {
		start--
	}
	digits := id[start : end+1]
	if len(digits) > maxNumWidth {
		return idShape{}, 0, false
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return idShape{}, 0, false
	}
	return idShape{pre: id[:start], suf: id[end+1:], width: len(digits)}, n, true
}

// format is the id of shape s with number n, zero-padded to the shape's
// width; false when n needs more digits.
func (s idShape) format(n uint64) (string, bool) {
	d := strconv.FormatUint(n, 10)
	if len(d) > s.width {
		return "", false
	}
	return s.pre + strings.Repeat("0", s.width-len(d)) + d + s.suf, true
}

// idRanges are the number ranges of the id shapes read so far.
type idRanges map[idShape]*numRange

// add counts a row's id.
func (r idRanges) add(id string) {
	s, n, ok := splitID(id)
	if !ok {
		return
	}
	nr := r[s]
	if nr == nil {
		if len(r) >= maxIDShapes {
			return
		}
		r[s] = &numRange{min: n, max: n, n: 1, rising: true, last: n}
		return
	}
	nr.rising = nr.rising && n > nr.last
	nr.last = n
	nr.min, nr.max = min(nr.min, n), max(nr.max, n)
	nr.n++
}

// rangeID draws an id for a canary built on a row whose id is shape: a
// number from the range the rows read so far have in that shape (the same
// prefix, width and suffix), not taken by a row read so far or another
// canary; when the range has no free number left (or a free one is not
// found in a few draws), the first free number past its largest, as the
// next rows of a growing dataset would have. When the rows came in id
// order, past the largest by a gap like theirs. false when the shape's range
// is not known (no number, more shapes than are kept) or the width is
// full: the caller draws digits instead.
//
// Within the range it needs seen, which tells the ids of rows read so far:
// without it only numbers past the largest are drawn.
func (b *Canaries) rangeID(shape string, taken func(string) bool) (string, bool) {
	s, _, ok := splitID(shape)
	if !ok {
		return "", false
	}
	nr := b.idRanges[s]
	if nr == nil {
		return "", false
	}
	span := nr.max - nr.min + 1
	start := nr.max + 1
	if nr.rising && nr.n >= 2 {
		// In a dataset in id order every row's number is past the ones
		// before: a number inside the range would be the one that is
		// not. The canary's is the next row's might be: past the
		// largest by a gap like the rows' (up to twice their mean).
		mean := float64(nr.max-nr.min) / float64(nr.n-1)
		start = nr.max + 1 + b.rng.Uint64N(max(uint64(2*mean), 1))
	} else if b.Seen != nil && span > uint64(nr.n+nr.canaries) {
		for range 64 {
			id, _ := s.format(nr.min + b.rng.Uint64N(span))
			if !taken(id) {
				nr.canaries++
				return id, true
			}
		}
	}
	for n := start; n <= start+64; n++ {
		id, ok := s.format(n)
		if !ok {
			return "", false
		}
		if !taken(id) {
			return id, true
		}
	}
	return "", false
}

// itemID is the id an item carries in its id field; false when it has
// none, or not a non-empty string.
func itemID(item json.RawMessage, field string) (string, bool) {
	fs, ok := objectFields(item)
	if !ok {
		return "", false
	}
	v, ok := lookup(fs, field)
	if !ok {
		return "", false
	}
	var id string
	if json.Unmarshal(v, &id) != nil || id == "" {
		return "", false
	}
	return id, true
}
