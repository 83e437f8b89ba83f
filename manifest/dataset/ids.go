package dataset

import (
	"hash/maphash"
	"slices"
)

// idTable is what the reader keeps per case id, in memory the garbage
// collector never has to walk and close to the bytes the ids need: about 50
// bytes an id (the 24-byte idInfo, the id's own bytes, and an 8-byte slot
// of an open-addressing index at most three quarters full), where a Go map
// from the id's hash to its idInfo took about 107.
//
//   - infos holds every id's idInfo in the order the ids were added, in
//     chunks of idChunk, so growing never copies what is held;
//   - arena holds the ids' bytes, in chunks of arenaChunk (an id never
//     straddles two), that idInfo points into by offset;
//   - slots is the index: 0 for a free slot, else the upper 32 bits of the
//     id's hash and its place in infos plus one. A lookup walks slots from
//     the hash's place until a free slot, and compares the id's bytes only
//     where the upper hash bits agree.
//
// It is exact: an id counts as added only when its bytes are the same.
// Ids longer than 65,535 bytes, and any past the 2^32 bytes offsets
// reach, are kept in a small map of their own.
type idTable struct {
	seed  maphash.Seed
	keep  uint64 // the hash bits used: all but in a test that forces collisions
	slots []uint64
	n     int // ids in slots
	infos [][]idInfo
	arena [][]byte
	long  map[string]idInfo
}

const (
	idChunk    = 1 << 14
	arenaChunk = 1 << 20
	// arenaChunks is how many chunks offsets of 32 bits reach.
	arenaChunks = 1 << (32 - 20)
	// maxArenaID is the longest id the arena holds (idInfo.idLen).
	maxArenaID = 1<<16 - 1
)

func newIDTable() *idTable {
	return &idTable{seed: maphash.MakeSeed(), keep: ^uint64(0), slots: make([]uint64, 1<<10)}
}

// get returns what is kept for id, and whether id was added before; h is
// id's hash, for add.
func (t *idTable) get(id string) (h uint64, info idInfo, ok bool) {
	h = maphash.String(t.seed, id) & t.keep
	if len(t.long) > 0 {
		if info, ok := t.long[id]; ok {
			return h, info, true
		}
	}
	tag := h >> 32
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return h, idInfo{}, false
		}
		if s>>32 == tag {
			info := t.info(uint32(s) - 1)
			if t.holds(*info, id) {
				return h, *info, true
			}
		}
	}
}

// add keeps info for id, whose hash h get returned when it did not find it.
func (t *idTable) add(h uint64, id string, info idInfo) {
	off, ok := t.store(id)
	if !ok {
		if t.long == nil {
			t.long = map[string]idInfo{}
		}
		t.long[id] = info
		return
	}
	info.idOff, info.idLen = off, uint16(len(id))
	if len(t.infos) == 0 || len(t.infos[len(t.infos)-1]) == idChunk {
		t.infos = append(t.infos, make([]idInfo, 0, idChunk))
	}
	last := len(t.infos) - 1
	k := last*idChunk + len(t.infos[last])
	t.infos[last] = append(t.infos[last], info)
	if (t.n+1)*4 > len(t.slots)*3 {
		t.grow()
	}
	t.place(h, uint32(k))
	t.n++
}

// place puts the id at infos[k], whose hash is h, in the first free slot.
func (t *idTable) place(h uint64, k uint32) {
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = h>>32<<32 | uint64(k+1)
}

// grow doubles the index, hashing every id again from its bytes.
func (t *idTable) grow() {
	t.slots = make([]uint64, 2*len(t.slots))
	for c, chunk := range t.infos {
		for j := range chunk {
			t.place(maphash.Bytes(t.seed, t.id(chunk[j]))&t.keep, uint32(c*idChunk+j))
		}
	}
}

// store appends id's bytes to the arena and returns their offset, or false
// when the arena cannot hold them.
func (t *idTable) store(id string) (uint32, bool) {
	if len(id) > maxArenaID {
		return 0, false
	}
	last := len(t.arena) - 1
	if last < 0 || len(t.arena[last])+len(id) > arenaChunk {
		if len(t.arena) == arenaChunks {
			return 0, false
		}
		t.arena = append(t.arena, make([]byte, 0, arenaChunk))
		last++
	}
	off := uint32(last)<<20 | uint32(len(t.arena[last]))
	t.arena[last] = append(t.arena[last], id...)
	return off, true
}

func (t *idTable) info(k uint32) *idInfo {
	return &t.infos[k/idChunk][k%idChunk]
}

// id is the bytes info was added under.
func (t *idTable) id(info idInfo) []byte {
	c, at := info.idOff>>20, int(info.idOff&(arenaChunk-1))
	return t.arena[c][at : at+int(info.idLen)]
}

// holds says whether info was added under id.
func (t *idTable) holds(info idInfo, id string) bool {
	if int(info.idLen) != len(id) {
		return false
	}
	c, at := info.idOff>>20, int(info.idOff&(arenaChunk-1))
	return string(t.arena[c][at:at+len(id)]) == id
}

// idHashes is what is left of an idTable once the ids' bytes are let go:
// the sorted hashes of the ids, 8 bytes an id.
type idHashes struct {
	seed   maphash.Seed
	keep   uint64
	sorted []uint64
}

// hashes returns the table's ids as idHashes.
func (t *idTable) hashes() *idHashes {
	out := &idHashes{seed: t.seed, keep: t.keep, sorted: make([]uint64, 0, t.n+len(t.long))}
	for _, chunk := range t.infos {
		for _, info := range chunk {
			out.sorted = append(out.sorted, maphash.Bytes(t.seed, t.id(info))&t.keep)
		}
	}
	for id := range t.long {
		out.sorted = append(out.sorted, maphash.String(t.seed, id)&t.keep)
	}
	slices.Sort(out.sorted)
	return out
}

// mayHold reports whether id may be one of the ids: never false for one of
// them, and true for another only when their hashes are the same.
func (h *idHashes) mayHold(id string) bool {
	_, found := slices.BinarySearch(h.sorted, maphash.String(h.seed, id)&h.keep)
	return found
}
