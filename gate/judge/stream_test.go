package judge_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/judge"
)

func TestStream(t *testing.T) {
	fake := newFake(t, agree)
	m, _, set := suite(t, "")
	var tasks []grading.Task
	for _, c := range set.Cases {
		tasks = append(tasks, grading.Task{ID: c.ID, Sample: c.Sample, Item: c.Item})
	}
	tasks = append(tasks, grading.Task{ID: "no-reference", Sample: tasks[0].Sample, Item: []byte(`{"question": "q"}`)})
	j, err := judge.New(judge.Config{Grader: m.Grader, BaseURL: fake.url(), APIKey: testKey, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	s := grading.StreamOf(j, 1)
	if s != grading.StreamRunner(j) {
		t.Fatal("StreamOf wraps the judge instead of using its own Stream")
	}

	pull := func(list []grading.Task, fail error) func() (grading.Task, bool, error) {
		i := 0
		return func() (grading.Task, bool, error) {
			if i == len(list) {
				return grading.Task{}, false, fail
			}
			i++
			return list[i-1], true, nil
		}
	}
	var mu sync.Mutex
	got := map[int]string{}
	err = s.Stream(context.Background(), pull(tasks, nil), func(seq int, o grading.Outcome) error {
		mu.Lock()
		defer mu.Unlock()
		if _, dup := got[seq]; dup {
			t.Errorf("seq %d emitted twice", seq)
		}
		status := string(o.Class)
		if o.Score != nil && *o.Score >= 1 {
			status += "/pass"
		}
		got[seq] = status
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]string{0: "ok/pass", 1: "ok", 2: "ok", 3: "ok/pass", 4: "grader_exception"}
	if !equalInts(got, want) {
		t.Errorf("emitted %v, want %v", got, want)
	}

	boom := errors.New("dataset read failed")
	err = s.Stream(context.Background(), pull(tasks[:2], boom), func(int, grading.Outcome) error { return nil })
	if !errors.Is(err, boom) {
		t.Errorf("a failing next: err = %v", err)
	}
	stop := errors.New("results file full")
	var emitted []int
	err = s.Stream(context.Background(), pull(tasks, nil), func(seq int, _ grading.Outcome) error {
		emitted = append(emitted, seq)
		return stop
	})
	if !errors.Is(err, stop) || len(emitted) != 1 {
		t.Errorf("a failing emit: err = %v after %v", err, emitted)
	}
}

func equalInts(a, b map[int]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
