package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"sync"

	"github.com/gradegate/gradegate/canary/hosted"
	"github.com/gradegate/gradegate/gate"
	"github.com/gradegate/gradegate/gate/digest"
	"github.com/gradegate/gradegate/gate/lint"
	"github.com/gradegate/gradegate/gate/render"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/sandbox"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
	"github.com/gradegate/gradegate/manifest/input"
)

// gradeFlags are the options of the commands that run the grader.
type gradeFlags struct {
	format      format
	results     string
	shard       shardFlag
	workers     int
	unsandboxed bool
	python      string
	judge       judgeFlags // model graders
	limits      input.Limits
	canarySeed  uint64
	baseline    string // run --baseline: the base branch's results file
}

// graderOptions are the flags that say how graders start.
func (g *gradeFlags) graderOptions() gate.GraderOptions {
	return gate.GraderOptions{Python: g.python, Workers: g.workers, Unsandboxed: g.unsandboxed,
		Judge: gate.JudgeOptions{Cache: g.judge.cache, Mode: g.judge.mode, Concurrency: g.judge.concurrency}}
}

func (g *gradeFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	g.format = formatHuman
	fs.Var(&g.format, "format", "stdout format: human, json or markdown")
	fs.StringVar(&g.results, "results", "", "write the results JSON to this file")
	g.workers = min(runtime.NumCPU(), maxWorkers)
	fs.Var(positive{&g.workers, maxWorkers}, "workers", fmt.Sprintf("grader processes, 1 to %d; default: the number of CPUs", maxWorkers))
	fs.BoolVar(&g.unsandboxed, "unsandboxed", false, "grade without the sandbox (every output says so)")
	fs.StringVar(&g.python, "python", gate.DefaultPython(getenv), "Python interpreter for the grader (env GRADEGATE_PYTHON)")
	g.judge.register(fs)
	registerLimits(fs, &g.limits)
	fs.Uint64Var(&g.canarySeed, "canary-seed", 0, "place the canaries among the cases as a past run did (its canaries[].placement.seed); default: a fresh seed")
}

func (a *app) cmdRun(ctx context.Context, args []string) outcome {
	return a.grade(ctx, "run", args, false)
}

func (a *app) cmdCanary(ctx context.Context, args []string) outcome {
	return a.grade(ctx, "canary", args, true)
}

// grade is `run` and `canary`: flags into options, the gate's pipeline,
// then the results file, stdout and the exit code.
func (a *app) grade(ctx context.Context, name string, args []string, canariesOnly bool) outcome {
	fs := newFlagSet(name, a.stderr)
	var f gradeFlags
	f.register(fs, a.getenv)
	var hostedOn bool
	var hostedURL string
	if canariesOnly {
		fs.BoolVar(&hostedOn, "hosted", false, "also run the canaries on OpenAI's hosted grader (OPENAI_API_KEY)")
		fs.StringVar(&hostedURL, "hosted-url", hosted.DefaultBaseURL, "base URL of the hosted grader API")
	} else {
		fs.Var(&f.shard, "shard", "grade only shard K of N (K/N)")
		fs.StringVar(&f.baseline, "baseline", "", "compare with the base branch's results file; hold when the cases graded in both did worse")
	}
	pos, done := a.parseFlags(fs, args)
	if done != nil {
		return *done
	}
	path, err := manifestArg(name, pos)
	if err != nil {
		return a.fail(name, err)
	}
	if err := outputFor(a).check(f.results); err != nil {
		return a.fail(name, err)
	}
	s, err := gate.LoadSuite(path, f.limits)
	if err != nil {
		return a.fail(name, err)
	}
	opts := gate.GradeOptions{
		GraderOptions: f.graderOptions(),
		CanariesOnly:  canariesOnly,
		CanarySeed:    f.canarySeed,
		Version:       currentVersion().String(),
		Image:         a.getenv(imageEnv),
		BaselineFile:  f.baseline,
		Limits:        f.limits,
	}
	if f.shard.count > 0 {
		opts.Shard = shard.Shard{Index: f.shard.index, Count: f.shard.count}
	}
	if hostedOn {
		opts.Hosted = hostedURL
	}
	if !canariesOnly && s.Manifest.Grader.Judge == nil {
		opts.SpoolDir = os.TempDir()
		opts.Progress = a.progress(f.format)
	}
	res, err := a.host.Grade(ctx, s, opts)
	if res == nil {
		return a.fail(name, err)
	}
	defer res.Close()
	o := a.finish(name, res, f)
	if err != nil {
		fmt.Fprintf(a.stderr, "gradegate %s: hosted grader: %v\n", name, err)
		o.code = exitInternal
	}
	if res.Hosted != nil && f.format == formatHuman {
		if err := res.Hosted.WriteText(a.stdout); err != nil {
			return a.failWith(name, o, err)
		}
	}
	return o
}

