package judge_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/gradegate/gradegate/gate/judge"
)

// gate.repeats: each task is asked K times, each ask has its own cache
// entry, the case counts as its majority, and a case whose asks disagree
// feeds the slice's repeat flip rate.
func TestRepeats(t *testing.T) {
	var mu sync.Mutex
	subtle := 0
	// The SUBTLE answer is judged a pass on its first ask only: 1 of 3,
	// so its majority is a fail.
	noisy := func(prompt string) reply {
		if strings.Contains(prompt, "SUBTLE") {
			mu.Lock()
			defer mu.Unlock()
			subtle++
			if subtle == 1 {
				return result(1)
			}
			return result(0)
		}
		return agree(prompt)
	}
	fake := newFake(t, noisy)
	m, fsys, set := suite(t, "")
	m.Gate.Repeats = 3
	cache := &judge.Cache{Dir: t.TempDir()}
	res, j, err := runGate(t, m, fsys, set, judge.Config{BaseURL: fake.url(), APIKey: testKey, Cache: cache, CacheMode: judge.CacheReadWrite, Repeats: 3, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Two canaries that render and four cases, three asks each.
	if u := j.Usage(); u.Calls != 18 || fake.requests.Load() != 18 {
		t.Fatalf("calls %d, requests %d; want 18", u.Calls, fake.requests.Load())
	}
	check := func(what string) {
		t.Helper()
		for _, c := range res.Cases {
			if c.Repeats != 3 {
				t.Errorf("%s: %s asked %d times, want 3", what, c.CaseID, c.Repeats)
			}
			if want := c.CaseID == "c3"; c.RepeatsDisagree != want {
				t.Errorf("%s: %s repeats_disagree = %v, want %v", what, c.CaseID, c.RepeatsDisagree, want)
			}
			if c.CaseID == "c3" && (c.Status != "fail" || !strings.Contains(string(c.Judge), `"repeats":[1,0,0]`)) {
				t.Errorf("%s: c3 = %s %s, want the majority's fail with every score", what, c.Status, c.Judge)
			}
		}
		f := res.Slices[0].RepeatFlips
		if f == nil || f.Cases != 4 || f.Flipped != 1 || f.Rate != 0.25 || f.CI.Lo <= 0 || f.CI.Hi >= 1 {
			t.Errorf("%s: slice repeat flips = %+v, want 1 of 4 with an interval", what, f)
		}
		if o := res.Overall.RepeatFlips; o == nil || o.Flipped != 1 {
			t.Errorf("%s: overall repeat flips = %+v", what, o)
		}
	}
	check("run")

	// Every ask was recorded on its own: a replay with no key makes no call
	// and reads 18 entries.
	fake.srv.Close()
	res, j, err = runGate(t, m, fsys, set, judge.Config{BaseURL: fake.url(), Cache: cache, CacheMode: judge.CacheRead, Repeats: 3})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if u := j.Usage(); u.Calls != 0 || u.Cached != 18 {
		t.Errorf("replay usage = %+v, want 18 cached", u)
	}
	check("replay")

	// Asked once, the same cache answers from the first asks' entries.
	m.Gate.Repeats = 1
	res, j, err = runGate(t, m, fsys, set, judge.Config{BaseURL: fake.url(), Cache: cache, CacheMode: judge.CacheRead})
	if err != nil {
		t.Fatalf("one ask: %v", err)
	}
	if u := j.Usage(); u.Cached != 6 || res.Slices[0].RepeatFlips != nil {
		t.Errorf("one ask: usage %+v, repeat flips %+v; want 6 cached, no flip rate", u, res.Slices[0].RepeatFlips)
	}
}
