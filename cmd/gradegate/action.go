package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sethvargo/go-githubactions"

	"github.com/gradegate/gradegate/gate/checkrun"
	"github.com/gradegate/gradegate/gate/render"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
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

// actionInputs are the action's inputs (action.yml), read from INPUT_*.
type actionInputs struct {
	manifest  string
	command   string
	results   string // run, canary, mutate, shadow: where to write; merge: the shard files
	shard     string
	base      string // shadow: the old grader source
	baseline  string // run: the base branch's results file (--baseline)
	checkName string
	hosted    bool
	comment   bool // keep a sticky pull request comment with the summary
	token     string
	// judgeCache and judgeCacheMode are --judge-cache and
	// --judge-cache-mode: a model grader's recorded calls (run, canary,
	// shadow).
	judgeCache, judgeCacheMode string
	// image is the image the step must run in: full, slim, or empty for
	// the action path's own.
	image string
}

// readInputs reads and checks the inputs. go-githubactions maps an input
// name to INPUT_<NAME> upper-cased with spaces (not dashes) replaced, which
// is what the runner sets: check-name arrives as INPUT_CHECK-NAME.
func readInputs(gh *githubactions.Action) (actionInputs, error) {
	in := actionInputs{
		manifest:  gh.GetInput("manifest"),
		command:   gh.GetInput("command"),
		results:   gh.GetInput("results"),
		shard:     gh.GetInput("shard"),
		base:      gh.GetInput("base"),
		baseline:  gh.GetInput("baseline"),
		checkName: gh.GetInput("check-name"),
		token:     gh.GetInput("github-token"),

		judgeCache:     gh.GetInput("judge-cache"),
		judgeCacheMode: gh.GetInput("judge-cache-mode"),
		image:          gh.GetInput("image"),
	}
	if in.manifest == "" {
		in.manifest = "gradegate.yaml"
	}
	if in.command == "" {
		in.command = "run"
	}
	var errs []error
	if h := gh.GetInput("hosted"); h != "" {
		b, err := strconv.ParseBool(h)
		if err != nil {
			errs = append(errs, fmt.Errorf("input hosted: want true or false, got %q", h))
		}
		in.hosted = b
	}
	if c := gh.GetInput("comment"); c != "" {
		b, err := strconv.ParseBool(c)
		if err != nil {
			errs = append(errs, fmt.Errorf("input comment: want true or false, got %q", c))
		}
		in.comment = b
	}
	switch in.image {
	case "", "full", "slim":
	default:
		errs = append(errs, fmt.Errorf("input image: want full or slim, got %q", in.image))
	}
	switch in.command {
	case "run", "canary", "merge", "validate", "mutate", "shadow", "pin", "doctor", "version":
	default:
		errs = append(errs, fmt.Errorf("input command: want run, canary, merge, validate, mutate, shadow, pin, doctor or version, got %q", in.command))
	}
	if in.shard != "" && in.command != "run" {
		errs = append(errs, fmt.Errorf("input shard applies to command run, not %s", in.command))
	}
	if in.baseline != "" && in.command != "run" {
		errs = append(errs, fmt.Errorf("input baseline applies to command run, not %s", in.command))
	}
	if in.hosted && in.command != "canary" {
		errs = append(errs, fmt.Errorf("input hosted applies to command canary, not %s", in.command))
	}
	if in.base != "" && in.command != "shadow" {
		errs = append(errs, fmt.Errorf("input base applies to command shadow, not %s", in.command))
	}
	if in.command == "shadow" && in.base == "" {
		errs = append(errs, errors.New("input base: command shadow needs the path of the old grader source"))
	}
	switch {
	case (in.judgeCache != "" || in.judgeCacheMode != "") && in.command != "run" && in.command != "canary" && in.command != "shadow":
		errs = append(errs, fmt.Errorf("inputs judge-cache and judge-cache-mode apply to commands run, canary and shadow, not %s", in.command))
	case in.judgeCacheMode != "" && in.judgeCache == "":
		errs = append(errs, errors.New("input judge-cache-mode needs judge-cache, the folder of recorded model calls"))
	}
	if in.comment && !posts(in.command) {
		errs = append(errs, fmt.Errorf("input comment applies to commands run, canary, merge, mutate and shadow, not %s", in.command))
	}
	if in.results != "" && !posts(in.command) {
		errs = append(errs, fmt.Errorf("input results applies to commands run, canary, merge, mutate and shadow, not %s", in.command))
	}
	if in.command == "merge" && in.results == "" {
		errs = append(errs, errors.New("input results: command merge needs the shard results files (paths or globs, one per line)"))
	}
	return in, errors.Join(errs...)
}