// finish writes the results file and stdout, and turns the verdict into the
// exit code. A failure to write is a tool failure: never a pass.
func (a *app) finish(name string, res *results.Results, f gradeFlags) outcome {
	o := outcome{results: res, code: exitHold}
	if res.Verdict == results.VerdictPass {
		o.code = exitPass
	}
	if f.results != "" {
		if err := outputFor(a).writeJSON(f.results, res); err != nil {
			return a.failWith(name, o, err)
		}
	}
	if err := a.render(res, f.format); err != nil {
		return a.failWith(name, o, err)
	}
	return o
}

// failWith reports a failure after results exist: the action still reports
// them, and the exit code is never a pass.
func (a *app) failWith(name string, o outcome, err error) outcome {
	fmt.Fprintf(a.stderr, "gradegate %s: %v\n", name, err)
	o.code = exitInternal
	return o
}

func (a *app) render(res *results.Results, f format) error {
	switch f {
	case formatJSON:
		return res.WriteJSON(a.stdout)
	case formatMarkdown:
		return render.Markdown(a.stdout, res, render.MarkdownOptions{})
	}
	return render.Human(a.stdout, res, a.colorOptions())
}

// colorOptions turns color on only for a terminal without NO_COLOR.
func (a *app) colorOptions() render.Options {
	file, ok := a.stdout.(*os.File)
	return render.Options{Color: ok && render.ColorEnabled(a.getenv, file)}
}

