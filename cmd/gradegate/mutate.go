package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gradegate/gradegate/gate/mutate"
	"github.com/gradegate/gradegate/gate/render"
	"github.com/gradegate/gradegate/gate/shadow"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
	"github.com/gradegate/gradegate/manifest/input"
)

// mutateWorkers caps the pool of mutation testing: each mutant runs in
// children forked from its loaded processes, and a suite of canaries and
// labeled cases is too small to gain from more.
const mutateWorkers = 2

// cmdMutate mutation-tests the grader against its canaries and labeled cases:
// exit 0 when every mutant is killed (or the score meets
// gate.min_mutation_score), 1 otherwise.
func (a *app) cmdMutate(ctx context.Context, args []string) outcome {
	fs := newFlagSet("mutate", a.stderr)
	var f gradeFlags
	f.register(fs, a.getenv)
	pos, done := a.parseFlags(fs, args)
	if done != nil {
		return *done
	}
	path, err := manifestArg("mutate", pos)
	if err != nil {
		return a.fail("mutate", err)
	}
	if err := outputFor(a).check(f.results); err != nil {
		return a.fail("mutate", err)
	}
	s, err := loadSuite(path, f.limits)
	if err != nil {
		return a.fail("mutate", err)
	}
	if s.m.Grader.Judge != nil {
		// A model grader has no source whose mutants its canaries could
		// kill; its canaries and its calibration are what test it.
		return a.fail("mutate", notForModelGraders(s.m, "mutation testing (there is no grader source to mutate; the canaries and calibration against human labels test a model grader)"))
	}
	set, err := s.loadCases()
	if err != nil {
		return a.fail("mutate", err)
	}
	rep, err := a.mutationScore(ctx, s, set, f, nil)
	if err != nil {
		return a.fail("mutate", err)
	}
	if err := a.writeReport(rep, f); err != nil {
		return a.fail("mutate", err)
	}
	o := outcome{code: exitHold, report: mutateReport(s.m.Name, rep, s.m.Gate.MinMutationScore, f.results)}
	if rep.Passes(s.m.Gate.MinMutationScore) {
		o.code = exitPass
	}
	return o
}

// writeReport writes a mutate or shadow report to stdout in the --format
// asked for and, with --results, its JSON to that file.
func (a *app) writeReport(rep interface {
	WriteText(io.Writer) error
	WriteMarkdown(io.Writer) error
}, f gradeFlags) error {
	var err error
	switch f.format {
	case formatJSON:
		err = render.JSON(a.stdout, rep)
	case formatMarkdown:
		err = rep.WriteMarkdown(a.stdout)
	default:
		err = rep.WriteText(a.stdout)
	}
	if err == nil && f.results != "" {
		err = outputFor(a).writeJSON(f.results, rep)
	}
	return err
}

// mutateReport is what the action posts for a mutation test: the score in
// the title, the markdown report as the summary.
func mutateReport(manifestName string, rep *mutate.Report, minScore *float64, file string) *commandReport {
	verdict := "hold"
	if rep.Passes(minScore) {
		verdict = "pass"
	}
	if len(rep.Mutants) == 0 {
		return &commandReport{manifest: manifestName, title: "hold: " + codeNoMutationSite + ": " + noMutationSite(nil).Message, markdown: markdownOf(rep), file: file}
	}
	bar := "every mutant killed"
	if minScore != nil {
		bar = fmt.Sprintf("minimum %.2f", *minScore)
	}
	return &commandReport{
		manifest: manifestName,
		title: fmt.Sprintf("%s: mutation score %.2f (%s): %d killed, %d survived of %d mutants",
			verdict, rep.Score, bar, rep.Killed, rep.Survived, len(rep.Mutants)),
		markdown: markdownOf(rep),
		file:     file,
	}
}

