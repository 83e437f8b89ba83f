package gate

import (
	"context"
	"errors"
	"fmt"

	"github.com/gradegate/gradegate/gate/mutate"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// mutateWorkers caps the pool of mutation testing: each mutant runs in
// children forked from its loaded processes, and a suite of canaries and
// labeled cases is too small to gain from more.
const mutateWorkers = 2

// mutationScore runs the mutants, each forked from the unmutated grader's
// sandboxed pool. Every Python part of a multi grader is mutated, each
// mutant graded as the whole multi grader. Given the env of a run whose
// pool is up, it uses that sandbox and interpreter, its pools starting at
// sandbox slot first (gateRun.mutantSlot: slots no other pool holds);
// without one it establishes its own.
func (a *Host) mutationScore(ctx context.Context, s *Suite, set *dataset.Set, f GraderOptions, run *graderEnv, first int) (*mutate.Report, error) {
	parts, err := s.parts()
	if err != nil {
		return nil, err
	}
	f.Workers = min(f.Workers, mutateWorkers)
	var env *graderEnv
	if run != nil {
		e := *run
		e.workers = f.Workers
		// The mutants' pools share the run's meteor pools, which the run
		// stops.
		e.firstSlot = first
		if e.firstSlot+e.slotsPerRunner() <= run.sb.Slots() || run.sb.Status().Unsandboxed {
			env = &e
		}
	}
	if env == nil {
		if env, err = a.graders(ctx, s, f); err != nil {
			return nil, err
		}
		defer env.close()
	}
	if env.broker != nil {
		// Mutants replay the calls the cache and the run recorded, and
		// make none of their own.
		replay, err := a.newBroker(s, f.Judge, brokerReplay)
		if err != nil {
			return nil, err
		}
		e := *env
		e.broker = replay
		env = &e
	}
	var cases []dataset.Case
	if set != nil {
		cases = set.Cases
	}
	if len(parts) == 1 {
		return mutate.Run(ctx, parts[0].src, s.Manifest.Grader.Source, s.Manifest, cases, env.newRunner, env.py.Executable)
	}
	mparts := make([]mutate.Part, len(parts))
	for i, p := range parts {
		mparts[i] = mutate.Part{Name: p.name, File: p.g.Source, Src: p.src, NewRunner: env.runnerFor(i)}
	}
	return mutate.RunParts(ctx, mparts, s.Manifest, cases, env.py.Executable)
}

// measureMutation runs mutation testing for `run` when the manifest asks for
// it (gate.min_mutation_score), its pools from sandbox slot first of env's
// (mutationScore); in a sharded run only shard 1 measures, and merge
// carries its score to the one verdict. The report is nil when no test
// ran; a grader with nothing to mutate is a finding instead.
func (a *Host) measureMutation(ctx context.Context, s *Suite, env *graderEnv, first int, f GraderOptions, shard shard.Shard) (*mutate.Report, []manifest.Finding, error) {
	if s.Manifest.Gate.MinMutationScore == nil || (shard.Count > 1 && shard.Index != 1) {
		return nil, nil, nil
	}
	// Mutants are judged on the labeled cases, read into memory here.
	set, err := dataset.Load(s.FS, s.Manifest)
	if err != nil {
		return nil, nil, err
	}
	rep, err := a.mutationScore(ctx, s, set, f, env, first)
	if errors.Is(err, manifest.ErrInput) {
		// The grader itself does not parse or load: the gate holds for that
		// (its canaries fail, its cases error) and still reports every
		// case; the missing score is a warning in the results.
		fmt.Fprintf(a.stderr, "gradegate: mutation testing skipped: %v\n", err)
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("mutation testing (gate.min_mutation_score): %w", err)
	}
	if len(rep.Mutants) == 0 {
		return nil, []manifest.Finding{NoMutationSite(s.Manifest)}, nil
	}
	var findings []manifest.Finding
	if rep.TimeoutCountsAsKill {
		findings = append(findings, TimeoutsCountAsKills(s.Manifest, rep.TimeoutKilled+rep.NotGraded))
	}
	return rep, findings, nil
}

// codeTimeoutsCountAsKills: gate.mutation.timeout_counts_as_kill is set, so
// mutants that hung count as killed. It weakens the mutation test (a hang
// depends on the machine's load as much as on the defect), so every run
// that sets it says so.
const codeTimeoutsCountAsKills = "mutation_timeouts_count_as_kills"

// TimeoutsCountAsKills is the warning of a run whose manifest sets
// gate.mutation.timeout_counts_as_kill; hung is how many mutants it
// counted as killed because of it.
func TimeoutsCountAsKills(m *manifest.Manifest, hung int) manifest.Finding {
	return manifest.Finding{Code: codeTimeoutsCountAsKills, Severity: manifest.SeverityWarn, File: m.File, Line: m.Line("gate.mutation.timeout_counts_as_kill"),
		Message: fmt.Sprintf("gate.mutation.timeout_counts_as_kill is true: mutants that hung (a check timed out, or the time budget stopped them) count as killed; %d did in this score", hung)}
}

// codeNoMutationSite: the grader has nothing gradegate can mutate, so no
// mutation score can be measured. It is a finding of its own, not a low
// score: no mutant survived, none was made.
const codeNoMutationSite = "no_mutation_site"

// NoMutationSite is the hold finding of a grader gradegate finds nothing to
// mutate in; m, when set, names the grader file.
func NoMutationSite(m *manifest.Manifest) manifest.Finding {
	f := manifest.Finding{Code: codeNoMutationSite, Severity: manifest.SeverityHold,
		Message: "the grader has no mutation site gradegate can mutate, so gate.min_mutation_score cannot be measured: nothing shows that the canaries and labels catch a defect in it"}
	if m != nil {
		f.File = m.Path(m.Grader.Source)
	}
	return f
}
