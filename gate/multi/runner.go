package multi

import (
	"context"
	"fmt"
	"sync"

	"github.com/gradegate/gradegate/gate"
	"github.com/gradegate/gradegate/manifest"
)

// Wrap returns a runner that grades a multi grader: r grades its Python
// sub-grader, the local sub-graders are graded here, and calculate_output
// combines them into the gating score. Each sub-grader's score is in the
// outcome's Scores under its name. A Python sub-grader that errors makes
// the case error with it; a template that cannot be filled is a
// grader_exception, and a formula that gives no finite number an
// invalid_return. mg nil returns r itself; a streaming r stays streaming.
func Wrap(r gate.Runner, mg *manifest.MultiGrader) gate.Runner {
	if mg == nil {
		return r
	}
	if s, ok := r.(gate.StreamRunner); ok {
		return streaming{runner{r, mg}, s}
	}
	return runner{r, mg}
}

type runner struct {
	r  gate.Runner
	mg *manifest.MultiGrader
}

func (x runner) Sandbox() gate.Sandbox { return x.r.Sandbox() }

func (x runner) Grade(ctx context.Context, tasks []gate.Task) ([]gate.Outcome, error) {
	out, err := x.r.Grade(ctx, tasks)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if i < len(tasks) {
			out[i] = Combine(x.mg, tasks[i], out[i])
		}
	}
	return out, nil
}

type streaming struct {
	runner
	s gate.StreamRunner
}

func (x streaming) Stream(ctx context.Context, next func() (gate.Task, bool, error), emit func(seq int, o gate.Outcome) error) error {
	var mu sync.Mutex
	pending := map[int]gate.Task{}
	seq := 0
	return x.s.Stream(ctx, func() (gate.Task, bool, error) {
		t, ok, err := next()
		if ok && err == nil {
			mu.Lock()
			pending[seq] = t
			seq++
			mu.Unlock()
		}
		return t, ok, err
	}, func(i int, o gate.Outcome) error {
		mu.Lock()
		t := pending[i]
		delete(pending, i)
		mu.Unlock()
		return emit(i, Combine(x.mg, t, o))
	})
}

// Combine turns the Python sub-grader's outcome on task t into the multi
// grader's.
func Combine(mg *manifest.MultiGrader, t gate.Task, o gate.Outcome) gate.Outcome {
	if o.Class != gate.ClassOK || o.Score == nil {
		return o
	}
	scores := map[string]float64{mg.Python: *o.Score}
	for _, sg := range mg.Graders {
		if sg.Type == manifest.SubPython {
			continue
		}
		s, err := Local(sg, t.Sample, t.Item)
		if err != nil {
			return gate.Outcome{Class: gate.ClassGraderException, Output: o.Output, DurationMS: o.DurationMS,
				Error: &gate.CaseError{Class: gate.ClassGraderException, Type: "TemplateError", Message: fmt.Sprintf("sub-grader %s: %v", sg.Name, err)}}
		}
		scores[sg.Name] = s
	}
	total, err := mg.Formula.Eval(scores)
	if err != nil {
		return gate.Outcome{Class: gate.ClassInvalidReturn, Output: o.Output, DurationMS: o.DurationMS, Scores: scores,
			Error: &gate.CaseError{Class: gate.ClassInvalidReturn, Message: err.Error()}}
	}
	o.Score = &total
	o.Scores = scores
	return o
}