// shadowReport is what the action posts for a shadow comparison: how many
// cases and canaries changed in the title, the markdown report as the
// summary.
func shadowReport(manifestName string, rep *shadow.Report, file string) *commandReport {
	canaries := 0
	for _, c := range rep.Canaries {
		if c.Changed {
			canaries++
		}
	}
	verdict := "pass"
	if rep.AnyChanged() {
		verdict = "hold"
	}
	return &commandReport{
		manifest: manifestName,
		title: fmt.Sprintf("%s: %d of %d graded cases and %d of %d canaries changed",
			verdict, len(rep.Changed), rep.Overall.Cases, canaries, len(rep.Canaries)),
		markdown: markdownOf(rep),
		file:     file,
	}
}

// markdownOf renders a report's markdown to a string; writing to memory
// cannot fail, but a failure still leaves a summary that says so.
func markdownOf(r interface{ WriteMarkdown(io.Writer) error }) string {
	var b strings.Builder
	if err := r.WriteMarkdown(&b); err != nil {
		return fmt.Sprintf("gradegate could not render the report: %v\n", err)
	}
	return b.String()
}

// mutationScore runs the mutants, each forked from the unmutated grader's
// sandboxed pool. Every Python part of a multi grader is mutated, each
// mutant graded as the whole multi grader. Given the env of a run whose
// pool is up, it uses that sandbox and interpreter, on slots after the run
// pool's; without one it establishes its own.
func (a *app) mutationScore(ctx context.Context, s *suite, set *dataset.Set, f gradeFlags, run *graderEnv) (*mutate.Report, error) {
	parts, err := s.parts()
	if err != nil {
		return nil, err
	}
	f.workers = min(f.workers, mutateWorkers)
	var env *graderEnv
	if run != nil {
		e := *run
		e.workers = f.workers
		// The run's pools hold the slots after run.firstSlot (a replacement
		// loads beside each process); the mutants' pools take the next ones
		// and share the run's meteor pools, which the run stops.
		e.firstSlot = run.firstSlot + run.slotsPerRunner()
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
	var cases []dataset.Case
	if set != nil {
		cases = set.Cases
	}
	if len(parts) == 1 {
		return mutate.Run(ctx, parts[0].src, s.m.Grader.Source, s.m, cases, env.newRunner, env.py.Executable)
	}
	mparts := make([]mutate.Part, len(parts))
	for i, p := range parts {
		mparts[i] = mutate.Part{Name: p.name, File: p.g.Source, Src: p.src, NewRunner: env.runnerFor(i)}
	}
	return mutate.RunParts(ctx, mparts, s.m, cases, env.py.Executable)
}

// cmdShadow grades the same cases and canaries with an old and the current
// grader source and lists every case whose score or class changed: exit 0
// when none did, 1 otherwise.
func (a *app) cmdShadow(ctx context.Context, args []string) outcome {
	fs := newFlagSet("shadow", a.stderr)
	var f gradeFlags
	f.register(fs, a.getenv)
	var basePath string
	fs.StringVar(&basePath, "base", "", "the old grader source to compare with (NAME=OLD.py for one python sub-grader of a multi grader with several), or for a model grader a manifest whose grader block is the base (required)")
	pos, done := a.parseFlags(fs, args)
	if done != nil {
		return *done
	}
	if basePath == "" {
		return a.fail("shadow", fmt.Errorf("%w: gradegate shadow needs --base OLD_GRADER.py", manifest.ErrInput))
	}
	path, err := manifestArg("shadow", pos)
	if err != nil {
		return a.fail("shadow", err)
	}
	if err := outputFor(a).check(f.results); err != nil {
		return a.fail("shadow", err)
	}
	s, err := loadSuite(path, f.limits)
	if err != nil {
		return a.fail("shadow", err)
	}
	set, err := s.loadCases()
	if err != nil {
		return a.fail("shadow", err)
	}
	if s.m.Grader.Judge != nil {
		rep, err := a.shadowJudge(ctx, s, set, basePath, f)
		if err != nil {
			return a.fail("shadow", err)
		}
		return a.shadowDone(s, rep, f)
	}
	parts, err := s.parts()
	if err != nil {
		return a.fail("shadow", err)
	}
	k, basePath, err := shadowPart(parts, basePath)
	if err != nil {
		return a.fail("shadow", err)
	}
	head := parts[k].src
	base, err := input.ReadFile(hostFS{}, filepath.ToSlash(basePath), input.Grader, f.limits.Of(input.Grader))
	if err != nil {
		return a.fail("shadow", manifest.ReadError(basePath, 0, "", "cannot read the base grader", err))
	}
	env, err := a.graders(ctx, s, f)
	if err != nil {
		return a.fail("shadow", err)
	}
	defer env.close()
	rep, err := shadow.Run(ctx, base, head, s.m, set.Cases, env.runnerFor(k))
	if err != nil {
		return a.fail("shadow", err)
	}
	return a.shadowDone(s, rep, f)
}

// shadowPart says which Python part of the grader --base replaces, and the
// base file: the grader's own source, or for a multi grader with more than
// one python sub-grader the one named as --base NAME=OLD.py. The other
// parts keep their pinned sources, so the comparison is of the combined
// score.
func shadowPart(parts []part, base string) (int, string, error) {
	if len(parts) == 1 {
		return 0, base, nil
	}
	names := make([]string, len(parts))
	for i, p := range parts {
		names[i] = p.name
	}
	if name, file, ok := strings.Cut(base, "="); ok {
		if i := slices.Index(names, name); i >= 0 && file != "" {
			return i, file, nil
		}
	}
	return 0, "", fmt.Errorf("%w: --base %s: the multi grader has python sub-graders %s; name the one the old source is for, as --base NAME=OLD_GRADER.py",
		manifest.ErrInput, base, strings.Join(names, ", "))
}

// shadowDone writes a shadow report and turns it into the exit code.
func (a *app) shadowDone(s *suite, rep *shadow.Report, f gradeFlags) outcome {
	if err := a.writeReport(rep, f); err != nil {
		return a.fail("shadow", err)
	}
	o := outcome{code: exitPass, report: shadowReport(s.m.Name, rep, f.results)}
	if rep.AnyChanged() {
		o.code = exitHold
	}
	return o
}

// measureMutation runs mutation testing for `run` when the manifest asks for
// it (gate.min_mutation_score); in a sharded run only shard 1 measures, and
// merge carries its score to the one verdict. The report is nil when no
// test ran; a grader with nothing to mutate is a finding instead.
func (a *app) measureMutation(ctx context.Context, s *suite, env *graderEnv, f gradeFlags, shard shard.Shard) (*mutate.Report, []manifest.Finding, error) {
	if s.m.Gate.MinMutationScore == nil || (shard.Count > 1 && shard.Index != 1) {
		return nil, nil, nil
	}
	// Mutants are judged on the labeled cases, read into memory here.
	set, err := dataset.Load(s.fsys, s.m)
	if err != nil {
		return nil, nil, err
	}
	rep, err := a.mutationScore(ctx, s, set, f, env)
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
		return nil, []manifest.Finding{noMutationSite(s.m)}, nil
	}
	return rep, nil, nil
}

// codeNoMutationSite: the grader has nothing gradegate can mutate, so no
// mutation score can be measured. It is a finding of its own, not a low
// score: no mutant survived, none was made.
const codeNoMutationSite = "no_mutation_site"

func noMutationSite(m *manifest.Manifest) manifest.Finding {
	f := manifest.Finding{Code: codeNoMutationSite, Severity: manifest.SeverityHold,
		Message: "the grader has no mutation site gradegate can mutate, so gate.min_mutation_score cannot be measured: nothing shows that the canaries and labels catch a defect in it"}
	if m != nil {
		f.File = m.Path(m.Grader.Source)
	}
	return f
}
