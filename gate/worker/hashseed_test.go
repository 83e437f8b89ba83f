//go:build linux

package worker

import (
	"context"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
)

// TestHashSeed checks that Config.HashSeed reaches the grader: the same seed
// gives the same str hashes in two pools, two seeds give different ones.
func TestHashSeed(t *testing.T) {
	src := "def grade(sample, item):\n    return float(hash('gradegate') % 1000003)\n"
	hashOf := func(seed string) float64 {
		t.Helper()
		p := newPool(t, python(t), src, func(c *Config) { c.HashSeed = seed })
		got, err := p.Grade(context.Background(), []grading.Task{task("a", map[string]any{})})
		if err != nil {
			t.Fatal(err)
		}
		if got[0].Class != grading.ClassOK {
			t.Fatalf("outcome %+v", got[0])
		}
		return *got[0].Score
	}
	a, again, b := hashOf("11"), hashOf("11"), hashOf("12")
	if a != again {
		t.Errorf("PYTHONHASHSEED=11 gave %v and then %v; want the same hash", a, again)
	}
	if a == b {
		t.Errorf("PYTHONHASHSEED=11 and 12 both gave %v; want the seed to reach the grader", a)
	}
}
