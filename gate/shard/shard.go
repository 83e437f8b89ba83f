package shard

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/gradegate/gradegate/manifest"
)

// ShardOf returns the 1-based shard (1..count) that grades caseID.
//
// The shard is FNV-1a 64 of the case_id's UTF-8 bytes, modulo count, plus
// one. The function depends on nothing but the id and count, so every job
// of a matrix, on any machine and in any later run, puts a case in the same
// shard; `gradegate merge` checks it. Changing this function changes which
// shard grades which case, so it must not change within results/v1.
func ShardOf(caseID string, count int) int {
	if count <= 1 {
		return 1
	}
	h := fnv.New64a()
	h.Write([]byte(caseID)) // a hash.Hash never returns a write error
	return int(h.Sum64()%uint64(count)) + 1
}

// String formats the shard as K/N.
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// normalize turns the zero Shard into 1/1 (everything) and rejects a shard
// outside 1..N.
func (s Shard) Normalize() (Shard, error) {
	if s == (Shard{}) {
		return Shard{Index: 1, Count: 1}, nil
	}
	if s.Count < 1 || s.Index < 1 || s.Index > s.Count {
		return Shard{}, fmt.Errorf("%w: shard %d/%d: want K/N with 1 <= K <= N", manifest.ErrInput, s.Index, s.Count)
	}
	return s, nil
}

// partial reports whether the shard is one of several.
func (s Shard) Partial() bool { return s.Count > 1 }

// Shard says which part of the cases a run graded; 1/1 for all of them.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// Flag is the value of a --shard K/N flag; the zero Flag (the flag not
// given) grades every case.
type Flag struct{ Shard }

// String formats the flag as K/N, or "" when it was not given.
func (f *Flag) String() string {
	if f.Count == 0 {
		return ""
	}
	return f.Shard.String()
}

// Set reads K/N with 1 <= K <= N.
func (f *Flag) Set(v string) error {
	k, n, ok := strings.Cut(strings.TrimSpace(v), "/")
	if !ok {
		return fmt.Errorf("want K/N (for example 2/4), got %q", v)
	}
	ki, err1 := strconv.Atoi(k)
	ni, err2 := strconv.Atoi(n)
	if err1 != nil || err2 != nil || ni < 1 || ki < 1 || ki > ni {
		return fmt.Errorf("want K/N with 1 <= K <= N, got %q", v)
	}
	f.Shard = Shard{Index: ki, Count: ni}
	return nil
}
