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
	"github.com/gradegate/gradegate/manifest/dataset"
)

// checkDeterminism grades every canary and a sample of the cases twice, each
// time in a fresh pool with its own PYTHONHASHSEED and the second time in
// another order, and records the check in res: a difference holds with
// nondeterministic_grader. It runs after the main grading, so the pools it
// starts share no process with it. The seed comes from the system's random
// source and is recorded in the results.
//
// A grader that does not load is not checked: the gate already holds on it.
//
// The sample is drawn from a second pass over the dataset (the canary
// command passes none), so memory holds the sample, not the dataset.
func (a *app) checkDeterminism(ctx context.Context, s *suite, withCases bool, f gradeFlags, shard gate.Shard, res *gate.Results) error {
	src, err := s.graderSource()
	if err != nil {
		return err
	}
	env, err := a.graders(ctx, s, f)
	if err != nil {
		return err
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Errorf("determinism check: seeding: %w", err)
	}
	seed := binary.LittleEndian.Uint64(b[:])
	var cases func() (dataset.Case, bool)
	if withCases && s.m.Gate.Determinism.Sample > 0 {
		r := dataset.Open(s.fsys, s.m)
		defer r.Close()
		cases = r.Next
	}
	start := time.Now()
	d, err := gate.CheckDeterminism(ctx, s.m, cases, shard, seed, func(ctx context.Context, hashSeed uint32) (gate.Runner, func(), error) {
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
