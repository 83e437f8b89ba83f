// Package checkrun publishes a finished gradegate run as a GitHub check run
// through the Checks API: a conclusion on the pull request's head commit, the
// markdown report as its summary and annotations at the lines that explain a
// hold.
package checkrun

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/gradegate/gradegate/gate/render"
	"github.com/gradegate/gradegate/gate/results"
)

// GitHub's limits for check runs
// (https://docs.github.com/rest/checks/runs#update-a-check-run).
const (
	// MaxAnnotationsPerRequest is how many annotations one create or update
	// request may carry; more must be sent in further updates.
	MaxAnnotationsPerRequest = 50
	// MaxSummaryBytes is the largest output.summary GitHub accepts (65535
	// characters). Counting bytes keeps us under it whatever GitHub counts.
	MaxSummaryBytes = 65535
	// maxTitleBytes keeps titles short; GitHub documents 255 characters for
	// an annotation title and shows only one line of an output title.
	maxTitleBytes = 255
	// maxMessageBytes is GitHub's limit for an annotation message (64 KB).
	maxMessageBytes = 64 << 10
)

// Defaults for what the options change.
const (
	// DefaultMaxAnnotations bounds how many annotations one run posts (ten
	// update requests); the summary carries everything.
	DefaultMaxAnnotations = 500
	defaultMaxAttempts    = 5
	defaultRequestTimeout = 30 * time.Second
	// defaultBackoff doubles from this up to maxBackoff for 5xx and timeouts.
	defaultBackoff = time.Second
	maxBackoff     = 30 * time.Second
	// secondaryRateLimitWait is how long GitHub asks a client to wait after a
	// secondary rate limit that came without Retry-After: "at least one
	// minute" (https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#exceeding-the-rate-limit).
	secondaryRateLimitWait = time.Minute
	// maxWait is the longest single wait; a longer Retry-After gives up.
	maxWait = 3 * time.Minute
)

// ErrNoPermission means the token may not create check runs: a pull request
// from a fork, or a workflow whose token lacks `checks: write`. GitHub answers
// 403 "Resource not accessible by integration". The caller should say so once
// and report through the step summary and workflow commands instead.
var ErrNoPermission = errors.New("the token may not create check runs")

// Check reports one gradegate run as one check run. It is not reused: the
// check run it created is available from URL after Report or ReportSummary.
type Check struct {
	client  *github.Client
	owner   string
	repo    string
	headSHA string
	name    string

	detailsURL     string
	markdown       func(res *results.Results, maxBytes int) string
	files          Files
	paths          func(string) (string, bool)
	maxAnnotations int
	maxAttempts    int
	requestTimeout time.Duration
	sleep          func(ctx context.Context, d time.Duration) error
	now            func() time.Time

	// externalID marks the check runs this Check creates, so that a run a
	// failed create left behind can be told from anyone else's.
	externalID string

	id         int64
	htmlURL    string
	duplicates []int64 // further runs failed creates left behind
}

var _ results.Reporter = (*Check)(nil)

// Files names the files a run read, as gradegate opened them (relative to its
// working directory, or absolute). Annotations point into them.
type Files struct {
	Grader  string // the grader source
	Dataset string // the dataset JSONL
}

// Option configures a Check.
type Option func(*Check)

// WithDetailsURL sets the check run's details_url and the link in its
// summary, usually the workflow run's page.
func WithDetailsURL(u string) Option { return func(c *Check) { c.detailsURL = u } }

// WithMarkdown sets how the summary is rendered; the function must keep its
// output within maxBytes. Without it the summary is a short list of the
// verdict and its reasons.
func WithMarkdown(f func(res *results.Results, maxBytes int) string) Option {
	return func(c *Check) { c.markdown = f }
}

// WithFiles names the grader and dataset files so that grader exceptions and
// failing dataset cases get annotations.
func WithFiles(f Files) Option { return func(c *Check) { c.files = f } }

// WithPaths maps a file path as gradegate used it to a path relative to the
// repository root, which is what GitHub annotations need. ok=false drops the
// annotation (a file outside the repository). See RelativeTo.
func WithPaths(f func(path string) (rel string, ok bool)) Option {
	return func(c *Check) { c.paths = f }
}

