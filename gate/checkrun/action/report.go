package action

import (
	"context"
	"errors"
	"fmt"
	"github.com/gradegate/gradegate/manifest/input"
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

// posting is what reportCheck posts: a results document, or a command's
// report with its pass or hold.
type posting struct {
	res    *results.Results
	report *Report
	pass   bool
}

// reportCheck posts the check run and returns its URL. When the token may
// not write checks it says so once and emits the annotations as workflow
// commands instead, which is not a failure.
func reportCheck(ctx context.Context, gh *githubactions.Action, getenv func(string) string, in Inputs, p posting, runURL string) (string, error) {
	if in.Command == "run" && in.Shard != "" {
		gh.Infof("gradegate: shard %s: no check run; the merge job posts the one verdict", in.Shard)
		return "", nil
	}
	name := in.CheckName
	if name == "" && p.report != nil {
		name = checkName(in, p)
	}
	opts := []checkrun.Option{
		checkrun.WithDetailsURL(runURL),
		checkrun.WithMarkdown(func(res *results.Results, maxBytes int) string {
			return render.MarkdownString(res, render.MarkdownOptions{MaxBytes: maxBytes, RunURL: runURL, ResultsFile: "the results file (the step's results output)"})
		}),
		checkrun.WithFiles(suiteFiles(in.Manifest)),
		checkrun.WithPaths(repoPaths(getenv)),
	}
	annotations := func(check *checkrun.Check) []checkrun.Annotation {
		if p.res == nil {
			return nil
		}
		return check.Annotations(p.res)
	}
	if in.Token == "" {
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
	client, err := checkrun.NewClient(&http.Client{}, getenv("GITHUB_API_URL"), in.Token)
	if err != nil {
		return "", err
	}
	check := checkrun.New(client, owner, repo, sha, name, opts...)
	if p.res != nil {
		err = check.Report(ctx, p.res)
	} else {
		err = check.ReportSummary(ctx, checkrun.Summary{Title: p.report.Title, Markdown: p.report.Markdown, Pass: p.pass})
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
func checkName(in Inputs, p posting) string {
	switch {
	case in.CheckName != "":
		return in.CheckName
	case p.report != nil:
		// Not "gradegate / <name>": a mutate or shadow job on the same
		// commit would then overwrite the gate's check run, which branch
		// protection may require.
		return checkrun.NameFor("gradegate "+in.Command, p.report.Manifest)
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
func reportComment(ctx context.Context, gh *githubactions.Action, getenv func(string) string, in Inputs, name, md, checkURL string) error {
	if !in.Comment || in.Command == "run" && in.Shard != "" {
		return nil
	}
	if in.Token == "" {
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
	client, err := checkrun.NewClient(&http.Client{}, getenv("GITHUB_API_URL"), in.Token)
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
	m, err := manifest.Load(input.Host{}, filepath.ToSlash(manifestPath))
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
