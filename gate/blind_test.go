package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gradegate/gradegate/gate/blind"
	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// itemRunner grades with a function of the task, as a grader would.
type itemRunner struct {
	grade func(t grading.Task) grading.Outcome
	mu    sync.Mutex
	calls [][]grading.Task
}

func (r *itemRunner) Grade(ctx context.Context, tasks []grading.Task) ([]grading.Outcome, error) {
	r.mu.Lock()
	r.calls = append(r.calls, slices.Clone(tasks))
	r.mu.Unlock()
	out := make([]grading.Outcome, len(tasks))
	for i, t := range tasks {
		out[i] = r.grade(t)
	}
	return out, nil
}

func (r *itemRunner) Sandbox() grading.Sandbox { return grading.Sandbox{} }

// honest grades newSuite's canaries as they expect and passes every case.
func honest(t grading.Task) grading.Outcome {
	if o, ok := rejects(taskName(t)); ok {
		return o
	}
	switch taskName(t) {
	case "boolean-total-one-cent":
		return scored(0)
	case "corrupt-fixture":
		return raised("KeyError", "'x'", 3)
	}
	return scored(1)
}

// Canaries travel like cases: an id in the dataset's id field shaped like
// its ids, the template row's slice and family, at seeded positions that
// the results record and the same seed repeats.
func TestBlindCanariesLookLikeCases(t *testing.T) {
	run := func(seed uint64) (*results.Results, *itemRunner) {
		s := newSuite()
		s.m.Gate.MaxOmitted = 1
		for i, c := range s.set.Cases {
			s.set.Cases[i].Family = "refunds"
			if c.Slices != nil {
				s.set.Cases[i].Item = json.RawMessage(fmt.Sprintf(`{"case_id":%q,"slice":"ship","family":"refunds"}`, c.ID))
			} else {
				s.set.Cases[i].Item = json.RawMessage(fmt.Sprintf(`{"case_id":%q,"family":"refunds"}`, c.ID))
			}
		}
		r := &itemRunner{grade: honest}
		res, err := Run(context.Background(), s.inputs(), r, Options{CanarySeed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return res, r
	}
	res, r := run(11)
	if res.Verdict != results.VerdictPass {
		t.Fatalf("verdict %s: %s", res.Verdict, dump(res.Reasons))
	}
	shape := regexp.MustCompile(`^case-\d\d$`)
	var order []string
	for _, task := range r.calls[0] {
		order = append(order, task.ID)
		if _, canary := canarySamples[string(task.Sample)]; !canary {
			continue
		}
		if !shape.MatchString(task.ID) {
			t.Errorf("canary id %q is not shaped like case-NN", task.ID)
		}
		var item map[string]any
		if err := json.Unmarshal(task.Item, &item); err != nil {
			t.Fatal(err)
		}
		if slice, ok := item["slice"]; item["case_id"] != task.ID || (ok && slice != "ship") || item["family"] != "refunds" {
			t.Errorf("canary item %s lacks the dataset's id, or a row's slice and family", task.Item)
		}
	}
	for _, c := range res.Canaries {
		if c.Placement == nil || c.Placement.Seed != 11 || c.Placement.AfterRow < 1 || c.Placement.AfterRow > 12 {
			t.Errorf("canary %s placement = %+v", c.Name, c.Placement)
		}
	}
	again, r2 := run(11)
	var order2 []string
	for _, task := range r2.calls[0] {
		order2 = append(order2, task.ID)
	}
	if !slices.Equal(order, order2) || again.Canaries[0].Placement.AfterRow != res.Canaries[0].Placement.AfterRow {
		t.Errorf("the same seed gave another order:\n%v\n%v", order, order2)
	}
}

// A grader that cheats on real cases (anything with a case_id gets its
// label, or 1) passes canaries that look different, and fails blind ones.
func TestBlindCanariesCatchACaseIDCheat(t *testing.T) {
	s := newSuite()
	s.m.Gate.MaxOmitted = 1
	cheat := func(t grading.Task) grading.Outcome {
		var item map[string]any
		json.Unmarshal(t.Item, &item)
		if _, real := item["case_id"]; real {
			if l, ok := item["human_score"].(float64); ok {
				return scored(l)
			}
			return scored(1)
		}
		return honest(t)
	}
	res, err := Run(context.Background(), s.inputs(), &itemRunner{grade: cheat}, Options{CanarySeed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != results.VerdictHold || res.Reasons[0].Code != results.ReasonCanaryFailed {
		t.Fatalf("verdict %s: %s, want a canary_failed hold", res.Verdict, dump(res.Reasons))
	}
}

// Under the batch contract a canary that expects an error is graded alone,
// as a batch of one, and says so, as are the built-in negatives (which may
// rightly raise); the others ride inside the batches.
func TestBlindCanariesBatchContract(t *testing.T) {
	s := newSuite()
	s.m.Gate.MaxOmitted = 1
	s.m.Grader.Contract = "batch"
	r := &itemRunner{grade: honest}
	res, err := Run(context.Background(), s.inputs(), r, Options{CanarySeed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.calls) != 6 || len(r.calls[1]) != 1 || taskName(r.calls[1][0]) != "corrupt-fixture" {
		t.Fatalf("calls = %d, want the stream then the expect_error canary and the four built-in negatives alone", len(r.calls))
	}
	// The two on real cases' ids carry a case's id, which its batch has
	// had already: a batch of their own.
	caseIDs := map[string]bool{}
	for _, c := range s.set.Cases {
		caseIDs[c.ID] = true
	}
	for _, call := range r.calls[4:] {
		if len(call) != 1 || !caseIDs[call[0].ID] {
			t.Errorf("a known-id negative travels as %v, not alone on a case's id", call)
		}
	}
	if taskName(r.calls[1][0]) == r.calls[1][0].ID || !strings.HasPrefix(r.calls[1][0].ID, "case-") {
		t.Errorf("the lone canary travels as %q, not as a case", r.calls[1][0].ID)
	}
	for _, c := range res.Canaries {
		if alone := c.Name == "corrupt-fixture" || c.BuiltIn; c.Placement.Alone != alone {
			t.Errorf("canary %s placement %+v", c.Name, c.Placement)
		}
	}
	if res.Verdict != results.VerdictPass {
		t.Errorf("verdict %s: %s", res.Verdict, dump(res.Reasons))
	}
}

// TestBlindCanaryIDsAvoidCaseIDs: in an id space the dataset already fills
// (ten ids of one digit), a canary never takes a case's id, nor another
// canary's.
func TestBlindCanaryIDsAvoidCaseIDs(t *testing.T) {
	m := newSuite().m
	taken := map[string]bool{}
	for d := range 10 {
		taken["c-"+string(rune('0'+d))] = true
	}
	for seed := range uint64(20) {
		b := blind.New(m, 10, seed+1)
		b.Observe(dataset.Case{ID: "c-3"})
		b.Seen = func(id string) bool { return taken[id] }
		got := map[string]bool{}
		for i := range m.Canaries {
			id := b.Task(i).ID
			if taken[id] || got[id] {
				t.Fatalf("seed %d: canary %d has id %q, already a case's or a canary's", seed, i, id)
			}
			if !regexp.MustCompile(`^c-[0-9]+$`).MatchString(id) {
				t.Fatalf("seed %d: canary id %q is not shaped like the dataset's", seed, id)
			}
			got[id] = true
		}
	}
}
