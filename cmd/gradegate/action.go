package main

import (
	"context"
	"crypto/rand"
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

// runAction runs gradegate as the GitHub Action: command and options come
// from the INPUT_* variables, and a command that posts (run, canary, merge,
// mutate, shadow) is reported as a step summary, outputs and a check run on
// the pull request's head commit. A reporting failure turns a pass into
// exit 3; a hold stays 1.
func runAction(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer) int {
	// Everything gradegate and the graders print runs with the runner's
	// command processing stopped; gradegate's own commands are each written
	// in a window that resumes it and stops it again with a fresh token.
	win := newCommandWindow(stdout)
	defer win.close()
	gh := githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(win))
	in, err := readInputs(gh)
	if in.token != "" {
		// The runner masks secrets it passes, but a token may also arrive
		// through an expression it does not know to be secret; masking it
		// before anything else is printed keeps it out of the log whatever
		// a later message quotes.
		gh.AddMask(in.token)
	}
	win.stop()
	if err != nil {
		for _, line := range errorLines(err) {
			gh.Errorf("gradegate: %s", line)
		}
		return exitInput
	}

	if in.image != "" {
		running := getenv(imageEnv)
		if err := checkImage(in.image, running); err != nil {
			gh.Errorf("gradegate: %v", err)
			return exitInput
		}
		if running == "" {
			// Outside the published images (a binary on the runner): the
			// grader lint checks imports against the image the input names.
			outer := getenv
			getenv = func(k string) string {
				if k == imageEnv {
					return in.image
				}
				return outer(k)
			}
		}
	}
	resultsFile := ""
	if in.command != "merge" {
		resultsFile = in.results
	}
	if posts(in.command) && resultsFile == "" {
		// The output "results" is always set. RUNNER_TEMP is inside the
		// action's container; a later step that needs the file sets the
		// results input to a workspace path.
		resultsFile, err = tempResultsFile(getenv("RUNNER_TEMP"))
		if err != nil {
			gh.Errorf("gradegate: %v", err)
			return exitInternal
		}
	}
	args, err := in.args(resultsFile)
	if err != nil {
		gh.Errorf("gradegate: %v", err)
		return exitInput
	}
	fmt.Fprintf(stdout, "gradegate %s\n", strings.Join(args, " "))
	out := execute(ctx, args, getenv, stdout, stderr, actionOutputRoots(getenv))
	if !posts(in.command) {
		return out.code
	}

	runURL := workflowRunURL(getenv)
	var errs []error
	var code int
	passRate, checkURL := "", ""
	switch {
	case out.results != nil:
		res := out.results
		md := render.MarkdownString(res, render.MarkdownOptions{MaxBytes: maxStepSummaryBytes, RunURL: runURL})
		errs = append(errs, fileCommand(gh, "GITHUB_STEP_SUMMARY", func() { gh.AddStepSummary(md) }))
		checkURL, err = reportCheck(ctx, gh, getenv, in, posting{res: res}, runURL)
		errs = append(errs, err)
		commentMD := render.MarkdownString(res, render.MarkdownOptions{MaxBytes: checkrun.MaxSummaryBytes, RunURL: runURL})
		errs = append(errs, reportComment(ctx, gh, getenv, in, checkName(in, posting{res: res}), commentMD, checkURL))
		if res.Overall.PassRate != nil {
			passRate = strconv.FormatFloat(*res.Overall.PassRate, 'f', 4, 64)
		}
		code = failClosed(out.code, res.Verdict, errs...)
	case out.report != nil:
		rep := out.report
		md := cutMarkdown(rep.markdown, maxStepSummaryBytes)
		errs = append(errs, fileCommand(gh, "GITHUB_STEP_SUMMARY", func() { gh.AddStepSummary(md) }))
		// The command's exit code is its verdict (mutate 0
		// when the score meets the bar, shadow 0 when nothing changed).
		p := posting{report: rep, pass: out.code == exitPass}
		checkURL, err = reportCheck(ctx, gh, getenv, in, p, runURL)
		errs = append(errs, err)
		errs = append(errs, reportComment(ctx, gh, getenv, in, checkName(in, p), rep.markdown, checkURL))
		resultsFile = rep.file
		code = failClosed(out.code, verdictOf(out.code), errs...)
	default:
		// Nothing to report beyond the failure execute already printed, but
		// the summary says where to look rather than staying empty.
		noVerdict := fmt.Sprintf("## gradegate %s: no verdict\n\n`gradegate %s` exited %d before producing results; the job log says why.\n",
			in.command, strings.Join(args, " "), out.code)
		errs = append(errs, fileCommand(gh, "GITHUB_STEP_SUMMARY", func() { gh.AddStepSummary(noVerdict) }))
		// A comment a pass left on an earlier push must not stand.
		if name := checkName(in, posting{}); name != "" {
			errs = append(errs, reportComment(ctx, gh, getenv, in, name, noVerdict+"\n[Workflow run]("+runURL+")\n", ""))
		}
		resultsFile = ""
		code = failClosed(out.code, "", errs...)
	}

	// The verdict output follows the exit code, not the results: a pass
	// whose reporting failed exits 3, and a later step guarded by
	// `steps.<id>.outputs.verdict == 'pass'` (with `if: always()`, or
	// after `continue-on-error`) must not go ahead on it.
	verdict := verdictOf(code)
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

// verdictOf is the verdict an exit code stands for: only 0 is a pass.
func verdictOf(code int) string {
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

// tempResultsFile returns a fresh path for the results document in dir
// (RUNNER_TEMP), or in the system's temporary directory when dir is unset or
// missing, as it can be inside a container action.
func tempResultsFile(dir string) (string, error) {
	if st, err := os.Stat(dir); dir == "" || err != nil || !st.IsDir() {
		dir = os.TempDir()
	}
	f, err := os.CreateTemp(dir, "gradegate-results-*.json")
	if err != nil {
		return "", fmt.Errorf("creating the results file: %w", err)
	}
	name := f.Name()
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("creating the results file: %w", err)
	}
	return name, nil
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

// commandWindow keeps GitHub's runner from reading workflow commands in
// anything gradegate prints, except its own. stop writes
// "::stop-commands::<token>", after which the runner reads no "::command::"
// and no "##[command]" until a line "::<token>::"; every Write (one command
// of go-githubactions) is wrapped in such a resume and a new stop, with a
// fresh random token each time, so text printed between them (a grader's
// message, a case id, a manifest key) never speaks for gradegate.
// (https://docs.github.com/actions/reference/workflows-and-actions/workflow-commands#stopping-and-starting-workflow-commands)
type commandWindow struct {
	w     io.Writer
	token string // the token commands are stopped with; "" while they run
}

func newCommandWindow(w io.Writer) *commandWindow { return &commandWindow{w: w} }

// stop stops command processing with a fresh token.
func (c *commandWindow) stop() {
	if c.token != "" {
		return
	}
	c.token = rand.Text()
	fmt.Fprintf(c.w, "::stop-commands::%s\n", c.token)
}

// close resumes command processing for the steps that follow.
func (c *commandWindow) close() {
	if c.token != "" {
		fmt.Fprintf(c.w, "::%s::\n", c.token)
		c.token = ""
	}
}

// Write writes one of gradegate's own commands with processing resumed.
func (c *commandWindow) Write(p []byte) (int, error) {
	stopped := c.token != ""
	c.close()
	n, err := c.w.Write(p)
	if stopped {
		c.stop()
	}
	return n, err
}

// checkImage holds the image input to the image the step runs in
// (GRADEGATE_IMAGE, empty outside the published images). A container
// action's image is fixed by its path, so the input cannot switch it; a
// mismatch stops the step with the path that runs the wanted image.
func checkImage(want, running string) error {
	if want == "" || running == "" || want == running {
		return nil
	}
	path := "gradegate/gradegate"
	if want == "slim" {
		path = "gradegate/gradegate/slim"
	}
	return fmt.Errorf("input image is %s, but this step runs the %s image: the image comes with the action path, so use `uses: %s@<commit>` for the %s image", want, running, path, want)
}
