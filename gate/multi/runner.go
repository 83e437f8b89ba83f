package multi

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/gradegate/gradegate/gate"
	"github.com/gradegate/gradegate/manifest"
)

// Wrap returns a runner that grades a multi grader: r grades its Python
// sub-grader, the local sub-graders are graded here, models asks its
// score_model and label_model sub-graders, and calculate_output combines
// them into the gating score. Each sub-grader's score is in the outcome's
// Scores under its name. A Python sub-grader that errors makes the case
// error with it, and so does a model sub-grader whose reply is invalid or
// whose call was not sent; a template that cannot be filled is a
// grader_exception, and a formula that gives no finite number an
// invalid_return. mg nil returns r itself; a streaming r stays streaming
// when there are no model sub-graders (with them, the calls of a batch go
// out together, Concurrency at a time).
func Wrap(r gate.Runner, mg *manifest.MultiGrader, models *Models) gate.Runner {
	if mg == nil {
		return r
	}
	if s, ok := r.(gate.StreamRunner); ok && models == nil {
		return streaming{runner{r, mg, nil}, s}
	}
	return runner{r, mg, models}
}

type runner struct {
	r      gate.Runner
	mg     *manifest.MultiGrader
	models *Models
}

func (x runner) Sandbox() gate.Sandbox { return x.r.Sandbox() }

func (x runner) Grade(ctx context.Context, tasks []gate.Task) ([]gate.Outcome, error) {
	out, err := x.r.Grade(ctx, tasks)
	if err != nil {
		return nil, err
	}
	out = out[:min(len(out), len(tasks))]
	var asked map[string][]gate.Outcome
	var at []int
	if x.models != nil {
		// The model is asked only about the tasks the Python part graded.
		var ask []gate.Task
		for i, o := range out {
			if o.Class == gate.ClassOK && o.Score != nil {
				ask = append(ask, tasks[i])
				at = append(at, i)
			}
		}
		if len(ask) > 0 {
			if asked, err = x.models.Grade(ctx, ask); err != nil {
				return nil, err
			}
		}
	}
	k := 0
	for i := range out {
		var models map[string]gate.Outcome
		if k < len(at) && at[k] == i {
			models = map[string]gate.Outcome{}
			for name, os := range asked {
				models[name] = os[k]
			}
			k++
		}
		out[i] = combine(x.mg, tasks[i], out[i], models)
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
// grader's, for a multi grader without model sub-graders.
func Combine(mg *manifest.MultiGrader, t gate.Task, o gate.Outcome) gate.Outcome {
	return combine(mg, t, o, nil)
}

// combine is Combine with the model sub-graders' outcomes on t, by name.
func combine(mg *manifest.MultiGrader, t gate.Task, o gate.Outcome, models map[string]gate.Outcome) gate.Outcome {
	if o.Class != gate.ClassOK || o.Score == nil {
		return o
	}
	scores := map[string]float64{mg.Python: *o.Score}
	replies := map[string]json.RawMessage{}
	for _, sg := range mg.Graders {
		switch {
		case sg.Type == manifest.SubPython:
			continue
		case sg.Model != nil:
			mo, ok := models[sg.Name]
			if !ok {
				return gate.Outcome{Class: gate.ClassGraderException, Output: o.Output, DurationMS: o.DurationMS, Judge: judgedBy(replies),
					Error: &gate.CaseError{Class: gate.ClassGraderException, Type: "NotAsked", Message: fmt.Sprintf("sub-grader %s: the model was not asked", sg.Name)}}
			}
			if mo.Judge != nil {
				replies[sg.Name] = mo.Judge
			}
			if mo.Class != gate.ClassOK || mo.Score == nil {
				e := gate.CaseError{Class: mo.Class}
				if mo.Error != nil {
					e = *mo.Error
				}
				e.Message = fmt.Sprintf("sub-grader %s: %s", sg.Name, e.Message)
				return gate.Outcome{Class: mo.Class, Output: o.Output, DurationMS: o.DurationMS + mo.DurationMS, Scores: scores, Judge: judgedBy(replies), Error: &e}
			}
			scores[sg.Name] = *mo.Score
			o.DurationMS += mo.DurationMS
			continue
		}
		s, err := Local(sg, t.Sample, t.Item)
		if err != nil {
			return gate.Outcome{Class: gate.ClassGraderException, Output: o.Output, DurationMS: o.DurationMS,
				Error: &gate.CaseError{Class: gate.ClassGraderException, Type: "TemplateError", Message: fmt.Sprintf("sub-grader %s: %v", sg.Name, err)}}
		}
		scores[sg.Name] = s
	}
	o.Judge = judgedBy(replies)
	total, err := mg.Formula.Eval(scores)
	if err != nil {
		return gate.Outcome{Class: gate.ClassInvalidReturn, Output: o.Output, DurationMS: o.DurationMS, Scores: scores, Judge: o.Judge,
			Error: &gate.CaseError{Class: gate.ClassInvalidReturn, Message: err.Error()}}
	}
	o.Score = &total
	o.Scores = scores
	return o
}