// posts reports the commands the action reports as a step summary, outputs
// and a check run: run, canary and merge with their results
// document, mutate and shadow with their own reports.
func posts(command string) bool {
	switch command {
	case "run", "canary", "merge", "mutate", "shadow":
		return true
	}
	return false
}

// commandReport is what a command without gate results (mutate, shadow)
// gives the action to post.
type commandReport struct {
	manifest string // the manifest's name, for the default check run name
	title    string // one line: the check run's title
	markdown string // the whole report: step summary and check run summary
	file     string // the report JSON the command wrote, or ""
}

// args builds the command line the inputs stand for. resultsFile is where
// the results document goes.
func (in actionInputs) args(resultsFile string) ([]string, error) {
	switch in.command {
	case "run":
		a := []string{"run", in.manifest, "--results", resultsFile}
		if in.shard != "" {
			a = append(a, "--shard", in.shard)
		}
		if in.baseline != "" {
			a = append(a, "--baseline", in.baseline)
		}
		return append(a, in.judgeArgs()...), nil
	case "canary":
		a := []string{"canary", in.manifest, "--results", resultsFile}
		if in.hosted {
			a = append(a, "--hosted")
		}
		return append(a, in.judgeArgs()...), nil
	case "merge":
		// A container action gets no shell, so gradegate expands the globs.
		a := []string{"merge", "--manifest", in.manifest, "--results", resultsFile}
		for _, pat := range strings.Fields(in.results) {
			matches, err := filepath.Glob(pat)
			if err != nil {
				return nil, fmt.Errorf("input results: %q: %w", pat, err)
			}
			if len(matches) == 0 {
				return nil, fmt.Errorf("input results: no shard results file matches %q", pat)
			}
			a = append(a, matches...)
		}
		return a, nil
	case "mutate":
		return []string{"mutate", in.manifest, "--results", resultsFile}, nil
	case "shadow":
		return append([]string{"shadow", in.manifest, "--base", in.base, "--results", resultsFile}, in.judgeArgs()...), nil
	case "doctor", "version":
		return []string{in.command}, nil
	}
	return []string{in.command, in.manifest}, nil
}

// judgeArgs are the model grader cache flags the inputs ask for.
func (in actionInputs) judgeArgs() []string {
	var a []string
	if in.judgeCache != "" {
		a = append(a, "--judge-cache", in.judgeCache)
	}
	if in.judgeCacheMode != "" {
		a = append(a, "--judge-cache-mode", in.judgeCacheMode)
	}
	return a
}

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

func reportErrors(gh *githubactions.Action, errs []error) {
	for _, err := range errs {
		if err == nil {
			continue
		}
		for _, line := range errorLines(err) {
			gh.Errorf("gradegate: reporting failed: %s", line)
		}
	}
}

// posting is what reportCheck posts: a results document, or a command's
// report with its pass or hold.
type posting struct {
	res    *results.Results
	report *commandReport
	pass   bool
}

