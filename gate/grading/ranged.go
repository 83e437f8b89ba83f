package grading

import (
	"context"
	"fmt"

	"github.com/gradegate/gradegate/manifest"
)

// InRange turns an ok outcome whose gating score lies outside rng into an
// invalid_return naming the range; any other outcome, or a nil rng, passes
// through unchanged.
func InRange(o Outcome, rng *[2]float64) Outcome {
	if rng == nil || o.Class != ClassOK || o.Score == nil {
		return o
	}
	s := *o.Score
	if s >= rng[0] && s <= rng[1] {
		return o
	}
	o.Class = ClassInvalidReturn
	o.Error = &CaseError{Class: ClassInvalidReturn, Message: fmt.Sprintf("grade returned %g, outside grader.range [%g, %g]", s, rng[0], rng[1])}
	o.Score = nil
	return o
}

// Ranged returns r with InRange applied to every outcome, or r itself when
// rng is nil. A streaming runner stays a streaming runner.
func Ranged(r Runner, rng *[2]float64) Runner {
	if rng == nil {
		return r
	}
	if s, ok := r.(StreamRunner); ok {
		return rangedStream{ranged{s, *rng}, s}
	}
	return ranged{r, *rng}
}

type ranged struct {
	Runner
	rng [2]float64
}

func (x ranged) Grade(ctx context.Context, tasks []Task) ([]Outcome, error) {
	out, err := x.Runner.Grade(ctx, tasks)
	for i := range out {
		out[i] = InRange(out[i], &x.rng)
	}
	return out, err
}

type rangedStream struct {
	ranged
	s StreamRunner
}

func (x rangedStream) Stream(ctx context.Context, next func() (Task, bool, error), emit func(seq int, o Outcome) error) error {
	return x.s.Stream(ctx, next, func(seq int, o Outcome) error {
		return emit(seq, InRange(o, &x.rng))
	})
}

// GatingScore is the score an outcome counts with under g: its score when
// ok, 0 for a grader_exception under on_exception: zero, and false for any
// other outcome (no score: the case is unevaluable).
func GatingScore(g manifest.Grader, o Outcome) (float64, bool) {
	switch {
	case o.Class == ClassOK && o.Score != nil:
		return *o.Score, true
	case o.Class == ClassGraderException && g.ZeroOnException() && !o.Preprocess:
		return 0, true
	}
	return 0, false
}
