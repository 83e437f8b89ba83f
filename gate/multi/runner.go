package multi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sync"

	"github.com/gradegate/gradegate/gate/grading"
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
func Wrap(r grading.Runner, mg *manifest.MultiGrader, models *Models) grading.Runner {
	return WrapParts([]grading.Runner{r}, nil, mg, models, nil)
}

// WrapParts is Wrap for a multi grader with more than one python
// sub-grader, or a meteor text_similarity: parts[i] grades
// mg.PythonParts()[i], each in its own pool, and meteor[name] grades the
// meteor sub-grader of that name (with MeteorSource, on MeteorTask's
// tasks). They grade every batch at once; a case errors with the first of
// them (in manifest order) that did not give a score, its message naming
// the sub-grader. A part's error line is the line of its own source, so for
// every part but the first (whose source is grader.source) the line moves
// into the message, where it cannot be taken for a line of the first.
//
// A multi grader without a python sub-grader (string_check,
// text_similarity and model sub-graders alone) has no parts: every task
// goes straight to the sub-graders and calculate_output. broker asks the
// embeddings of cosine text_similarity sub-graders.
func WrapParts(parts []grading.Runner, meteor map[string]grading.Runner, mg *manifest.MultiGrader, models *Models, broker grading.ModelBroker) grading.Runner {
	if mg == nil {
		if len(parts) == 1 {
			return parts[0]
		}
		return nil
	}
	if len(parts) == 0 {
		if mg.Python != "" {
			return nil
		}
		parts = []grading.Runner{noPython{}}
	}
	x := runner{r: parts[0], mg: mg, models: models, broker: broker, cosine: cosineSubs(mg)}
	for i, sg := range mg.PythonParts() {
		if i > 0 && i < len(parts) {
			x.more = append(x.more, extra{sg: sg, r: parts[i]})
		}
	}
	for _, sg := range mg.Graders {
		if r, ok := meteor[sg.Name]; ok && Meteor(sg) {
			x.more = append(x.more, extra{sg: sg, r: r, meteor: true})
		}
	}
	if s, ok := parts[0].(grading.StreamRunner); ok && models == nil && len(x.more) == 0 && len(x.cosine) == 0 {
		return streaming{x, s}
	}
	return x
}

type runner struct {
	r grading.Runner
	// more grade the python sub-graders after the first, in order, then
	// the meteor sub-graders.
	more   []extra
	mg     *manifest.MultiGrader
	models *Models
	// broker and cosine: the cosine text_similarity sub-graders, whose
	// embeddings broker asks.
	broker grading.ModelBroker
	cosine []manifest.SubGrader
}

// noPython stands for the python part of a multi grader that has none:
// every task is ok, and calculate_output reads only the other
// sub-graders.
type noPython struct{}

func (noPython) Grade(_ context.Context, tasks []grading.Task) ([]grading.Outcome, error) {
	out := make([]grading.Outcome, len(tasks))
	for i := range out {
		zero := 0.0
		out[i] = grading.Outcome{Class: grading.ClassOK, Score: &zero}
	}
	return out, nil
}

// Sandbox: nothing of such a grader runs in a sandbox.
func (noPython) Sandbox() grading.Sandbox { return grading.Sandbox{UID: -1} }

// extra is a sub-grader graded in a pool of its own besides the first
// python part.
type extra struct {
	sg manifest.SubGrader
	r  grading.Runner
	// meteor: the tasks are MeteorTask's, and a part's error line is
	// gradegate's own meteor source's, not the user's.
	meteor bool
}

func (x runner) Sandbox() grading.Sandbox { return x.r.Sandbox() }

// graded is what the sub-graders graded in pools of their own besides the
// first python part gave on a batch, by sub-grader name: their outcomes,
// and for a meteor sub-grader the templates that could not be filled.
type graded struct {
	outcomes map[string][]grading.Outcome
	bad      map[string][]error
}