// cmdValidate checks the manifest, the digests and the dataset contract
// without grading: exit 0 when clean, 1 when something would hold.
func (a *app) cmdValidate(ctx context.Context, args []string) outcome {
	fs := newFlagSet("validate", a.stderr)
	f := formatHuman
	fs.Var(&f, "format", "stdout format: human, json or markdown")
	python := gate.DefaultPython(a.getenv)
	fs.StringVar(&python, "python", python, "Python interpreter for the grader lint (env GRADEGATE_PYTHON)")
	var limits input.Limits
	registerLimits(fs, &limits)
	pos, done := a.parseFlags(fs, args)
	if done != nil {
		return *done
	}
	path, err := manifestArg("validate", pos)
	if err != nil {
		return a.fail("validate", err)
	}
	s, err := gate.LoadSuite(path, limits)
	if err != nil {
		return a.fail("validate", err)
	}
	// The grader's Python checks (its own processes) run while the dataset
	// is read; a dataset that cannot be used is still reported first, and
	// the checks are then stopped.
	pyCtx, stopPython := context.WithCancel(ctx)
	var pyChecks sync.WaitGroup
	defer func() {
		stopPython()
		pyChecks.Wait()
	}()
	var lintFindings []manifest.Finding
	var lintErr error
	if s.Manifest.Grader.Judge == nil {
		pyChecks.Go(func() { lintFindings, lintErr = s.PythonChecks(pyCtx, python, a.getenv(imageEnv)) })
	}
	// One pass over the dataset: the contract checks and what a run would
	// omit, without keeping the rows.
	src := dataset.Open(s.FS, s.Manifest)
	cov := newCoverage(s.Manifest)
	for {
		c, ok := src.Next()
		if !ok {
			break
		}
		cov.add(c)
	}
	sum, err := src.Close()
	if err := errors.Join(err, s.LaterFiles()); err != nil {
		return a.fail("validate", err)
	}
	_, mismatches, err := digest.CheckDigests(s.FS, s.Manifest, true)
	if err != nil {
		return a.fail("validate", err)
	}
	v := &render.Validation{Schema: render.ValidationSchema, Findings: []manifest.Finding{}, Warnings: []manifest.Finding{}}
	for _, mm := range mismatches {
		v.Findings = append(v.Findings, manifest.Finding{
			Code: results.ReasonDigestMismatch, Severity: manifest.SeverityHold,
			File: s.Manifest.File, Line: s.Manifest.Line(mm.Key), Message: digestMessage(mm),
		})
	}
	pyChecks.Wait()
	if lintErr != nil {
		return a.fail("validate", lintErr)
	}
	if s.Manifest.Grader.Judge == nil {
		a.host.NoteImageTag(s)
	} else {
		lintFindings = lint.ModelGrader(s.Manifest)
	}
	found := append(append(sum.Findings, sum.Labels.Findings()...), lintFindings...)
	for _, fd := range append(found, cov.findings(sum)...) {
		if fd.Severity == manifest.SeverityHold {
			v.Findings = append(v.Findings, fd)
		} else {
			v.Warnings = append(v.Warnings, fd)
		}
	}
	if err := a.renderValidation(v, f); err != nil {
		return a.fail("validate", err)
	}
	if len(v.Findings) > 0 {
		return outcome{code: exitHold}
	}
	return outcome{code: exitPass}
}

func (a *app) renderValidation(v *render.Validation, f format) error {
	switch f {
	case formatJSON:
		return render.JSON(a.stdout, v)
	case formatMarkdown:
		return render.ValidationMarkdown(a.stdout, v, render.MarkdownOptions{})
	}
	return render.ValidationHuman(a.stdout, v, a.colorOptions())
}

// cmdDoctor tries every sandbox layer on this machine.
func (a *app) cmdDoctor(ctx context.Context, args []string) outcome {
	fs := newFlagSet("doctor", a.stderr)
	f := formatHuman
	fs.Var(&f, "format", "stdout format: human, json or markdown")
	python := gate.DefaultPython(a.getenv)
	fs.StringVar(&python, "python", python, "Python interpreter to try the checks with")
	if _, done := a.parseFlags(fs, args); done != nil {
		return *done
	}
	// Doctor applies every layer the machine allows whatever New decides;
	// when New refuses (no network boundary), an unsandboxed Sandbox still
	// carries the launcher, and the report says what failed.
	sb, err := sandbox.New()
	if err != nil {
		fmt.Fprintf(a.stderr, "gradegate doctor: %v\n", err)
		if sb, err = sandbox.New(sandbox.WithUnsandboxed(true)); err != nil {
			return a.fail("doctor", err)
		}
	}
	exe := ""
	if py, err := a.host.Python(ctx, sb, python); err == nil {
		exe = py.Executable
	} else {
		fmt.Fprintf(a.stderr, "gradegate doctor: %v (Python checks skipped)\n", err)
	}
	rep := sandbox.Doctor(ctx, sb, exe)
	defer a.doctorImage(ctx, exe, f)
	var werr error
	switch f {
	case formatJSON:
		werr = render.JSON(a.stdout, rep)
	case formatMarkdown:
		werr = writeDoctorMarkdown(a.stdout, rep)
	default:
		werr = rep.WriteText(a.stdout)
	}
	if werr != nil {
		return a.fail("doctor", werr)
	}
	if !rep.NetworkBoundary {
		fmt.Fprintln(a.stderr, "gradegate doctor: the network boundary cannot be established here: `gradegate run` refuses to grade (exit 3) unless --unsandboxed")
	}
	if !rep.FilesystemBoundary {
		fmt.Fprintln(a.stderr, "gradegate doctor: the filesystem boundary (Landlock) cannot be established here: `gradegate run` refuses to grade (exit 3) unless --unsandboxed")
	}
	if !rep.NetworkBoundary || !rep.FilesystemBoundary {
		return outcome{code: exitInternal}
	}
	return outcome{code: exitPass}
}

