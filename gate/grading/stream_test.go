package grading

import (
	"context"
	"testing"
)

// echoRunner scores every task 1.0 and counts its Grade calls.
type echoRunner struct{ calls *int }

func (e echoRunner) Grade(_ context.Context, tasks []Task) ([]Outcome, error) {
	*e.calls++
	out := make([]Outcome, len(tasks))
	one := 1.0
	for i := range tasks {
		out[i] = Outcome{Class: ClassOK, Score: &one}
	}
	return out, nil
}

func (echoRunner) Sandbox() Sandbox { return Sandbox{} }

func TestStreamOfBatches(t *testing.T) {
	for _, tc := range []struct {
		name         string
		tasks, batch int
		wantCalls    int
	}{
		{"empty", 0, 4, 0},
		{"one short batch", 3, 4, 1},
		{"exact batches", 8, 4, 2},
		{"remainder", 9, 4, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			s := StreamOf(echoRunner{&calls}, tc.batch)
			pulled := 0
			next := func() (Task, bool, error) {
				if pulled == tc.tasks {
					return Task{}, false, nil
				}
				pulled++
				return Task{ID: "c", Sample: []byte("{}"), Item: []byte("{}")}, true, nil
			}
			var seqs []int
			err := s.Stream(context.Background(), next, func(seq int, o Outcome) error {
				seqs = append(seqs, seq)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(seqs) != tc.tasks || calls != tc.wantCalls {
				t.Fatalf("emitted %d outcomes in %d calls, want %d in %d", len(seqs), calls, tc.tasks, tc.wantCalls)
			}
			for i, s := range seqs {
				if s != i {
					t.Fatalf("seq %d at position %d", s, i)
				}
			}
		})
	}
}