// WithMaxAnnotations bounds the annotations posted (default DefaultMaxAnnotations).
func WithMaxAnnotations(n int) Option { return func(c *Check) { c.maxAnnotations = n } }

// WithRetry sets how many times a request is tried (at least 1) and the
// sleep used between tries, so tests need not wait.
func WithRetry(attempts int, sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Check) {
		c.maxAttempts = max(attempts, 1)
		if sleep != nil {
			c.sleep = sleep
		}
	}
}

// WithRequestTimeout bounds each API request (default 30s); a request that
// times out is retried.
func WithRequestTimeout(d time.Duration) Option { return func(c *Check) { c.requestTimeout = d } }

// WithClock sets the clock used for completed_at.
func WithClock(now func() time.Time) Option { return func(c *Check) { c.now = now } }

// New returns a Check that reports to owner/repo on the commit headSHA (see
// HeadSHA). name is the check run's name; empty means "gradegate / <manifest
// name>" (DefaultName).
func New(client *github.Client, owner, repo, headSHA, name string, opts ...Option) *Check {
	c := &Check{
		client:         client,
		owner:          owner,
		repo:           repo,
		headSHA:        headSHA,
		name:           name,
		maxAnnotations: DefaultMaxAnnotations,
		maxAttempts:    defaultMaxAttempts,
		requestTimeout: defaultRequestTimeout,
		sleep:          sleepContext,
		now:            time.Now,
		paths:          cleanRelative,
		externalID:     "gradegate-" + rand.Text(),
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// DefaultName is the check run name for a manifest name: "gradegate / <name>",
// unless the Action's check-name input fixes another.
func DefaultName(manifestName string) string { return "gradegate / " + manifestName }

// NewClient returns a go-github client for apiURL (GITHUB_API_URL; empty means
// https://api.github.com/) authenticated with token. The URL is used as given,
// so GitHub Enterprise Server (https://HOST/api/v3) and GHE.com work alike.
func NewClient(httpClient *http.Client, apiURL, token string) (*github.Client, error) {
	c := github.NewClient(httpClient)
	if token != "" {
		c = c.WithAuthToken(token)
	}
	if apiURL == "" {
		return c, nil
	}
	u, err := url.Parse(apiURL)
	if err != nil {
		return nil, fmt.Errorf("GitHub API URL %q: %w", apiURL, err)
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("GitHub API URL %q: want http(s)://host[/path]", apiURL)
	}
	// go-github resolves every endpoint relative to BaseURL, which therefore
	// must end in a slash or its last path element is dropped.
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	c.BaseURL = u
	return c, nil
}

// URL returns the web address of the check run Report created, or "".
func (c *Check) URL() string { return c.htmlURL }

// Report creates the check run in_progress, sends the annotations in batches
// of MaxAnnotationsPerRequest and completes it with conclusion success for a
// pass and failure for anything else. Once the run exists Report always tries
// to complete it, so that no check run is left in progress. An error wrapping
// ErrNoPermission means nothing could be posted.
func (c *Check) Report(ctx context.Context, res *results.Results) error {
	if res == nil {
		return errors.New("checkrun: no results to report")
	}
	name := c.name
	if name == "" {
		name = DefaultName(res.Manifest.Name)
	}
	conclusion := "failure"
	if res.Verdict == results.VerdictPass {
		conclusion = "success"
	}
	return c.post(ctx, name, Title(res), c.summary(res), conclusion, c.Annotations(res))
}

// Summary is a finished command's report that is not a gate verdict, such as
// a mutation score or a shadow comparison: a title, a markdown body and
// whether it passed.
type Summary struct {
	Title    string // one line; cut to GitHub's limit
	Markdown string // cut to MaxSummaryBytes with a note that says so
	Pass     bool   // conclusion success; failure otherwise
}

// ReportSummary posts s as a check run with the Check's name, which must be
// set (New's name): without results there is no manifest name to default
// to. Like Report it completes every check run it created, and an error
// wrapping ErrNoPermission means nothing could be posted.
func (c *Check) ReportSummary(ctx context.Context, s Summary) error {
	if c.name == "" {
		return errors.New("checkrun: a summary needs a check run name")
	}
	md := s.Markdown
	if c.detailsURL != "" && !strings.Contains(md, c.detailsURL) && len(md) < MaxSummaryBytes-len(c.detailsURL)-64 {
		md += "\n\n[Workflow run](" + c.detailsURL + ")\n"
	}
	conclusion := "failure"
	if s.Pass {
		conclusion = "success"
	}
	title := cut(render.Clip(s.Title, maxTitleBytes), maxTitleBytes, "…")
	return c.post(ctx, c.name, title, CutSummary(md, c.detailsURL), conclusion, nil)
}

// post creates the check run in_progress, appends anns in batches and
// completes it with conclusion. Once a run exists post always tries to
// complete it, so that no check run is left in progress.
func (c *Check) post(ctx context.Context, name, title, summary, conclusion string, anns []Annotation) error {
	create := github.CreateCheckRunOptions{
		Name:       name,
		HeadSHA:    c.headSHA,
		ExternalID: github.String(c.externalID),
		Status:     github.String("in_progress"),
		Output:     &github.CheckRunOutput{Title: github.String(title), Summary: github.String(summary)},
	}
	if c.detailsURL != "" {
		create.DetailsURL = github.String(c.detailsURL)
	}
	if err := c.create(ctx, create); err != nil {
		return err
	}

	var errs []error
	for start := 0; start < len(anns); start += MaxAnnotationsPerRequest {
		batch := anns[start:min(start+MaxAnnotationsPerRequest, len(anns))]
		update := github.UpdateCheckRunOptions{
			Name: name,
			// Each update must repeat title and summary; annotations are
			// appended to the ones already on the run.
			Output: &github.CheckRunOutput{
				Title:       github.String(title),
				Summary:     github.String(summary),
				Annotations: apiAnnotations(batch),
			},
		}
		if err := c.update(ctx, c.id, fmt.Sprintf("annotations %d-%d", start+1, start+len(batch)), update); err != nil {
			errs = append(errs, err)
			break
		}
	}

	complete := github.UpdateCheckRunOptions{
		Name:        name,
		Status:      github.String("completed"),
		Conclusion:  github.String(conclusion),
		CompletedAt: &github.Timestamp{Time: c.now()},
		Output:      &github.CheckRunOutput{Title: github.String(title), Summary: github.String(summary)},
	}
	if c.detailsURL != "" {
		complete.DetailsURL = github.String(c.detailsURL)
	}
	if err := c.update(ctx, c.id, "complete check run", complete); err != nil {
		errs = append(errs, err)
	}
	// Duplicates that failed creates left behind get the same conclusion,
	// so none stays in progress and none contradicts the verdict.
	for _, id := range c.duplicates {
		if err := c.update(ctx, id, fmt.Sprintf("complete duplicate check run %d", id), complete); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// create creates the check run. GitHub may create a run and still answer
// 5xx or never answer at all, so before trying again after such a failure
// create looks for a run this Check created (by its external_id) and adopts
// it rather than leaving it in progress next to a second one.
func (c *Check) create(ctx context.Context, opts github.CreateCheckRunOptions) error {
	var ambiguous bool
	return c.try(ctx, "create check run", func(ctx context.Context) error {
		if ambiguous {
			found, err := c.adopt(ctx, opts.Name)
			if err != nil || found {
				return err
			}
		}
		run, _, err := c.client.Checks.CreateCheckRun(ctx, c.owner, c.repo, opts)
		if err != nil {
			ambiguous = ambiguous || mayHaveApplied(err)
			return err
		}
		c.id, c.htmlURL = run.GetID(), run.GetHTMLURL()
		return nil
	})
}

// adopt looks for in-progress check runs named name on the head commit that
// carry this Check's external_id. It reports the newest as the Check's run
// and keeps the others as duplicates to complete.
func (c *Check) adopt(ctx context.Context, name string) (bool, error) {
	opts := &github.ListCheckRunsOptions{
		CheckName: github.String(name),
		Status:    github.String("in_progress"),
		// "latest" (the default) would hide all but the newest run of the name.
		Filter:      github.String("all"),
		ListOptions: github.ListOptions{PerPage: 100},
	}
	list, _, err := c.client.Checks.ListCheckRunsForRef(ctx, c.owner, c.repo, c.headSHA, opts)
	if err != nil {
		return false, fmt.Errorf("looking for a check run a failed create left behind: %w", err)
	}
	var ours []*github.CheckRun
	for _, run := range list.CheckRuns {
		if run.GetExternalID() == c.externalID {
			ours = append(ours, run)
		}
	}
	if len(ours) == 0 {
		return false, nil
	}
	slices.SortFunc(ours, func(a, b *github.CheckRun) int { return cmp.Compare(b.GetID(), a.GetID()) })
	c.id, c.htmlURL = ours[0].GetID(), ours[0].GetHTMLURL()
	for _, run := range ours[1:] {
		c.duplicates = append(c.duplicates, run.GetID())
	}
	return true, nil
}

func (c *Check) update(ctx context.Context, id int64, what string, opts github.UpdateCheckRunOptions) error {
	return c.try(ctx, what, func(ctx context.Context) error {
		run, _, err := c.client.Checks.UpdateCheckRun(ctx, c.owner, c.repo, id, opts)
		if err == nil && id == c.id && run.GetHTMLURL() != "" {
			c.htmlURL = run.GetHTMLURL()
		}
		return err
	})
}

// Title is the check run's one-line title.
func Title(res *results.Results) string {
	var b strings.Builder
	if res.Verdict == results.VerdictPass {
		b.WriteString("pass")
	} else {
		b.WriteString("hold")
		var codes []string
		for _, r := range res.Reasons {
			if !slices.Contains(codes, r.Code) {
				codes = append(codes, r.Code)
			}
		}
		if len(codes) > 0 {
			b.WriteString(" (" + strings.Join(codes, ", ") + ")")
		}
	}
	n := res.Counts
	fmt.Fprintf(&b, ": %d intended, %d graded, %d passed, %d failed, %d errored, %d omitted",
		n.Intended, n.Graded, n.Passed, n.Failed, n.Errored, n.Omitted)
	if res.Overall.PassRate != nil {
		fmt.Fprintf(&b, " (%.1f%% pass rate)", *res.Overall.PassRate*100)
	}
	return cut(render.Clip(b.String(), maxTitleBytes), maxTitleBytes, "…")
}

// summary renders the summary and keeps it within GitHub's limit, saying so
// when it had to cut.
func (c *Check) summary(res *results.Results) string {
	md := ""
	if c.markdown != nil {
		md = c.markdown(res, MaxSummaryBytes)
	} else {
		md = plainSummary(res)
	}
	if c.detailsURL != "" && !strings.Contains(md, c.detailsURL) && len(md) < MaxSummaryBytes-len(c.detailsURL)-64 {
		md += "\n\n[Workflow run](" + c.detailsURL + ")\n"
	}
	return CutSummary(md, c.detailsURL)
}

// CutSummary cuts md to MaxSummaryBytes, ending it with a note that says so
// and where the whole report is.
func CutSummary(md, runURL string) string {
	if len(md) <= MaxSummaryBytes {
		return md
	}
	note := "\n\n---\n**Cut**: this report is longer than GitHub's 65535-character limit for a check run summary."
	if runURL != "" {
		note += " The whole report is in the step summary of the [workflow run](" + runURL + ")."
	} else {
		note += " The whole report is in the workflow run's step summary."
	}
	return cut(md, MaxSummaryBytes, note)
}

// plainSummary is the summary when no markdown renderer was given.
func plainSummary(res *results.Results) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## gradegate: %s\n\n%s\n", strings.ToUpper(res.Verdict), Title(res))
	if len(res.Reasons) > 0 {
		b.WriteString("\n### Reasons\n\n")
		for _, r := range res.Reasons {
			fmt.Fprintf(&b, "- `%s`: %s\n", r.Code, render.Clip(r.Message, render.LineRunes))
		}
	}
	return b.String()
}

// cut returns s if it fits in limit bytes, and otherwise its longest prefix
// that fits with suffix appended, never splitting a UTF-8 sequence.
func cut(s string, limit int, suffix string) string {
	if len(s) <= limit {
		return s
	}
	n := max(limit-len(suffix), 0)
	for n > 0 && n < len(s) && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + suffix
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
