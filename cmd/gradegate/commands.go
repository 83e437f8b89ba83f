package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"

	"github.com/gradegate/gradegate/canary/hosted"
	"github.com/gradegate/gradegate/gate"
	"github.com/gradegate/gradegate/gate/render"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/manifest/input"
)

// gradeFlags are the options of the commands that run the grader.
type gradeFlags struct {
	format       format
	results      string
	shard        shard.Flag
	workers      int
	unsandboxed  bool
	python       string
	judge        judgeFlags // model graders
	limits       input.Limits
	output       results.OutputLimits // --max-output
	canarySeed   uint64
	baseline     string // run --baseline: the base branch's results file
	baseManifest string // run --base-manifest: the base branch's manifest
	wide         bool   // --wide: every column of the terminal tables
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
	fs.BoolVar(&g.wide, "wide", false, "human format: show every column of the slice and worst-cases tables (by default they fit 100 columns)")
	g.workers = min(runtime.NumCPU(), maxWorkers)
	fs.Var(positive{&g.workers, maxWorkers}, "workers", fmt.Sprintf("grader processes, 1 to %d; default: the number of CPUs", maxWorkers))
	fs.BoolVar(&g.unsandboxed, "unsandboxed", false, "grade without the sandbox (every output says so)")
	fs.StringVar(&g.python, "python", gate.DefaultPython(getenv), "Python interpreter for the grader (env GRADEGATE_PYTHON)")
	g.judge.register(fs)
	registerLimits(fs, &g.limits)
	fs.Var(&g.output, "max-output", fmt.Sprintf("bound on the case rows the results hold, row=SIZE (one case's row; default %s) or results=SIZE (every row together; default %s); a case past either is invalid_return; repeatable",
		input.FormatSize(results.DefaultRowLimit), input.FormatSize(results.DefaultResultsLimit)))
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
		fs.StringVar(&f.baseManifest, "base-manifest", "", "compare with the base branch's manifest (and its dataset); hold on every weakening (policy_weakened) unless gate.weakening_reason acknowledges it")
	}
	pos, done := a.parseFlags(fs, args)
	if done != nil {
		return *done
	}
	path, err := manifestArg(name, pos)
	if err != nil {
		return a.fail(name, err)
	}
	if err := a.writer().Check(f.results); err != nil {
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
		BaseManifest:  f.baseManifest,
		Limits:        f.limits,
		Output:        f.output,
	}
	if f.shard.Count > 0 {
		opts.Shard = f.shard.Shard
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
		if err := a.writer().WriteJSON(f.results, res); err != nil {
			return a.failWith(name, o, err)
		}
	}
	if err := a.render(res, f); err != nil {
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

// render writes the results on stdout in the --format asked for; rows a
// report leaves out are said to be in the --results file, or that one
// would hold them.
func (a *app) render(res *results.Results, f gradeFlags) error {
	switch f.format {
	case formatJSON:
		return res.WriteJSON(a.stdout)
	case formatMarkdown:
		return render.Markdown(a.stdout, res, render.MarkdownOptions{ResultsFile: f.results})
	}
	opts := a.colorOptions()
	opts.Wide, opts.ResultsFile = f.wide, f.results
	return render.Human(a.stdout, res, opts)
}
