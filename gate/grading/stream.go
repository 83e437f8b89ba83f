package grading

import (
	"context"
	"fmt"
)

// StreamRunner grades a stream of tasks whose length is not known in
// advance, holding only the tasks in flight. The worker pool implements it;
// StreamOf adapts any Runner.
type StreamRunner interface {
	Runner
	// Stream pulls tasks from next until next reports ok == false, and calls
	// emit exactly once per task with the task's sequence number (0-based,
	// in the order next returned the tasks) and its outcome, as soon as the
	// outcome is known: outcomes may arrive out of order.
	//
	// next is never called concurrently with itself, nor emit with itself,
	// but they may be called concurrently with each other, and emit is never
	// held back until a pending next returns: a caller may block in next
	// (backpressure) until emit has drained what it buffers.
	//
	// Stream returns nil once every task next produced has been emitted. An
	// error from next or emit, ctx ending, or a tool failure stops it and is
	// returned; a grader's misbehaviour is an Outcome, never an error.
	Stream(ctx context.Context, next func() (Task, bool, error), emit func(seq int, o Outcome) error) error
}

// StreamOf returns r itself when it streams, and otherwise adapts it: tasks
// are pulled batch at a time and graded with one GradeTasks call each.
func StreamOf(r Runner, batch int) StreamRunner {
	if s, ok := r.(StreamRunner); ok {
		return s
	}
	return batched{Runner: r, size: max(batch, 1)}
}

type batched struct {
	Runner
	size int
}

func (b batched) Stream(ctx context.Context, next func() (Task, bool, error), emit func(seq int, o Outcome) error) error {
	seq := 0
	for {
		tasks := make([]Task, 0, b.size)
		for len(tasks) < b.size {
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
		outs, err := GradeTasks(ctx, b.Runner, tasks)
		if err != nil {
			return fmt.Errorf("grading tasks %d to %d: %w", seq, seq+len(tasks)-1, err)
		}
		for _, o := range outs {
			if err := emit(seq, o); err != nil {
				return err
			}
			seq++
		}
		if len(tasks) < b.size {
			return nil
		}
	}
}

// GradeByStream is Runner.Grade for a runner that streams: it feeds tasks
// to s.Stream and returns the outcomes in task order, so a StreamRunner
// needs only one way to grade.
func GradeByStream(ctx context.Context, s StreamRunner, tasks []Task) ([]Outcome, error) {
	out := make([]Outcome, len(tasks))
	i := 0
	next := func() (Task, bool, error) {
		if i >= len(tasks) {
			return Task{}, false, nil
		}
		i++
		return tasks[i-1], true, nil
	}
	emit := func(seq int, o Outcome) error {
		if seq < 0 || seq >= len(out) {
			return fmt.Errorf("the runner returned an outcome for task %d of %d", seq, len(out))
		}
		out[seq] = o
		return nil
	}
	if err := s.Stream(ctx, next, emit); err != nil {
		return nil, err
	}
	return out, nil
}
