package main

import (
	"context"
	"fmt"
	"os"

	"github.com/gradegate/gradegate/gate"
	"github.com/gradegate/gradegate/gate/mutate"
	"github.com/gradegate/gradegate/gate/render"
	"github.com/gradegate/gradegate/gate/shadow"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// mutateWorkers caps the pools of mutation testing: each mutant needs a
// fresh pool, and on small machines starting processes costs more than the
// grading they parallelise.
const mutateWorkers = 2

// cmdMutate mutation-tests the grader against its canaries and labeled cases:
// exit 0 when every mutant is killed (or the score meets
// gate.min_mutation_score), 1 otherwise.
func (a *app) cmdMutate(ctx context.Context, args []string) outcome {
	fs := newFlagSet("mutate", a.stderr)
	var f gradeFlags
	f.register(fs, a.getenv)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return outcome{code: exitInput}
	}
	path, err := manifestArg("mutate", pos)
	if err != nil {
		return a.fail("mutate", err)
	}
	s, err := loadSuite(path)
	if err != nil {
		return a.fail("mutate", err)
	}
	set, err := dataset.Load(s.fsys, s.m)
	if err != nil {
		return a.fail("mutate", err)
	}
	rep, err := a.mutationScore(ctx, s, set, f)
	if err != nil {
		return a.fail("mutate", err)
	}
	switch f.format {
	case formatJSON:
		err = render.JSON(a.stdout, rep)
	case formatMarkdown:
		err = rep.WriteMarkdown(a.stdout)
	default:
		err = rep.WriteText(a.stdout)
	}
	if err == nil && f.results != "" {
		err = writeJSONFile(f.results, rep)
	}
	if err != nil {
		return a.fail("mutate", err)
	}
	if rep.Passes(s.m.Gate.MinMutationScore) {
		return outcome{code: exitPass}
	}
	return outcome{code: exitHold}
}

// mutationScore runs the mutants, each in a fresh sandboxed pool.
func (a *app) mutationScore(ctx context.Context, s *suite, set *dataset.Set, f gradeFlags) (*mutate.Report, error) {
	src, err := s.graderSource()
	if err != nil {
		return nil, err
	}
	f.workers = min(f.workers, mutateWorkers)
	env, err := a.graders(ctx, s, f)
	if err != nil {
		return nil, err
	}
	var cases []dataset.Case
	if set != nil {
		cases = set.Cases
	}
	return mutate.Run(ctx, src, s.m.Grader.Source, s.m, cases, env.newRunner, env.py.Executable)
}

// cmdShadow grades the same cases and canaries with an old and the current
// grader source and lists every case whose score or class changed: exit 0
// when none did, 1 otherwise.
func (a *app) cmdShadow(ctx context.Context, args []string) outcome {
	fs := newFlagSet("shadow", a.stderr)
	var f gradeFlags
	f.register(fs, a.getenv)
	var basePath string
	fs.StringVar(&basePath, "base", "", "the old grader source to compare with (required)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return outcome{code: exitInput}
	}
	if basePath == "" {
		return a.fail("shadow", fmt.Errorf("%w: gradegate shadow needs --base OLD_GRADER.py", manifest.ErrInput))
	}
	path, err := manifestArg("shadow", pos)
	if err != nil {
		return a.fail("shadow", err)
	}
	s, err := loadSuite(path)
	if err != nil {
		return a.fail("shadow", err)
	}
	set, err := dataset.Load(s.fsys, s.m)
	if err != nil {
		return a.fail("shadow", err)
	}
	head, err := s.graderSource()
	if err != nil {
		return a.fail("shadow", err)
	}
	base, err := os.ReadFile(basePath)
	if err != nil {
		return a.fail("shadow", &manifest.Error{File: basePath, Msg: "cannot read the base grader", Err: err})
	}
	env, err := a.graders(ctx, s, f)
	if err != nil {
		return a.fail("shadow", err)
	}
	rep, err := shadow.Run(ctx, base, head, s.m, set.Cases, env.newRunner)
	if err != nil {
		return a.fail("shadow", err)
	}
	switch f.format {
	case formatJSON:
		err = render.JSON(a.stdout, rep)
	case formatMarkdown:
		err = rep.WriteMarkdown(a.stdout)
	default:
		err = rep.WriteText(a.stdout)
	}
	if err == nil && f.results != "" {
		err = writeJSONFile(f.results, rep)
	}
	if err != nil {
		return a.fail("shadow", err)
	}
	if rep.AnyChanged() {
		return outcome{code: exitHold}
	}
	return outcome{code: exitPass}
}

// measureMutation runs mutation testing for `run` when the manifest asks for
// it (gate.min_mutation_score); in a sharded run only shard 1 measures, and
// merge carries its score to the one verdict.
func (a *app) measureMutation(ctx context.Context, s *suite, set *dataset.Set, f gradeFlags, shard gate.Shard) (*float64, error) {
	if s.m.Gate.MinMutationScore == nil || (shard.Count > 1 && shard.Index != 1) {
		return nil, nil
	}
	rep, err := a.mutationScore(ctx, s, set, f)
	if err != nil {
		return nil, fmt.Errorf("mutation testing (gate.min_mutation_score): %w", err)
	}
	score := rep.Score
	return &score, nil
}