// gradeParts grades tasks with the first python part and every extra at
// once.
func (x runner) gradeParts(ctx context.Context, tasks []grading.Task) ([]grading.Outcome, graded, error) {
	if len(x.more) == 0 {
		out, err := x.r.Grade(ctx, tasks)
		return out, graded{}, err
	}
	g := graded{outcomes: map[string][]grading.Outcome{}, bad: map[string][]error{}}
	all := make([][]grading.Outcome, 1+len(x.more))
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	wg.Go(func() { all[0], errs[0] = x.r.Grade(ctx, tasks) })
	for i, e := range x.more {
		ts := tasks
		if e.meteor {
			ts = make([]grading.Task, len(tasks))
			bad := make([]error, len(tasks))
			for k, t := range tasks {
				ts[k], bad[k] = MeteorTask(e.sg, t)
			}
			g.bad[e.sg.Name] = bad
		}
		wg.Go(func() {
			all[i+1], errs[i+1] = e.r.Grade(ctx, ts)
			if errs[i+1] == nil && len(all[i+1]) < len(tasks) {
				errs[i+1] = fmt.Errorf("sub-grader %s returned %d outcomes for %d tasks", e.sg.Name, len(all[i+1]), len(tasks))
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, graded{}, err
	}
	for i, e := range x.more {
		g.outcomes[e.sg.Name] = all[i+1]
	}
	return all[0], g, nil
}

func (x runner) Grade(ctx context.Context, tasks []grading.Task) ([]grading.Outcome, error) {
	out, more, err := x.gradeParts(ctx, tasks)
	if err != nil {
		return nil, err
	}
	out = out[:min(len(out), len(tasks))]
	partScores := make([]map[string]float64, len(out))
	for i := range out {
		out[i], partScores[i] = x.joinParts(out[i], more, i)
	}
	if err := x.cosines(ctx, tasks, out, partScores); err != nil {
		return nil, err
	}
	var asked map[string][]grading.Outcome
	var at []int
	if x.models != nil {
		// The model is asked only about the tasks the Python part graded.
		var ask []grading.Task
		for i, o := range out {
			if o.Class == grading.ClassOK && o.Score != nil {
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
		var models map[string]grading.Outcome
		if k < len(at) && at[k] == i {
			models = map[string]grading.Outcome{}
			for name, os := range asked {
				models[name] = os[k]
			}
			k++
		}
		out[i] = combine(x.mg, tasks[i], out[i], models, partScores[i])
	}
	return out, nil
}

type streaming struct {
	runner
	s grading.StreamRunner
}

func (x streaming) Stream(ctx context.Context, next func() (grading.Task, bool, error), emit func(seq int, o grading.Outcome) error) error {
	var mu sync.Mutex
	pending := map[int]grading.Task{}
	seq := 0
	return x.s.Stream(ctx, func() (grading.Task, bool, error) {
		t, ok, err := next()
		if ok && err == nil {
			mu.Lock()
			pending[seq] = t
			seq++
			mu.Unlock()
		}
		return t, ok, err
	}, func(i int, o grading.Outcome) error {
		mu.Lock()
		t := pending[i]
		delete(pending, i)
		mu.Unlock()
		return emit(i, combine(x.mg, t, o, nil, nil))
	})
}

// Combine turns the Python sub-grader's outcome on task t into the multi
// grader's, for a multi grader without model sub-graders.
func Combine(mg *manifest.MultiGrader, t grading.Task, o grading.Outcome) grading.Outcome {
	return combine(mg, t, o, nil, nil)
}

// joinParts folds the extras' outcomes on task i into the first python
// part's outcome o, and returns the extras' scores by name: the first that
// did not give a score makes the case error with it; otherwise their
// output is joined and their durations added.
func (x runner) joinParts(o grading.Outcome, g graded, i int) (grading.Outcome, map[string]float64) {
	if len(x.more) == 0 {
		return o, nil
	}
	if o.Class != grading.ClassOK || o.Score == nil {
		if len(x.mg.PythonParts()) > 1 {
			o = partError(x.mg.PythonParts()[0], o, true)
		}
		return o, nil
	}
	scores := map[string]float64{}
	for _, e := range x.more {
		name := e.sg.Name
		if err := g.bad[name]; err != nil && err[i] != nil {
			return grading.Outcome{Class: grading.ClassGraderException, Output: o.Output, DurationMS: o.DurationMS,
				Error: &grading.CaseError{Class: grading.ClassGraderException, Type: "TemplateError", Message: fmt.Sprintf("sub-grader %s: %v", name, err[i])}}, nil
		}
		po := g.outcomes[name][i]
		o.DurationMS += po.DurationMS
		if po.Output != "" {
			o.Output += "[" + name + "] " + po.Output
		}
		if po.Class != grading.ClassOK || po.Score == nil {
			sg := e.sg
			if e.meteor {
				sg.Source = MeteorFile
			}
			pe := partError(sg, po, false)
			pe.Output, pe.DurationMS = o.Output, o.DurationMS
			return pe, nil
		}
		scores[name] = *po.Score
	}
	return o, scores
}

// partError is a pool's outcome that gave no score, its message naming
// the sub-grader; first says whether the part's lines are grader.source's.
func partError(sg manifest.SubGrader, o grading.Outcome, first bool) grading.Outcome {
	if o.Error == nil {
		return o
	}
	e := *o.Error
	e.Message = fmt.Sprintf("sub-grader %s: %s", sg.Name, e.Message)
	if !first && e.Line > 0 {
		e.Message = fmt.Sprintf("sub-grader %s (%s line %d): %s", sg.Name, path.Base(sg.Source), e.Line, o.Error.Message)
		e.Line = 0
	}
	o.Error = &e
	return o
}

// combine is Combine with the model sub-graders' outcomes on t, and the
// scores of the python parts after the first, by name.
func combine(mg *manifest.MultiGrader, t grading.Task, o grading.Outcome, models map[string]grading.Outcome, parts map[string]float64) grading.Outcome {
	if o.Class != grading.ClassOK || o.Score == nil {
		return o
	}
	scores := map[string]float64{}
	if mg.Python != "" {
		scores[mg.Python] = *o.Score
	}
	for _, sg := range mg.PythonParts() {
		if v, ok := parts[sg.Name]; ok {
			scores[sg.Name] = v
		}
	}
	replies := map[string]json.RawMessage{}
	for _, sg := range mg.Graders {
		switch {
		case sg.Type == manifest.SubPython:
			continue
		case Meteor(sg) || Cosine(sg):
			v, ok := parts[sg.Name]
			if !ok {
				return grading.Outcome{Class: grading.ClassGraderException, Output: o.Output, DurationMS: o.DurationMS,
					Error: &grading.CaseError{Class: grading.ClassGraderException, Type: "NotGraded", Message: fmt.Sprintf("sub-grader %s: %s was not computed", sg.Name, sg.Metric)}}
			}
			scores[sg.Name] = v
			continue
		case sg.Model != nil:
			mo, ok := models[sg.Name]
			if !ok {
				return grading.Outcome{Class: grading.ClassGraderException, Output: o.Output, DurationMS: o.DurationMS, Judge: judgedBy(replies),
					Error: &grading.CaseError{Class: grading.ClassGraderException, Type: "NotAsked", Message: fmt.Sprintf("sub-grader %s: the model was not asked", sg.Name)}}
			}
			if mo.Judge != nil {
				replies[sg.Name] = mo.Judge
			}
			if mo.Class != grading.ClassOK || mo.Score == nil {
				e := grading.CaseError{Class: mo.Class}
				if mo.Error != nil {
					e = *mo.Error
				}
				e.Message = fmt.Sprintf("sub-grader %s: %s", sg.Name, e.Message)
				return grading.Outcome{Class: mo.Class, Output: o.Output, DurationMS: o.DurationMS + mo.DurationMS, Scores: scores, Judge: judgedBy(replies), Error: &e}
			}
			scores[sg.Name] = *mo.Score
			o.DurationMS += mo.DurationMS
			continue
		}
		s, err := Local(sg, t.Sample, t.Item)
		if err != nil {
			return grading.Outcome{Class: grading.ClassGraderException, Output: o.Output, DurationMS: o.DurationMS,
				Error: &grading.CaseError{Class: grading.ClassGraderException, Type: "TemplateError", Message: fmt.Sprintf("sub-grader %s: %v", sg.Name, err)}}
		}
		scores[sg.Name] = s
	}
	o.Judge = judgedBy(replies)
	total, err := mg.Formula.Eval(scores)
	if err != nil {
		return grading.Outcome{Class: grading.ClassInvalidReturn, Output: o.Output, DurationMS: o.DurationMS, Scores: scores, Judge: o.Judge,
			Error: &grading.CaseError{Class: grading.ClassInvalidReturn, Message: err.Error()}}
	}
	o.Score = &total
	o.Scores = scores
	return o
}

// cosines computes the cosine sub-graders of every task whose other parts
// gave a score, into parts[i] by name; a case that cannot have one (a
// template, a refused call) errors with it, and carries its calls.
func (x runner) cosines(ctx context.Context, tasks []grading.Task, out []grading.Outcome, parts []map[string]float64) error {
	if len(x.cosine) == 0 {
		return nil
	}
	for i := range out {
		if out[i].Class != grading.ClassOK || out[i].Score == nil {
			continue
		}
		for _, sg := range x.cosine {
			v, call, bad, err := cosineScore(ctx, x.broker, sg, tasks[i])
			if err != nil {
				return err
			}
			if call.Kind != "" {
				out[i].ModelCalls = append(out[i].ModelCalls, call)
				out[i].DurationMS += call.DurationMS
			}
			if bad != nil {
				out[i] = grading.Outcome{Class: bad.Class, Output: out[i].Output, DurationMS: out[i].DurationMS, ModelCalls: out[i].ModelCalls, Error: bad}
				break
			}
			if parts[i] == nil {
				parts[i] = map[string]float64{}
			}
			parts[i][sg.Name] = v
		}
	}
	return nil
}
