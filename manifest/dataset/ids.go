package dataset

import (
	"hash/maphash"
	"math"
)

// idTable is what the reader keeps per case id, in memory the garbage
// collector never has to walk: a map from a 64-bit hash of the id to its
// idInfo, and every id's bytes appended to one arena that idInfo points
// into by offset. A million ids held as strings in a map were most of the
// live heap, and every collection marked them again; here the map and the
// arena hold no pointers at all.
//
// It is exact: a hash found in the map counts only when the arena holds
// the same id under it. Two ids whose hashes collide (the seed is random
// per table, so no dataset can aim for it) keep the later one in a small
// map of its own, as do the ids past the arena's 4 GiB.
type idTable struct {
	seed     maphash.Seed
	byHash   map[uint64]idInfo
	arena    []byte
	collided map[string]idInfo
}

func newIDTable() *idTable {
	return &idTable{seed: maphash.MakeSeed(), byHash: map[uint64]idInfo{}}
}

// get returns what is kept for id, and whether id was added before; h is
// id's hash, for add.
func (t *idTable) get(id string) (h uint64, info idInfo, ok bool) {
	h = maphash.String(t.seed, id)
	if len(t.collided) > 0 {
		if info, ok := t.collided[id]; ok {
			return h, info, true
		}
	}
	info, ok = t.byHash[h]
	if !ok || !t.holds(info, id) {
		return h, idInfo{}, false
	}
	return h, info, true
}

// add keeps info for id, whose hash h get returned when it did not find it.
func (t *idTable) add(h uint64, id string, info idInfo) {
	if _, taken := t.byHash[h]; taken || uint64(len(t.arena))+uint64(len(id)) > math.MaxUint32 {
		if t.collided == nil {
			t.collided = map[string]idInfo{}
		}
		t.collided[id] = info
		return
	}
	info.idOff, info.idLen = uint32(len(t.arena)), int32(len(id))
	t.arena = append(t.arena, id...)
	t.byHash[h] = info
}

// holds says whether info was added under id.
func (t *idTable) holds(info idInfo, id string) bool {
	end := int(info.idOff) + int(info.idLen)
	return string(t.arena[info.idOff:end]) == id
}