// reportCheck posts the check run and returns its URL. When the token may
// not write checks it says so once and emits the annotations as workflow
// commands instead, which is not a failure.
func reportCheck(ctx context.Context, gh *githubactions.Action, getenv func(string) string, in actionInputs, p posting, runURL string) (string, error) {
	if in.command == "run" && in.shard != "" {
		gh.Infof("gradegate: shard %s: no check run; the merge job posts the one verdict", in.shard)
		return "", nil
	}
	name := in.checkName
	if name == "" && p.report != nil {
		name = checkName(in, p)
	}
	opts := []checkrun.Option{
		checkrun.WithDetailsURL(runURL),
		checkrun.WithMarkdown(func(res *results.Results, maxBytes int) string {
			return render.MarkdownString(res, render.MarkdownOptions{MaxBytes: maxBytes, RunURL: runURL})
		}),
		checkrun.WithFiles(suiteFiles(in.manifest)),
		checkrun.WithPaths(repoPaths(getenv)),
	}
	annotations := func(check *checkrun.Check) []checkrun.Annotation {
		if p.res == nil {
			return nil
		}
		return check.Annotations(p.res)
	}
	if in.token == "" {
		check := checkrun.New(nil, "", "", "", name, opts...)
		annotateWithCommands(gh, annotations(check), "no github-token was given")
		return "", nil
	}

	owner, repo, ok := strings.Cut(getenv("GITHUB_REPOSITORY"), "/")
	if !ok || owner == "" || repo == "" {
		return "", fmt.Errorf("GITHUB_REPOSITORY %q is not owner/name", getenv("GITHUB_REPOSITORY"))
	}
	var payload []byte
	if ev := getenv("GITHUB_EVENT_PATH"); ev != "" {
		b, err := os.ReadFile(ev)
		if err != nil {
			return "", fmt.Errorf("reading the event payload: %w", err)
		}
		payload = b
	}
	sha, err := checkrun.HeadSHA(getenv("GITHUB_EVENT_NAME"), payload, getenv("GITHUB_SHA"))
	if err != nil {
		return "", fmt.Errorf("finding the commit for the check run: %w", err)
	}
	client, err := checkrun.NewClient(&http.Client{}, getenv("GITHUB_API_URL"), in.token)
	if err != nil {
		return "", err
	}
	check := checkrun.New(client, owner, repo, sha, name, opts...)
	if p.res != nil {
		err = check.Report(ctx, p.res)
	} else {
		err = check.ReportSummary(ctx, checkrun.Summary{Title: p.report.title, Markdown: p.report.markdown, Pass: p.pass})
	}
	if errors.Is(err, checkrun.ErrNoPermission) {
		annotateWithCommands(gh, annotations(check), "the token may not write checks (a pull request from a fork, or a workflow without `permissions: checks: write`)")
		return "", nil
	}
	if err != nil {
		return check.URL(), fmt.Errorf("check run: %w", err)
	}
	gh.Infof("gradegate: check run %s", check.URL())
	return check.URL(), nil
}

// checkName is the name of the check run a posting goes to, which also
// names its sticky comment: the check-name input, or the default for the
// command and manifest. "" when it cannot be known (no results to name the
// manifest).
func checkName(in actionInputs, p posting) string {
	switch {
	case in.checkName != "":
		return in.checkName
	case p.report != nil:
		// Not "gradegate / <name>": a mutate or shadow job on the same
		// commit would then overwrite the gate's check run, which branch
		// protection may require.
		return "gradegate " + in.command + " / " + p.report.manifest
	case p.res != nil:
		return checkrun.DefaultName(p.res.Manifest.Name)
	}
	return ""
}

// reportComment keeps the sticky pull request comment of check name up to
// date with md and a link to the check run, when the comment input asks for
// it. Outside a pull request, or for a shard, there is nothing to comment
// on. A token that may not comment is said once as a warning; it is not a
// reporting failure, and it never changes the verdict.
func reportComment(ctx context.Context, gh *githubactions.Action, getenv func(string) string, in actionInputs, name, md, checkURL string) error {
	if !in.comment || in.command == "run" && in.shard != "" {
		return nil
	}
	if in.token == "" {
		gh.Warningf("gradegate: no pull request comment: no github-token was given")
		return nil
	}
	var payload []byte
	if ev := getenv("GITHUB_EVENT_PATH"); ev != "" {
		b, err := os.ReadFile(ev)
		if err != nil {
			return fmt.Errorf("reading the event payload: %w", err)
		}
		payload = b
	}
	number, err := checkrun.PullRequestNumber(payload)
	if err != nil {
		return fmt.Errorf("pull request comment: %w", err)
	}
	if number == 0 {
		gh.Infof("gradegate: no pull request comment: the %s event is not about a pull request", getenv("GITHUB_EVENT_NAME"))
		return nil
	}
	owner, repo, ok := strings.Cut(getenv("GITHUB_REPOSITORY"), "/")
	if !ok || owner == "" || repo == "" {
		return fmt.Errorf("GITHUB_REPOSITORY %q is not owner/name", getenv("GITHUB_REPOSITORY"))
	}
	client, err := checkrun.NewClient(&http.Client{}, getenv("GITHUB_API_URL"), in.token)
	if err != nil {
		return err
	}
	c := checkrun.NewComment(client, owner, repo, number, name)
	err = c.Post(ctx, md, checkURL)
	if errors.Is(err, checkrun.ErrNoCommentPermission) {
		gh.Warningf("gradegate: no pull request comment: the token may not write pull request comments (a pull request from a fork, or a workflow without `permissions: pull-requests: write`)")
		return nil
	}
	if err != nil {
		return fmt.Errorf("pull request comment: %w", err)
	}
	gh.Infof("gradegate: pull request comment %s", c.URL())
	return nil
}

