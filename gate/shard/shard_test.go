package shard

import (
	"fmt"
	"testing"
)

// TestShardOfIsStable pins the hash: these values must never change within
// results/v1, or shards of one run made by two gradegate builds would not
// partition the cases. They were computed outside Go, with a few lines of
// Python implementing FNV-1a 64 from its published constants.
func TestShardOfIsStable(t *testing.T) {
	tests := []struct {
		id    string
		count int
		want  int
	}{
		{"cancel-shipped-002", 4, 3},
		{"cancel-shipped-002", 7, 5},
		{"refund-001", 4, 2},
		{"refund-001", 7, 4},
		{"", 4, 2},
		{"anything", 1, 1},
		{"anything", 0, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s of %d", tt.id, tt.count), func(t *testing.T) {
			if got := ShardOf(tt.id, tt.count); got != tt.want {
				t.Errorf("ShardOf(%q, %d) = %d, want %d", tt.id, tt.count, got, tt.want)
			}
		})
	}
}

func TestShardOfPartitions(t *testing.T) {
	const cases = 2000
	for n := 1; n <= 8; n++ {
		sizes := make([]int, n+1)
		for i := range cases {
			k := ShardOf(fmt.Sprintf("case-%04d", i), n)
			if k < 1 || k > n {
				t.Fatalf("ShardOf(case-%04d, %d) = %d, out of 1..%d", i, n, k, n)
			}
			sizes[k]++
		}
		// Balanced enough that no shard idles: within 30% of an even split.
		for k := 1; k <= n; k++ {
			even := cases / n
			if sizes[k] < even*7/10 || sizes[k] > even*13/10 {
				t.Errorf("n=%d: shard %d has %d of %d cases", n, k, sizes[k], cases)
			}
		}
	}
}

func TestFlag(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Shard
		err  bool
	}{
		{name: "first of four", in: "1/4", want: Shard{Index: 1, Count: 4}},
		{name: "last of four", in: "4/4", want: Shard{Index: 4, Count: 4}},
		{name: "spaces", in: " 2/3 ", want: Shard{Index: 2, Count: 3}},
		{name: "zero index", in: "0/4", err: true},
		{name: "index over count", in: "5/4", err: true},
		{name: "no slash", in: "2", err: true},
		{name: "not numbers", in: "a/b", err: true},
		{name: "zero count", in: "1/0", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f Flag
			err := f.Set(tt.in)
			if tt.err {
				if err == nil {
					t.Errorf("Set(%q) = %v, nil; want an error", tt.in, f.Shard)
				}
				return
			}
			if err != nil || f.Shard != tt.want || f.String() != fmt.Sprintf("%d/%d", tt.want.Index, tt.want.Count) {
				t.Errorf("Set(%q) = %v, %v (%q); want %v", tt.in, f.Shard, err, f.String(), tt.want)
			}
		})
	}
}