func writeDoctorMarkdown(w io.Writer, rep sandbox.Report) error {
	if _, err := fmt.Fprintf(w, "**%s**\n\n| layer | check | status | detail |\n|---|---|---|---|\n", render.SandboxLine(rep.Sandbox)); err != nil {
		return err
	}
	for _, c := range rep.Checks {
		if _, err := fmt.Fprintf(w, "| %s | %s | %s | %s |\n", c.Layer, c.Name, c.Status, c.Detail); err != nil {
			return err
		}
	}
	return nil
}

// digestMessage says which file changed and both digests.
func digestMessage(mm digest.DigestMismatch) string {
	if mm.Want == "" {
		return fmt.Sprintf("%s %s is not pinned: add %s (gradegate pin writes %s)", mm.Name, mm.File, mm.Key, mm.Got)
	}
	return fmt.Sprintf("%s %s has %s but %s pins %s (gradegate pin records the new digest after an intended change)", mm.Name, mm.File, mm.Got, mm.Key, mm.Want)
}

// cmdMerge combines shard results into one verdict.
func (a *app) cmdMerge(ctx context.Context, args []string) outcome {
	fs := newFlagSet("merge", a.stderr)
	f := gradeFlags{format: formatHuman}
	fs.Var(&f.format, "format", "stdout format: human, json or markdown")
	fs.StringVar(&f.results, "results", "", "write the merged results JSON to this file")
	path := "gradegate.yaml"
	fs.StringVar(&path, "manifest", path, "the manifest the shards ran")
	registerLimits(fs, &f.limits)
	files, done := a.parseFlags(fs, args)
	if done != nil {
		return *done
	}
	if len(files) == 0 {
		return a.fail("merge", fmt.Errorf("%w: gradegate merge needs the shard results files", manifest.ErrInput))
	}
	if err := outputFor(a).check(f.results); err != nil {
		return a.fail("merge", err)
	}
	s, err := gate.LoadSuite(path, f.limits)
	if err != nil {
		return a.fail("merge", err)
	}
	// Each shard is read twice as a stream: once for its header, once for
	// its rows, which the merge takes one at a time.
	var parts []gate.ShardPart
	var errs []error
	for _, name := range files {
		p, closeFile, err := gate.OpenShard(name, f.limits, func(head *results.Results) *results.ShardCheck {
			return results.NewShardCheck(name, head, s.Manifest.Grader.PassThreshold)
		})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		defer closeFile()
		parts = append(parts, p)
	}
	if err := errors.Join(errs...); err != nil {
		return a.fail("merge", err)
	}
	res, err := gate.MergeStream(s.Manifest, parts, gate.MergeOptions{SpoolDir: os.TempDir()})
	if err != nil {
		return a.fail("merge", err)
	}
	defer res.Close()
	return a.finish("merge", res, f)
}

// coverage is what validate can tell, without grading, about the cases a
// run would omit or the mandatory slices it could not fill: a case without
// a sample, intended cases missing from the file, a mandatory slice with
// fewer rows than min_cases (or none). Each holds when the run would hold
// for it (omitted_cases, slice_too_small). It folds the rows one at a time.
type coverage struct {
	m         *manifest.Manifest
	mandatory map[string]bool
	missing   []dataset.Case  // rows without a sample, their bytes dropped
	rows      map[string]int  // mandatory slice -> rows with a sample
	inData    map[string]bool // every slice some row is in, for "did you mean"
}

