package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gradegate/gradegate/gate"
	"github.com/gradegate/gradegate/gate/worker"
)

// determinismSample starts the determinism check of a run: its seed, from
// the system's random source (recorded in the results), and the sample of
// cases it draws from the run's own pass over the dataset (opts.Observe),
// so the dataset is read once. The canary command passes no cases.
func determinismSample(s *suite, withCases bool, opts *gate.Options) (*gate.DeterminismSample, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("determinism check: seeding: %w", err)
	}
	ds, err := gate.NewDeterminismSample(s.m, opts.Shard, binary.LittleEndian.Uint64(b[:]))
	if err != nil {
		return nil, err
	}
	if withCases && s.m.Gate.Determinism.Sample > 0 {
		opts.Observe = ds.Observe
	}
	return ds, nil
}

// checkDeterminism grades every canary and the sample of the cases twice,
// each time in a fresh pool with its own PYTHONHASHSEED and the second time
// in another order, and records the check in res: a difference holds with
// nondeterministic_grader. It runs after the main grading, so the pools it
// starts share no process with it.
//
// A grader that does not load is not checked: the gate already holds on it.
func (a *app) checkDeterminism(ctx context.Context, s *suite, sample *gate.DeterminismSample, f gradeFlags, res *gate.Results) error {
	src, err := s.graderSource()
	if err != nil {
		return err
	}
	env, err := a.graders(ctx, s, f)
	if err != nil {
		return err
	}
	start := time.Now()
	d, err := sample.Check(ctx, func(ctx context.Context, hashSeed uint32) (gate.Runner, func(), error) {
		e := *env
		e.hashSeed = strconv.FormatUint(uint64(hashSeed), 10)
		return e.newRunner(ctx, src)
	})
	var le *worker.LoadError
	if errors.As(err, &le) {
		fmt.Fprintf(a.stderr, "gradegate: determinism check skipped: %v\n", le)
		return nil
	}
	if err != nil {
		return err
	}
	d.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	res.AddDeterminism(d)
	return nil
}
