// Package action is gradegate's GitHub Action step: it reads the action's
// inputs (INPUT_*) and reports what a command produced as a step summary,
// outputs, a check run, a sticky pull request comment, or annotations as
// workflow commands. Everything it reads and writes comes in as options.
package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/gradegate/gradegate/gate/checkrun"
	"github.com/gradegate/gradegate/gate/render"
	"github.com/gradegate/gradegate/gate/results"
)

// gradegate's exit codes, which the step reports on and may turn into a
// tool failure: pass 0, hold 1, unusable input 2, tool failure 3.
const (
	exitPass     = 0
	exitHold     = 1
	exitInput    = 2
	exitInternal = 3
)

// GitHub's limits for what a step writes
// (https://docs.github.com/actions/using-workflows/workflow-commands-for-github-actions).
const (
	// maxStepSummaryBytes stays under the 1 MiB a step summary may hold.
	maxStepSummaryBytes = 1<<20 - 1<<10
	// maxCommandAnnotations is how many annotations of one level a step can
	// show: GitHub displays at most 10 error and 10 warning annotations per
	// step (and 50 per job); the rest would be lost silently.
	maxCommandAnnotations = 10
)

// Step is one run of the action: its environment, and the log every
// workflow command goes to.
type Step struct {
	getenv func(string) string
	win    *commandWindow
	gh     *githubactions.Action
}

// Option configures a Step.
type Option func(*stepConfig)

type stepConfig struct {
	getenv func(string) string
	stdout io.Writer
}

// WithGetenv is the step's environment (the runner's variables and the
// INPUT_* of the action). Without it the step sees an empty environment.
func WithGetenv(getenv func(string) string) Option {
	return func(c *stepConfig) { c.getenv = getenv }
}

// WithWriter is the step's log, where workflow commands are written.
// Without it they are discarded.
func WithWriter(w io.Writer) Option {
	return func(c *stepConfig) { c.stdout = w }
}

// New is a step. Everything gradegate and the graders print runs with the
// runner's command processing stopped (Start stops it); the step's own
// commands are each written in a window that resumes it and stops it again
// with a fresh token. Close resumes it for the steps that follow.
func New(opts ...Option) *Step {
	c := stepConfig{getenv: func(string) string { return "" }, stdout: io.Discard}
	for _, o := range opts {
		o(&c)
	}
	win := newCommandWindow(c.stdout)
	return &Step{
		getenv: c.getenv,
		win:    win,
		gh:     githubactions.New(githubactions.WithGetenv(c.getenv), githubactions.WithWriter(win)),
	}
}

// Start reads the inputs, masks the token and stops command processing.
func (s *Step) Start() (Inputs, error) {
	in, err := readInputs(s.gh)
	if in.Token != "" {
		// The runner masks secrets it passes, but a token may also arrive
		// through an expression it does not know to be secret; masking it
		// before anything else is printed keeps it out of the log whatever
		// a later message quotes.
		s.gh.AddMask(in.Token)
	}
	s.win.stop()
	return in, err
}

// Close resumes command processing.
func (s *Step) Close() { s.win.close() }

// Errors writes an error annotation for every problem of err.
func (s *Step) Errors(err error) {
	for _, line := range render.ErrorLines(err) {
		s.gh.Errorf("gradegate: %s", line)
	}
}

// Outcome is what a command produced, for the step to report.
type Outcome struct {
	Code    int
	Results *results.Results // run, canary, merge; nil when they failed
	Report  *Report          // mutate, shadow; nil when they failed
}

// Report is what a command without gate results (mutate, shadow) gives the
// step to post.
type Report struct {
	Manifest string // the manifest's name, for the default check run name
	Title    string // one line: the check run's title
	Markdown string // the whole report: step summary and check run summary
	File     string // the report JSON the command wrote, or ""
}