// codeUnknownSlice is the warning for a slice rule in gate.slices that
// names no slice of the dataset (a mandatory one holds as slice_too_small).
const codeUnknownSlice = "unknown_slice"

func newCoverage(m *manifest.Manifest) *coverage {
	c := &coverage{m: m, mandatory: map[string]bool{}, rows: map[string]int{}, inData: map[string]bool{}}
	for _, r := range m.Gate.Slices {
		if r.Mandatory {
			c.mandatory[r.Name] = true
		}
	}
	return c
}

func (cv *coverage) add(c dataset.Case) {
	for _, sl := range c.Slices {
		cv.inData[sl] = true
	}
	if c.Sample == nil {
		cv.missing = append(cv.missing, dataset.Case{ID: c.ID, Slices: c.Slices, File: c.File, Line: c.Line})
		return
	}
	for _, sl := range c.Slices {
		if cv.mandatory[sl] {
			cv.rows[sl]++
		}
	}
}

func (cv *coverage) findings(sum *dataset.Summary) []manifest.Finding {
	m := cv.m
	var out []manifest.Finding
	notInDataset := max(sum.Intended-sum.Rows, 0)
	omitted := len(cv.missing) + notInDataset
	over := omitted > m.Gate.MaxOmitted
	for _, c := range cv.missing {
		sev := manifest.SeverityWarn
		inMandatory := false
		for _, sl := range c.Slices {
			inMandatory = inMandatory || cv.mandatory[sl]
		}
		if over || inMandatory {
			sev = manifest.SeverityHold
		}
		out = append(out, manifest.Finding{Code: results.OmittedMissingSample, Severity: sev, File: c.File, Line: c.Line, CaseID: c.ID,
			Message: fmt.Sprintf("case %s has no sample (inline or in the samples file): a run omits it", c.ID)})
	}
	if notInDataset > 0 {
		sev := manifest.SeverityWarn
		if over {
			sev = manifest.SeverityHold
		}
		out = append(out, manifest.Finding{Code: results.OmittedNotInDataset, Severity: sev, File: m.File, Line: m.Line("dataset.intended_cases"),
			Message: fmt.Sprintf("dataset.intended_cases is %d but %s has %d rows: %d intended cases are missing", sum.Intended, m.Dataset.Path, sum.Rows, notInDataset)})
	}
	names := make([]string, 0, len(cv.inData))
	for sl := range cv.inData {
		names = append(names, sl)
	}
	sort.Strings(names)
	for _, r := range m.Gate.Slices {
		if !r.Mandatory && !cv.inData[r.Name] {
			// A rule for a slice no row has never applies: most likely a typo.
			out = append(out, manifest.Finding{Code: codeUnknownSlice, Severity: manifest.SeverityWarn, File: m.File, Line: m.Line("gate.slices." + r.Name),
				Message: fmt.Sprintf("gate.slices.%s: no case of the dataset is in slice %s, so its rule never applies%s", r.Name, r.Name, manifest.Suggest(r.Name, names))})
			continue
		}
		if !r.Mandatory || cv.rows[r.Name] >= max(r.MinCases, 1) {
			continue
		}
		msg := fmt.Sprintf("mandatory slice %s has %d cases with a sample, fewer than min_cases %d", r.Name, cv.rows[r.Name], r.MinCases)
		if cv.rows[r.Name] == 0 {
			msg = fmt.Sprintf("mandatory slice %s has no case with a sample in the dataset (it may have vanished in a join or a rename)", r.Name)
			if !cv.inData[r.Name] {
				msg += manifest.Suggest(r.Name, names)
			}
		}
		out = append(out, manifest.Finding{Code: results.ReasonSliceTooSmall, Severity: manifest.SeverityHold, File: m.File, Line: m.Line("gate.slices." + r.Name), Message: msg})
	}
	return out
}
