package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// shuffledStream is a StreamRunner that answers out of order: it takes
// window tasks, then emits their outcomes last first, from another
// goroutine, the way a pool of workers may.
type shuffledStream struct {
	*fakeRunner
	window int
}

func (s shuffledStream) Stream(ctx context.Context, next func() (grading.Task, bool, error), emit func(int, grading.Outcome) error) error {
	seq := 0
	for {
		var tasks []grading.Task
		for len(tasks) < s.window {
			t, ok, err := next()
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			tasks = append(tasks, t)
		}
		if len(tasks) == 0 {
			return nil
		}
		outs, err := s.Grade(ctx, tasks)
		if err != nil {
			return err
		}
		var wg sync.WaitGroup
		var emitErr error
		wg.Go(func() {
			for i := len(outs) - 1; i >= 0; i-- {
				if err := emit(seq+i, outs[i]); err != nil && emitErr == nil {
					emitErr = err
				}
			}
		})
		wg.Wait()
		if emitErr != nil {
			return emitErr
		}
		seq += len(tasks)
	}
}

var _ grading.StreamRunner = shuffledStream{}

func bigSuite(n int) suite {
	s := newSuite()
	s.set.Cases = nil
	s.set.Intended = n
	s.m.Gate.MaxErrors = n
	s.m.Gate.MaxOmitted = n
	for i := range n {
		c := dataset.Case{ID: fmt.Sprintf("c-%05d", i), Item: json.RawMessage(`{}`), Sample: json.RawMessage(`{}`), File: "evals/os/cases.jsonl", Line: i + 1}
		if i%3 == 0 {
			c.Slices = []string{"ship"}
		}
		if i%11 == 5 {
			c.Sample = nil
		}
		s.set.Cases = append(s.set.Cases, c)
	}
	return s
}

func bigOutcomes(n int) map[string]grading.Outcome {
	out := suiteOutcomes()
	for i := range n {
		switch i % 7 {
		case 2:
			out[fmt.Sprintf("c-%05d", i)] = scored(0)
		case 4:
			out[fmt.Sprintf("c-%05d", i)] = raised("KeyError", "'x'", 3)
		}
	}
	return out
}

// Out-of-order outcomes come back in dataset order, and a streamed run
// with its rows spooled to disk writes the same document as one that kept
// every row in memory, while keeping only a bounded number of rows.
func TestRunStreamedEqualsInMemory(t *testing.T) {
	const n = 3000
	s := bigSuite(n)
	mem, err := Run(context.Background(), s.inputs(), &fakeRunner{outcomes: bigOutcomes(n)}, Options{Version: "1", CanarySeed: testSeed})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range mem.Cases {
		if want := fmt.Sprintf("c-%05d", i); c.CaseID != want {
			t.Fatalf("row %d is %s, want %s", i, c.CaseID, want)
		}
	}
	s = bigSuite(n)
	r := shuffledStream{&fakeRunner{outcomes: bigOutcomes(n)}, 97}
	streamed, err := Run(context.Background(), s.inputs(), r, Options{Version: "1", SpoolDir: t.TempDir(), CanarySeed: testSeed})
	if err != nil {
		t.Fatal(err)
	}
	defer streamed.Close()
	if len(streamed.Cases) > 6*results.KeptPerRank || streamed.CasesNotKept == 0 {
		t.Errorf("kept %d rows, %d not kept; want at most %d kept", len(streamed.Cases), streamed.CasesNotKept, 6*results.KeptPerRank)
	}
	if streamed.Verdict != mem.Verdict || streamed.Counts != mem.Counts {
		t.Errorf("streamed %s %+v, in memory %s %+v", streamed.Verdict, streamed.Counts, mem.Verdict, mem.Counts)
	}
	var a, b bytes.Buffer
	if err := mem.WriteJSON(&a); err != nil {
		t.Fatal(err)
	}
	if err := streamed.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a.String(), b.String()); diff != "" {
		t.Errorf("results JSON (-in memory +streamed):\n%s", diff[:min(len(diff), 3000)])
	}
	var doc results.Results
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil || len(doc.Cases) != n {
		t.Errorf("streamed document: %d cases, %v", len(doc.Cases), err)
	}
}