// Report posts what the command args of the inputs produced (a command that
// posts, see Posts): the step summary, the check run, the comment and the
// outputs, and returns the step's exit code. resultsFile is where the
// command wrote its results. A reporting failure turns a pass into exit 3;
// a hold stays 1.
func (s *Step) Report(ctx context.Context, in Inputs, args []string, resultsFile string, out Outcome) int {
	gh, getenv := s.gh, s.getenv
	runURL := workflowRunURL(getenv)
	var errs []error
	var code int
	passRate, checkURL := "", ""
	switch {
	case out.Results != nil:
		res := out.Results
		// The action always writes a results file; a reader finds it as the
		// step's results output (and as the artifact a workflow uploads).
		const where = "the results file (the step's results output)"
		md := render.MarkdownString(res, render.MarkdownOptions{MaxBytes: maxStepSummaryBytes, RunURL: runURL, ResultsFile: where})
		errs = append(errs, fileCommand(gh, "GITHUB_STEP_SUMMARY", func() { gh.AddStepSummary(md) }))
		var err error
		checkURL, err = reportCheck(ctx, gh, getenv, in, posting{res: res}, runURL)
		errs = append(errs, err)
		commentMD := render.MarkdownString(res, render.MarkdownOptions{MaxBytes: checkrun.MaxSummaryBytes, RunURL: runURL, ResultsFile: where})
		errs = append(errs, reportComment(ctx, gh, getenv, in, checkName(in, posting{res: res}), commentMD, checkURL))
		if res.Overall.PassRate != nil {
			passRate = strconv.FormatFloat(*res.Overall.PassRate, 'f', 4, 64)
		}
		code = failClosed(out.Code, res.Verdict, errs...)
	case out.Report != nil:
		rep := out.Report
		md := cutMarkdown(rep.Markdown, maxStepSummaryBytes)
		errs = append(errs, fileCommand(gh, "GITHUB_STEP_SUMMARY", func() { gh.AddStepSummary(md) }))
		// The command's exit code is its verdict (mutate 0
		// when the score meets the bar, shadow 0 when nothing changed).
		p := posting{report: rep, pass: out.Code == exitPass}
		var err error
		checkURL, err = reportCheck(ctx, gh, getenv, in, p, runURL)
		errs = append(errs, err)
		errs = append(errs, reportComment(ctx, gh, getenv, in, checkName(in, p), rep.Markdown, checkURL))
		resultsFile = rep.File
		code = failClosed(out.Code, VerdictOf(out.Code), errs...)
	default:
		// Nothing to report beyond the failure the command already printed,
		// but the summary says where to look rather than staying empty.
		// The arguments carry paths from the repository (a merge's shard
		// files are whatever names the glob matched): escaped, outside a
		// code span, whose text no escape reaches.
		noVerdict := fmt.Sprintf("## gradegate %s: no verdict\n\n`gradegate %s` (%s) exited %d before producing results; the job log says why.\n",
			render.MarkdownCell(in.Command), render.MarkdownCell(in.Command), render.MarkdownCell(strings.Join(args, " ")), out.Code)
		errs = append(errs, fileCommand(gh, "GITHUB_STEP_SUMMARY", func() { gh.AddStepSummary(noVerdict) }))
		// A comment a pass left on an earlier push must not stand.
		if name := checkName(in, posting{}); name != "" {
			errs = append(errs, reportComment(ctx, gh, getenv, in, name, noVerdict+"\n[Workflow run]("+runURL+")\n", ""))
		}
		resultsFile = ""
		code = failClosed(out.Code, "", errs...)
	}

	// The verdict output follows the exit code, not the results: a pass
	// whose reporting failed exits 3, and a later step guarded by
	// `steps.<id>.outputs.verdict == 'pass'` (with `if: always()`, or
	// after `continue-on-error`) must not go ahead on it.
	verdict := VerdictOf(code)
	outErr := fileCommand(gh, "GITHUB_OUTPUT", func() {
		gh.SetOutput("verdict", verdict)
		gh.SetOutput("pass-rate", passRate)
		gh.SetOutput("results", resultsFile)
		gh.SetOutput("check-run-url", checkURL)
	})
	errs = append(errs, outErr)
	reportErrors(gh, errs)
	return failClosed(code, verdict, outErr)
}

// VerdictOf is the verdict an exit code stands for: only 0 is a pass.
func VerdictOf(code int) string {
	if code == exitPass {
		return results.VerdictPass
	}
	return results.VerdictHold
}

// failClosed is the exit code after reporting: nothing but a reported pass
// exits 0 (an unknown or empty verdict included), and a hold is never
// turned into anything but 1.
func failClosed(code int, verdict string, errs ...error) int {
	if code == exitPass && verdict != results.VerdictPass {
		code = exitHold
		if verdict == "" {
			code = exitInternal
		}
	}
	if code == exitPass && errors.Join(errs...) != nil {
		return exitInternal
	}
	return code
}

// TempResultsFile returns a fresh path for the results document in dir
// (RUNNER_TEMP), or in the system's temporary directory when dir is unset or
// missing, as it can be inside a container action.
func TempResultsFile(dir string) (string, error) {
	f, err := os.CreateTemp(TempDir(dir), "gradegate-results-*.json")
	if err != nil {
		return "", fmt.Errorf("creating the results file: %w", err)
	}
	name := f.Name()
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("creating the results file: %w", err)
	}
	return name, nil
}

// TempDir is the runner's temporary folder runnerTemp (RUNNER_TEMP), or the
// system's temporary folder in its stead when it is unset or missing in the
// container.
func TempDir(runnerTemp string) string {
	if st, err := os.Stat(runnerTemp); runnerTemp == "" || err != nil || !st.IsDir() {
		return os.TempDir()
	}
	return runnerTemp
}

// fileCommand runs writes to an environment file (GITHUB_OUTPUT,
// GITHUB_STEP_SUMMARY) and returns their failure as an error:
// go-githubactions panics when the file cannot be written.
func fileCommand(gh *githubactions.Action, env string, write func()) (err error) {
	if gh.Getenv(env) == "" {
		return fmt.Errorf("%s is not set", env)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("writing %s: %v", env, r)
		}
	}()
	write()
	return nil
}

func reportErrors(gh *githubactions.Action, errs []error) {
	for _, err := range errs {
		if err == nil {
			continue
		}
		for _, line := range render.ErrorLines(err) {
			gh.Errorf("gradegate: reporting failed: %s", line)
		}
	}
}