// cutMarkdown returns md if it fits in limit bytes, and otherwise its longest
// prefix that fits with a note saying it was cut, never splitting a UTF-8
// sequence.
func cutMarkdown(md string, limit int) string {
	if len(md) <= limit {
		return md
	}
	const note = "\n\n---\n**Cut**: this report is longer than a step summary may be; the report JSON (output `results`) has all of it.\n"
	n := max(limit-len(note), 0)
	for n > 0 && !utf8.RuneStart(md[n]) {
		n--
	}
	return md[:n] + note
}

// annotateWithCommands emits annotations as workflow commands, within what a
// step can show, after one notice that says why.
func annotateWithCommands(gh *githubactions.Action, anns []checkrun.Annotation, why string) {
	shown := map[string]int{}
	var emit []checkrun.Annotation
	for _, a := range anns {
		if shown[a.Level] < maxCommandAnnotations {
			shown[a.Level]++
			emit = append(emit, a)
		}
	}
	msg := "gradegate did not create a check run: " + why + ". The verdict and tables are in the step summary"
	switch {
	case len(emit) < len(anns):
		msg += fmt.Sprintf("; %d of %d annotations follow (GitHub shows at most %d per level and step).", len(emit), len(anns), maxCommandAnnotations)
	case len(emit) > 0:
		msg += "; the annotations follow."
	default:
		msg += "."
	}
	gh.Noticef("%s", msg)
	for _, a := range emit {
		at := gh.WithFieldsMap(map[string]string{"file": a.Path, "line": strconv.Itoa(a.Line), "title": a.Title})
		switch a.Level {
		case checkrun.LevelFailure:
			at.Errorf("%s", a.Message)
		case checkrun.LevelWarning:
			at.Warningf("%s", a.Message)
		default:
			at.Noticef("%s", a.Message)
		}
	}
}

// suiteFiles names the grader and dataset a manifest points at, as gradegate
// opens them, so annotations can point into them. A manifest that does not
// load has already been reported by the command; it just gets none.
func suiteFiles(manifestPath string) checkrun.Files {
	m, err := manifest.Load(hostFS{}, filepath.ToSlash(manifestPath))
	if err != nil {
		return checkrun.Files{}
	}
	join := func(p string) string {
		if p == "" {
			return ""
		}
		if path.IsAbs(p) {
			return p
		}
		return path.Join(m.Dir, p)
	}
	return checkrun.Files{Grader: join(m.Grader.Source), Dataset: join(m.Dataset.Path)}
}

// repoPaths maps paths as gradegate opened them to paths relative to the
// repository root (GITHUB_WORKSPACE; the working directory when unset).
func repoPaths(getenv func(string) string) func(string) (string, bool) {
	wd, err := os.Getwd()
	if err != nil {
		wd = "."
	}
	root := getenv("GITHUB_WORKSPACE")
	if root == "" {
		root = wd
	}
	return checkrun.RelativeTo(root, wd)
}

// workflowRunURL is the web address of this workflow run, or "".
func workflowRunURL(getenv func(string) string) string {
	server, repo, id := getenv("GITHUB_SERVER_URL"), getenv("GITHUB_REPOSITORY"), getenv("GITHUB_RUN_ID")
	if repo == "" || id == "" {
		return ""
	}
	if server == "" {
		server = "https://github.com"
	}
	return strings.TrimSuffix(server, "/") + "/" + repo + "/actions/runs/" + id
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