// A results document without cases, or with cases last, is still whole.
func TestWriteResultsShapes(t *testing.T) {
	s := bigSuite(5)
	res, err := Run(context.Background(), s.inputs(), &fakeRunner{}, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	res.MutationScore = ptr(0.5)
	var b bytes.Buffer
	if err := res.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var doc results.Results
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil || len(doc.Cases) != 5 || doc.MutationScore == nil {
		t.Fatalf("document: %v; %d cases", err, len(doc.Cases))
	}
	res.Close()
	if err := res.WriteJSON(&b); err == nil || !strings.Contains(err.Error(), "released") {
		t.Errorf("WriteJSON after Close = %v, want an error", err)
	}
}

// A row Python would refuse is never sent to the grader: it is omitted with
// reason dataset_invalid, and counted.
func TestRunOmitsUnreadableRows(t *testing.T) {
	s := newSuite()
	s.m.Gate.MaxOmitted = 5
	s.set.Cases[3].Unreadable = true
	r := &fakeRunner{outcomes: suiteOutcomes()}
	res, err := Run(context.Background(), s.inputs(), r, Options{CanarySeed: testSeed})
	if err != nil {
		t.Fatal(err)
	}
	for _, call := range r.calls {
		if slices.Contains(call, "case-04") {
			t.Errorf("the unreadable row was sent to the grader: %v", call)
		}
	}
	c := res.Cases[3]
	if c.CaseID != "case-04" || c.Status != results.StatusOmitted || c.Reason != results.OmittedDatasetInvalid {
		t.Errorf("row = %s %s %s, want case-04 omitted as dataset_invalid", c.CaseID, c.Status, c.Reason)
	}
	if res.Counts.Omitted != 2 || res.Counts.Intended != 12 {
		t.Errorf("counts = %+v", res.Counts)
	}
}

// orderedProgress records what Graded hears.
type orderedProgress struct{ done []int }

func (p *orderedProgress) Start(int)       {}
func (p *orderedProgress) Graded(done int) { p.done = append(p.done, done) }
func (p *orderedProgress) Finish()         {}

// The rows reach the sink in dataset order from a goroutine of their own,
// with Progress hearing each as it is passed on; a sink that fails ends
// the run with its own error, without another row passed on and without
// the runner's outcomes waiting on a sink that no longer takes them.
func TestPipelineSink(t *testing.T) {
	const n = 5000
	for _, failAt := range []int{-1, 0, 1, 1500, n - 1} {
		t.Run(fmt.Sprint("fail at ", failAt), func(t *testing.T) {
			s := bigSuite(n)
			var got []string
			boom := fmt.Errorf("the disk is full")
			sink := func(c results.CaseResult) error {
				if len(got) == failAt {
					got = append(got, c.CaseID)
					return boom
				}
				if failAt >= 0 && len(got) > failAt {
					t.Errorf("row %s passed on after the sink failed", c.CaseID)
				}
				got = append(got, c.CaseID)
				return nil
			}
			prog := &orderedProgress{}
			p := newPipeline(s.m, shard.Shard{Index: 1, Count: 1}, &setSource{set: s.set}, sink, prog, nil)
			err := p.run(context.Background(), shuffledStream{&fakeRunner{outcomes: bigOutcomes(n)}, 97})
			if failAt < 0 {
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != n || len(prog.done) != n {
					t.Fatalf("%d rows passed on, %d progress calls; want %d", len(got), len(prog.done), n)
				}
			} else if !errors.Is(err, boom) {
				t.Fatalf("run = %v, want the sink's error", err)
			}
			for i, id := range got {
				if want := fmt.Sprintf("c-%05d", i); id != want {
					t.Fatalf("row %d is %s, want %s", i, id, want)
				}
			}
			if !slices.IsSorted(prog.done) {
				t.Errorf("progress went back: %v", prog.done[:min(len(prog.done), 20)])
			}
		})
	}
}
