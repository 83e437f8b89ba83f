//go:build linux

package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
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

// TestGradingStartsLikeDeterminism: the grading's processes and the
// determinism check's (a HashSeed) start with the same interpreter flags
// and the same environment but for the seed, which is a number in both, so
// a grader cannot tell which pass it is in.
func TestGradingStartsLikeDeterminism(t *testing.T) {
	src := "import os, sys\n" +
		"def grade(sample, item):\n" +
		"    return {'scores': {'score': 0.0}, 'judge': {'flags': [sys.flags.isolated, sys.flags.no_user_site, sys.flags.ignore_environment, getattr(sys.flags, 'safe_path', None)], 'env': sorted(os.environ), 'seed': os.environ.get('PYTHONHASHSEED', ''), 'path0': sys.path[0]}}\n"
	seen := func(seed string) map[string]any {
		t.Helper()
		p := newPool(t, python(t), src, func(c *Config) { c.HashSeed = seed })
		got, err := p.Grade(context.Background(), []grading.Task{task("a", map[string]any{})})
		if err != nil || got[0].Class != grading.ClassOK {
			t.Fatalf("%v %+v", err, got)
		}
		var v map[string]any
		if err := json.Unmarshal(got[0].Judge, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	grading, check := seen(""), seen("12345")
	for _, k := range []string{"flags", "env", "path0"} {
		if g, c := fmt.Sprint(grading[k]), fmt.Sprint(check[k]); g != c {
			t.Errorf("%s: grading %s, determinism check %s", k, g, c)
		}
	}
	if s, _ := grading["seed"].(string); s == "" || strings.Trim(s, "0123456789") != "" || s == "0" {
		t.Errorf("grading's PYTHONHASHSEED %q, want a number like the check's", s)
	}
}
