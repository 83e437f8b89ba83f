package checkrun_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/gradegate/gradegate/gate/results"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gradegate/gradegate/gate/checkrun"
	"github.com/gradegate/gradegate/gate/checkrun/checkruntest"
	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/manifest"
)

const headSHA = "1111111111111111111111111111111111111111"

// sleeps records the waits between retries instead of waiting.
type sleeps []time.Duration

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	*s = append(*s, d)
	return nil
}

func float(f float64) *float64 { return &f }

// results is a run of the example suite with failing cases in the mandatory
// slice ineligible_shipped, on dataset lines 1..failing.
func resultsDoc(verdict string, failing int) *results.Results {
	res := &results.Results{
		Schema:   results.ResultsSchema,
		Verdict:  verdict,
		Manifest: results.ManifestRef{Name: "order-summary", Path: "evals/order-summary/gradegate.yaml"},
		Counts:   results.Counts{Intended: failing + 1, Graded: failing + 1, Passed: 1, Failed: failing},
		Overall:  results.Overall{PassRate: float(1 / float64(failing+1)), MinPassRate: 0.95, Status: verdict},
		Slices: []results.SliceResult{
			{Name: "ineligible_shipped", Mandatory: true, Status: verdict},
			{Name: "tone", WarnOnly: true, Status: "warn"},
		},
	}
	if verdict == results.VerdictHold {
		res.Reasons = []results.Reason{{Code: results.ReasonSliceBelowThreshold, Slice: "ineligible_shipped", Message: "pass rate below 1.0"}}
	}
	for i := range failing {
		res.Cases = append(res.Cases, results.CaseResult{
			CaseID: fmt.Sprintf("cancel-shipped-%03d", i+1), Slices: []string{"ineligible_shipped"},
			Status: results.StatusFail, Class: grading.ClassOK, Score: float(0), Line: i + 1,
		})
	}
	// A passing case and a failing case outside mandatory slices get no annotation.
	res.Cases = append(res.Cases,
		results.CaseResult{CaseID: "ok-1", Slices: []string{"ineligible_shipped"}, Status: results.StatusPass, Score: float(1), Line: failing + 1},
		results.CaseResult{CaseID: "tone-1", Slices: []string{"tone"}, Status: results.StatusFail, Score: float(0), Line: failing + 2},
	)
	return res
}

func newCheck(t *testing.T, srv *checkruntest.Server, s *sleeps, opts ...checkrun.Option) *checkrun.Check {
	t.Helper()
	client, err := checkrun.NewClient(srv.Client(), srv.APIURL(), "ghs_secret")
	if err != nil {
		t.Fatal(err)
	}
	opts = append([]checkrun.Option{
		checkrun.WithRetry(5, s.sleep),
		checkrun.WithFiles(checkrun.Files{Grader: "evals/order-summary/grader.py", Dataset: "evals/order-summary/cases.jsonl"}),
		checkrun.WithDetailsURL("https://github.com/o/r/actions/runs/99"),
		checkrun.WithClock(func() time.Time { return time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC) }),
	}, opts...)
	return checkrun.New(client, "o", "r", headSHA, "", opts...)
}

// step is the shape of one request in the expected sequence.
type step struct {
	Method, Path, Status, Conclusion string
	Annotations                      int
}

func steps(reqs []checkruntest.Request) []step {
	var out []step
	for _, r := range reqs {
		st := step{Method: r.Method, Path: r.Path, Status: r.Body.GetStatus(), Conclusion: r.Body.GetConclusion()}
		if r.Body.Output != nil {
			st.Annotations = len(r.Body.Output.Annotations)
		}
		out = append(out, st)
	}
	return out
}

// writes returns the create and update requests, and how many others
// (lists) there were.
func writes(reqs []checkruntest.Request) ([]checkruntest.Request, int) {
	var out []checkruntest.Request
	for _, r := range reqs {
		if r.Method != http.MethodGet {
			out = append(out, r)
		}
	}
	return out, len(reqs) - len(out)
}

const (
	createPath = "repos/o/r/check-runs"
	runPath    = "repos/o/r/check-runs/4242"
)

func TestReport(t *testing.T) {
	tests := []struct {
		name           string
		res            *results.Results
		wantConclusion string
		wantSteps      []step
	}{
		{
			name:           "pass",
			res:            resultsDoc(results.VerdictPass, 0),
			wantConclusion: "success",
			wantSteps: []step{
				{Method: "POST", Path: createPath, Status: "in_progress"},
				{Method: "PATCH", Path: runPath, Status: "completed", Conclusion: "success"},
			},
		},
		{
			name:           "hold with three failing cases",
			res:            resultsDoc(results.VerdictHold, 3),
			wantConclusion: "failure",
			wantSteps: []step{
				{Method: "POST", Path: createPath, Status: "in_progress"},
				{Method: "PATCH", Path: runPath, Annotations: 3},
				{Method: "PATCH", Path: runPath, Status: "completed", Conclusion: "failure"},
			},
		},
		{
			name:           "120 annotations go as 50, 50 and 20",
			res:            resultsDoc(results.VerdictHold, 120),
			wantConclusion: "failure",
			wantSteps: []step{
				{Method: "POST", Path: createPath, Status: "in_progress"},
				{Method: "PATCH", Path: runPath, Annotations: 50},
				{Method: "PATCH", Path: runPath, Annotations: 50},
				{Method: "PATCH", Path: runPath, Annotations: 20},
				{Method: "PATCH", Path: runPath, Status: "completed", Conclusion: "failure"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := checkruntest.New(t)
			var s sleeps
			c := newCheck(t, srv, &s)
			if err := c.Report(context.Background(), tt.res); err != nil {
				t.Fatalf("Report: %v", err)
			}
			reqs := srv.Requests()
			if diff := cmp.Diff(tt.wantSteps, steps(reqs)); diff != "" {
				t.Errorf("request sequence (-want +got):\n%s", diff)
			}
			create := reqs[0].Body
			if create.HeadSHA != headSHA {
				t.Errorf("head_sha = %q, want %q", create.HeadSHA, headSHA)
			}
			if create.Name != "gradegate / order-summary" {
				t.Errorf("name = %q, want %q", create.Name, "gradegate / order-summary")
			}
			if got := create.GetDetailsURL(); got != "https://github.com/o/r/actions/runs/99" {
				t.Errorf("details_url = %q", got)
			}
			for _, r := range reqs {
				if r.Auth != "Bearer ghs_secret" {
					t.Errorf("%s %s: Authorization = %q", r.Method, r.Path, r.Auth)
				}
				if r.Body.Name != "gradegate / order-summary" {
					t.Errorf("%s %s: name = %q", r.Method, r.Path, r.Body.Name)
				}
				if r.Body.Output == nil || r.Body.Output.GetTitle() == "" || r.Body.Output.GetSummary() == "" {
					t.Errorf("%s %s: output without title or summary", r.Method, r.Path)
				}
			}
			last := reqs[len(reqs)-1].Body
			if last.GetConclusion() != tt.wantConclusion {
				t.Errorf("conclusion = %q, want %q", last.GetConclusion(), tt.wantConclusion)
			}
			if last.CompletedAt == nil {
				t.Error("completed without completed_at")
			}
			if !strings.Contains(last.Output.GetSummary(), "https://github.com/o/r/actions/runs/99") {
				t.Error("summary does not link to the workflow run")
			}
			if c.URL() != srv.HTMLURL() {
				t.Errorf("URL() = %q, want %q", c.URL(), srv.HTMLURL())
			}
			if len(s) != 0 {
				t.Errorf("slept %v without a failure", s)
			}
		})
	}
}

func TestReportAnnotationContents(t *testing.T) {
	srv := checkruntest.New(t)
	var s sleeps
	c := newCheck(t, srv, &s)
	if err := c.Report(context.Background(), resultsDoc(results.VerdictHold, 2)); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()[1].Body.Output.Annotations
	if len(got) != 2 {
		t.Fatalf("got %d annotations, want 2", len(got))
	}
	for i, a := range got {
		if a.GetPath() != "evals/order-summary/cases.jsonl" || a.GetStartLine() != i+1 || a.GetEndLine() != i+1 || a.GetAnnotationLevel() != "failure" {
			t.Errorf("annotation %d = %s:%d-%d %s", i, a.GetPath(), a.GetStartLine(), a.GetEndLine(), a.GetAnnotationLevel())
		}
		if !strings.Contains(a.GetTitle(), fmt.Sprintf("cancel-shipped-%03d", i+1)) {
			t.Errorf("annotation %d title %q does not name the case", i, a.GetTitle())
		}
	}
}

func TestReportNamedCheck(t *testing.T) {
	srv := checkruntest.New(t)
	client, err := checkrun.NewClient(srv.Client(), srv.APIURL(), "tok")
	if err != nil {
		t.Fatal(err)
	}
	c := checkrun.New(client, "o", "r", headSHA, "release gate")
	if err := c.Report(context.Background(), resultsDoc(results.VerdictPass, 0)); err != nil {
		t.Fatal(err)
	}
	for _, r := range srv.Requests() {
		if r.Body.Name != "release gate" {
			t.Errorf("%s %s: name = %q, want the given check name", r.Method, r.Path, r.Body.Name)
		}
	}
}

func TestReportSummaryCap(t *testing.T) {
	srv := checkruntest.New(t)
	var s sleeps
	long := func(res *results.Results, maxBytes int) string {
		// A renderer that ignores its budget, in multi-byte characters so a
		// careless cut would split one.
		return "# hold\n" + strings.Repeat("§ table row\n", 20000)
	}
	c := newCheck(t, srv, &s, checkrun.WithMarkdown(long))
	if err := c.Report(context.Background(), resultsDoc(results.VerdictHold, 1)); err != nil {
		t.Fatal(err)
	}
	for _, r := range srv.Requests() {
		sum := r.Body.Output.GetSummary()
		if len(sum) > checkrun.MaxSummaryBytes {
			t.Errorf("%s %s: summary is %d bytes, over GitHub's %d", r.Method, r.Path, len(sum), checkrun.MaxSummaryBytes)
		}
		if !strings.Contains(sum, "65535-character limit") || !strings.Contains(sum, "https://github.com/o/r/actions/runs/99") {
			t.Errorf("%s %s: cut summary has no note pointing at the run:\n…%s", r.Method, r.Path, sum[max(0, len(sum)-300):])
		}
		if !strings.HasPrefix(sum, "# hold\n§ table row") {
			t.Errorf("%s %s: summary lost its start", r.Method, r.Path)
		}
	}
}

func TestCutSummaryKeepsShortOnes(t *testing.T) {
	if got := checkrun.CutSummary("short", "u"); got != "short" {
		t.Errorf("CutSummary(short) = %q", got)
	}
	got := checkrun.CutSummary(strings.Repeat("é", checkrun.MaxSummaryBytes), "")
	if len(got) > checkrun.MaxSummaryBytes || !strings.Contains(got, "step summary") {
		t.Errorf("cut to %d bytes, note present: %v", len(got), strings.Contains(got, "step summary"))
	}
	if !strings.HasPrefix(got, "éé") || strings.ContainsRune(got, '\uFFFD') {
		t.Error("cut split a UTF-8 sequence")
	}
}

func TestReportNoPermission(t *testing.T) {
	srv := checkruntest.New(t)
	srv.Deny()
	var s sleeps
	c := newCheck(t, srv, &s)
	err := c.Report(context.Background(), resultsDoc(results.VerdictHold, 3))
	if !errors.Is(err, checkrun.ErrNoPermission) {
		t.Fatalf("Report error = %v, want ErrNoPermission", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests after a 403, want 1 (no retry, no updates)", n)
	}
	if len(s) != 0 {
		t.Errorf("a 403 was retried: slept %v", s)
	}
	if c.URL() != "" {
		t.Errorf("URL() = %q with no check run", c.URL())
	}
}

func TestReportRetries(t *testing.T) {
	tests := []struct {
		name       string
		replies    []checkruntest.Reply
		wantSleeps []time.Duration
		wantLists  int
	}{
		{
			name:       "502 then success",
			replies:    []checkruntest.Reply{{Status: http.StatusBadGateway, Body: "<html>Bad Gateway</html>"}},
			wantSleeps: []time.Duration{time.Second},
			wantLists:  1,
		},
		{
			name: "5xx backoff doubles",
			replies: []checkruntest.Reply{
				{Status: http.StatusBadGateway}, {Status: http.StatusServiceUnavailable}, {Status: http.StatusInternalServerError, Body: `{"message":"Server Error"}`},
			},
			wantSleeps: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second},
			wantLists:  3,
		},
		{
			name: "secondary rate limit without Retry-After waits a minute",
			replies: []checkruntest.Reply{{Status: http.StatusForbidden,
				Body: `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}`}},
			wantSleeps: []time.Duration{time.Minute},
		},
		{
			name: "secondary rate limit as go-github knows it, with Retry-After",
			replies: []checkruntest.Reply{{Status: http.StatusForbidden, Header: map[string]string{"Retry-After": "0"},
				Body: `{"message":"You have exceeded a secondary rate limit.","documentation_url":"https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`}},
			wantSleeps: []time.Duration{0},
		},
		{
			name:       "429 with Retry-After",
			replies:    []checkruntest.Reply{{Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "7"}, Body: `{"message":"Too many requests"}`}},
			wantSleeps: []time.Duration{7 * time.Second},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := checkruntest.New(t)
			srv.Queue(tt.replies...)
			var s sleeps
			c := newCheck(t, srv, &s)
			if err := c.Report(context.Background(), resultsDoc(results.VerdictPass, 0)); err != nil {
				t.Fatalf("Report: %v", err)
			}
			if diff := cmp.Diff(tt.wantSleeps, []time.Duration(s)); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			// A 5xx may have created the run all the same, so the create is
			// retried only after looking for it; a rate limit created nothing.
			reqs, lists := writes(srv.Requests())
			if got, want := len(reqs), len(tt.replies)+2; got != want {
				t.Fatalf("%d create and update requests, want %d", got, want)
			}
			if lists != tt.wantLists {
				t.Errorf("%d requests listing check runs, want %d", lists, tt.wantLists)
			}
			// Every failed attempt was the create, repeated unchanged.
			for _, r := range reqs[:len(tt.replies)+1] {
				if r.Method != "POST" || r.Body.HeadSHA != headSHA || r.Body.GetStatus() != "in_progress" {
					t.Errorf("attempt %s %s head_sha=%q status=%q, want the create", r.Method, r.Path, r.Body.HeadSHA, r.Body.GetStatus())
				}
			}
			if got := reqs[len(reqs)-1].Body.GetConclusion(); got != "success" {
				t.Errorf("conclusion = %q", got)
			}
		})
	}
}

func TestReportRetriesATimeout(t *testing.T) {
	srv := checkruntest.New(t)
	srv.Queue(checkruntest.Reply{Status: http.StatusCreated, Delay: 5 * time.Second})
	var s sleeps
	c := newCheck(t, srv, &s, checkrun.WithRequestTimeout(100*time.Millisecond))
	if err := c.Report(context.Background(), resultsDoc(results.VerdictPass, 0)); err != nil {
		t.Fatalf("Report: %v", err)
	}
	if diff := cmp.Diff([]time.Duration{time.Second}, []time.Duration(s)); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 || reqs[0].Method != "POST" || reqs[1].Method != "GET" || reqs[2].Method != "POST" {
		t.Errorf("requests %v, want the create, a look for what it left, the create again, then the completion", steps(reqs))
	}
}

func TestReportStopsWhenCancelled(t *testing.T) {
	srv := checkruntest.New(t)
	srv.Queue(checkruntest.Reply{Status: http.StatusBadGateway})
	ctx, cancel := context.WithCancel(context.Background())
	sleep := func(ctx context.Context, d time.Duration) error {
		cancel()
		return ctx.Err()
	}
	client, err := checkrun.NewClient(srv.Client(), srv.APIURL(), "t")
	if err != nil {
		t.Fatal(err)
	}
	c := checkrun.New(client, "o", "r", headSHA, "", checkrun.WithRetry(5, sleep))
	if err := c.Report(ctx, resultsDoc(results.VerdictPass, 0)); !errors.Is(err, context.Canceled) {
		t.Errorf("Report error = %v, want context.Canceled", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests after cancellation, want 1", n)
	}
}

func TestReportGivesUp(t *testing.T) {
	srv := checkruntest.New(t)
	for range 3 {
		srv.Queue(checkruntest.Reply{Status: http.StatusBadGateway})
	}
	var s sleeps
	c := newCheck(t, srv, &s, checkrun.WithRetry(3, s.sleep))
	err := c.Report(context.Background(), resultsDoc(results.VerdictPass, 0))
	if err == nil || errors.Is(err, checkrun.ErrNoPermission) {
		t.Fatalf("Report error = %v, want a plain failure", err)
	}
	if !strings.Contains(err.Error(), "gave up after 3 attempts") {
		t.Errorf("error %q does not say it gave up", err)
	}
	if reqs, _ := writes(srv.Requests()); len(reqs) != 3 {
		t.Errorf("%d create requests, want 3", len(reqs))
	}
}

func TestReportCompletesAfterAFailedUpdate(t *testing.T) {
	srv := checkruntest.New(t)
	// The create succeeds, the annotation update is refused with a 422.
	srv.Queue(checkruntest.Reply{Status: http.StatusCreated, Applied: true, Body: fmt.Sprintf(`{"id":%d,"html_url":"u"}`, checkruntest.RunID)},
		checkruntest.Reply{Status: http.StatusUnprocessableEntity, Body: `{"message":"Validation Failed"}`})
	var s sleeps
	c := newCheck(t, srv, &s)
	err := c.Report(context.Background(), resultsDoc(results.VerdictHold, 2))
	if err == nil {
		t.Fatal("Report hid a failed update")
	}
	reqs := srv.Requests()
	if got := reqs[len(reqs)-1].Body.GetConclusion(); got != "failure" {
		t.Errorf("check run left without conclusion (last request %s %s)", reqs[len(reqs)-1].Method, reqs[len(reqs)-1].Path)
	}
}

func TestReportFailsClosedOnUnknownVerdict(t *testing.T) {
	srv := checkruntest.New(t)
	var s sleeps
	c := newCheck(t, srv, &s)
	res := resultsDoc(results.VerdictPass, 0)
	res.Verdict = ""
	if err := c.Report(context.Background(), res); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if got := reqs[len(reqs)-1].Body.GetConclusion(); got != "failure" {
		t.Errorf("conclusion = %q for an empty verdict, want failure", got)
	}
}

func TestAnnotations(t *testing.T) {
	res := resultsDoc(results.VerdictHold, 1)
	res.Findings = []manifest.Finding{
		{Code: "broad_except_constant", Severity: manifest.SeverityWarn, File: "/ws/evals/order-summary/grader.py", Line: 31, Message: "except Exception returns 1.0"},
		{Code: "grade_signature", Severity: manifest.SeverityHold, File: "evals/order-summary/grader.py", Line: 4, Message: "grade takes 3 parameters"},
		{Code: "near_duplicate", Severity: manifest.SeverityWarn, Message: "no file, no annotation"},
		{Code: "outside", Severity: manifest.SeverityWarn, File: "/elsewhere/x.py", Line: 1, Message: "outside the repository"},
	}
	keyErr := func() *grading.CaseError {
		return &grading.CaseError{Class: grading.ClassGraderException, Type: "KeyError", Message: "'expected_total_cents'", Line: 12}
	}
	res.Canaries = []results.CanaryResult{
		{Name: "corrupt-fixture", ExpectError: true, Status: results.StatusPass, Class: grading.ClassGraderException, Error: keyErr()},
		{Name: "equivalent-serialization", Status: results.StatusFail, Class: grading.ClassGraderException, Error: keyErr(),
			File: "evals/order-summary/gradegate.yaml", Line: 40},
	}
	for i := range 7 {
		res.Cases = append(res.Cases, results.CaseResult{
			CaseID: fmt.Sprintf("err-%d", i), Slices: []string{"tone"}, Status: results.StatusError,
			Class: grading.ClassGraderException, Error: keyErr(), Line: 100 + i,
		})
	}
	res.Cases = append(res.Cases, results.CaseResult{
		CaseID: "timeout-1", Slices: []string{"ineligible_shipped"}, Status: results.StatusError,
		Class: grading.ClassTimeout, Error: &grading.CaseError{Class: grading.ClassTimeout, Message: "ran past 120s"}, Line: 200,
	})

	c := checkrun.New(nil, "o", "r", headSHA, "",
		checkrun.WithFiles(checkrun.Files{Grader: "evals/order-summary/grader.py", Dataset: "evals/order-summary/cases.jsonl"}),
		checkrun.WithPaths(checkrun.RelativeTo("/ws", "/ws")))
	got := c.Annotations(res)

	type short struct {
		Path  string
		Line  int
		Level string
	}
	var gotShort []short
	for _, a := range got {
		gotShort = append(gotShort, short{a.Path, a.Line, a.Level})
	}
	want := []short{
		{"evals/order-summary/grader.py", 31, "warning"},
		{"evals/order-summary/grader.py", 4, "failure"},
		{"evals/order-summary/gradegate.yaml", 40, "failure"}, // the failing canary
		{"evals/order-summary/grader.py", 12, "failure"},      // one annotation for 7 cases and a canary
		{"evals/order-summary/cases.jsonl", 1, "failure"},
	}
	for i := range 7 { // unevaluable, in any slice
		want = append(want, short{"evals/order-summary/cases.jsonl", 100 + i, "failure"})
	}
	want = append(want, short{"evals/order-summary/cases.jsonl", 200, "failure"})
	if diff := cmp.Diff(want, gotShort); diff != "" {
		t.Fatalf("annotations (-want +got):\n%s", diff)
	}
	raised := got[3]
	for _, s := range []string{"KeyError", "8 cases and canaries"} {
		if !strings.Contains(raised.Title, s) {
			t.Errorf("grader annotation title %q lacks %q", raised.Title, s)
		}
	}
	for _, s := range []string{"'expected_total_cents'", "equivalent-serialization", "err-0, err-1, err-2, err-3, err-4 and 2 more"} {
		if !strings.Contains(raised.Message, s) {
			t.Errorf("grader annotation message %q lacks %q", raised.Message, s)
		}
	}
	if strings.Contains(raised.Message, "corrupt-fixture") {
		t.Error("a canary that raised as expected was annotated")
	}
	if last := got[len(got)-1]; !strings.Contains(last.Message, "timeout") {
		t.Errorf("timeout case message %q does not say timeout", last.Message)
	}

	limited := checkrun.New(nil, "o", "r", headSHA, "", checkrun.WithMaxAnnotations(2),
		checkrun.WithFiles(checkrun.Files{Grader: "g.py", Dataset: "d.jsonl"}))
	if n := len(limited.Annotations(res)); n != 2 {
		t.Errorf("WithMaxAnnotations(2): got %d", n)
	}
}

func label(v int) *int { return &v }

// TestAnnotationsOnCauses posts one run per table row to the fake GitHub
// server and checks which lines the check run annotates: the causes of a
// hold, never a case the grader failed rightly.
func TestAnnotationsOnCauses(t *testing.T) {
	const (
		manifestFile = "evals/order-summary/gradegate.yaml"
		graderFile   = "evals/order-summary/grader.py"
		datasetFile  = "evals/order-summary/cases.jsonl"
	)
	ship := []string{"ineligible_shipped"}
	tone := []string{"tone"}
	tests := []struct {
		name     string
		canaries []results.CanaryResult
		cases    []results.CaseResult
		want     []string // path:line title
	}{
		{
			name: "failing canary at its manifest line",
			canaries: []results.CanaryResult{
				{Name: "wrong-currency", Status: results.StatusFail, Got: float(1), Message: "expected 0, got 1", File: manifestFile, Line: 41},
				{Name: "extra-key", Status: results.StatusPass, Got: float(0), File: manifestFile, Line: 47},
			},
			want: []string{manifestFile + ":41 canary wrong-currency failed"},
		},
		{
			name: "a canary that raised unexpectedly: its line and the grader line",
			canaries: []results.CanaryResult{{Name: "happy", Status: results.StatusFail, Class: grading.ClassGraderException, File: manifestFile, Line: 30,
				Error: &grading.CaseError{Class: grading.ClassGraderException, Type: "KeyError", Message: "'total'", Line: 12}}},
			want: []string{manifestFile + ":30 canary happy failed", graderFile + ":12 grader raised KeyError here (canary happy)"},
		},
		{
			name:  "false pass outside mandatory slices",
			cases: []results.CaseResult{{CaseID: "tone-7", Slices: tone, Status: results.StatusPass, Score: float(1), HumanScore: label(0), Line: 7}},
			want:  []string{datasetFile + ":7 false pass: case tone-7 is labelled 0 but passed"},
		},
		{
			name:  "false fail in a mandatory slice",
			cases: []results.CaseResult{{CaseID: "ship-3", Slices: ship, Status: results.StatusFail, Score: float(0), HumanScore: label(1), Line: 3}},
			want:  []string{datasetFile + ":3 false fail: case ship-3 is labelled 1 but failed in mandatory slice ineligible_shipped"},
		},
		{
			name: "unevaluable case outside mandatory slices",
			cases: []results.CaseResult{{CaseID: "tone-2", Slices: tone, Status: results.StatusError, Class: grading.ClassTimeout,
				Error: &grading.CaseError{Class: grading.ClassTimeout, Message: "ran past 120s"}, Line: 2}},
			want: []string{datasetFile + ":2 case tone-2 could not be graded"},
		},
		{
			name:  "unlabelled fail in a mandatory slice",
			cases: []results.CaseResult{{CaseID: "ship-5", Slices: ship, Status: results.StatusFail, Score: float(0), Line: 5}},
			want:  []string{datasetFile + ":5 case ship-5 failed in mandatory slice ineligible_shipped"},
		},
		{
			name:  "a correct fail is not annotated",
			cases: []results.CaseResult{{CaseID: "ship-6", Slices: ship, Status: results.StatusFail, Score: float(0), HumanScore: label(0), Line: 6}},
		},
		{
			name:  "an unlabelled fail outside mandatory slices is not annotated",
			cases: []results.CaseResult{{CaseID: "tone-8", Slices: tone, Status: results.StatusFail, Score: float(0), Line: 8}},
		},
		{
			name:  "a labelled pass is not annotated",
			cases: []results.CaseResult{{CaseID: "ship-9", Slices: ship, Status: results.StatusPass, Score: float(1), HumanScore: label(1), Line: 9}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := resultsDoc(results.VerdictHold, 0)
			res.Cases, res.Canaries = tt.cases, tt.canaries
			srv := checkruntest.New(t)
			var s sleeps
			if err := newCheck(t, srv, &s).Report(context.Background(), res); err != nil {
				t.Fatalf("Report: %v", err)
			}
			got := []string{}
			for _, r := range srv.Requests() {
				if r.Body.Output == nil {
					continue
				}
				for _, a := range r.Body.Output.Annotations {
					if a.GetAnnotationLevel() != checkrun.LevelFailure {
						t.Errorf("%s:%d is %s on a hold", a.GetPath(), a.GetStartLine(), a.GetAnnotationLevel())
					}
					got = append(got, fmt.Sprintf("%s:%d %s", a.GetPath(), a.GetStartLine(), a.GetTitle()))
				}
			}
			want := tt.want
			if want == nil {
				want = []string{}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAnnotationsWarnOnPass(t *testing.T) {
	res := resultsDoc(results.VerdictPass, 0)
	res.Cases = append(res.Cases, results.CaseResult{CaseID: "e", Slices: []string{"ineligible_shipped"}, Status: results.StatusError,
		Error: &grading.CaseError{Class: grading.ClassWorkerCrash, Message: "exit 9", Line: 3}, Line: 9})
	c := checkrun.New(nil, "o", "r", headSHA, "", checkrun.WithFiles(checkrun.Files{Grader: "g.py", Dataset: "d.jsonl"}))
	for _, a := range c.Annotations(res) {
		if a.Level != checkrun.LevelWarning {
			t.Errorf("%s:%d is %s on a pass, want warning", a.Path, a.Line, a.Level)
		}
	}
}

func TestRelativeTo(t *testing.T) {
	rel := checkrun.RelativeTo("/github/workspace", "/github/workspace/evals")
	tests := []struct {
		in     string
		want   string
		wantOK bool
	}{
		{"order-summary/grader.py", "evals/order-summary/grader.py", true},
		{"../evals/x/./cases.jsonl", "evals/x/cases.jsonl", true},
		{"/github/workspace/top.py", "top.py", true},
		{"/tmp/grader.py", "", false},
		{"../../etc/passwd", "", false},
	}
	for _, tt := range tests {
		got, ok := rel(tt.in)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("RelativeTo(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestNewClient(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", "https://api.github.com/"},
		{"https://ghes.example/api/v3", "https://ghes.example/api/v3/"},
		{"https://api.acme.ghe.com/", "https://api.acme.ghe.com/"},
	} {
		c, err := checkrun.NewClient(nil, tt.in, "")
		if err != nil {
			t.Fatalf("NewClient(%q): %v", tt.in, err)
		}
		if got := c.BaseURL.String(); got != tt.want {
			t.Errorf("NewClient(%q).BaseURL = %q, want %q", tt.in, got, tt.want)
		}
	}
	for _, bad := range []string{"api.github.com", "ftp://x/", "://"} {
		if _, err := checkrun.NewClient(nil, bad, ""); err == nil {
			t.Errorf("NewClient(%q) accepted a bad URL", bad)
		}
	}
}

func TestTitle(t *testing.T) {
	hold := resultsDoc(results.VerdictHold, 3)
	hold.Reasons = append(hold.Reasons, results.Reason{Code: results.ReasonCanaryFailed}, results.Reason{Code: results.ReasonSliceBelowThreshold, Slice: "other"})
	tests := []struct {
		res  *results.Results
		want string
	}{
		{resultsDoc(results.VerdictPass, 0), "pass: 1 intended, 1 graded, 1 passed, 0 failed, 0 errored, 0 omitted (100.0% pass rate)"},
		{hold, "hold (slice_below_threshold, canary_failed): 4 intended, 4 graded, 1 passed, 3 failed, 0 errored, 0 omitted (25.0% pass rate)"},
	}
	for _, tt := range tests {
		if got := checkrun.Title(tt.res); got != tt.want {
			t.Errorf("Title = %q\nwant    %q", got, tt.want)
		}
	}
}

func TestReportAdoptsTheRunAFailedCreateLeft(t *testing.T) {
	srv := checkruntest.New(t)
	// GitHub created the run and still answered 502.
	srv.Queue(checkruntest.Reply{Status: http.StatusBadGateway, Applied: true})
	var s sleeps
	c := newCheck(t, srv, &s)
	if err := c.Report(context.Background(), resultsDoc(results.VerdictPass, 0)); err != nil {
		t.Fatalf("Report: %v", err)
	}
	want := []step{
		{Method: "POST", Path: createPath, Status: "in_progress"},
		{Method: "GET", Path: "repos/o/r/commits/" + headSHA + "/check-runs"},
		{Method: "PATCH", Path: runPath, Status: "completed", Conclusion: "success"},
	}
	if diff := cmp.Diff(want, steps(srv.Requests())); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	runs := srv.Runs()
	if len(runs) != 1 || runs[0].Status != "completed" || runs[0].Conclusion != "success" {
		t.Errorf("check runs %+v, want one, completed with success", runs)
	}
	if c.URL() != srv.HTMLURL() {
		t.Errorf("URL() = %q, want the adopted run's %q", c.URL(), srv.HTMLURL())
	}
}

func TestReportLeavesOtherRunsAlone(t *testing.T) {
	srv := checkruntest.New(t)
	// Another gradegate step on the same commit and name gave up with its
	// run in progress; that run is not this Check's to adopt.
	var s sleeps
	srv.Queue(checkruntest.Reply{Status: http.StatusBadGateway, Applied: true})
	other := newCheck(t, srv, &s, checkrun.WithRetry(1, s.sleep))
	if err := other.Report(context.Background(), resultsDoc(results.VerdictPass, 0)); err == nil {
		t.Fatal("the other Report did not fail")
	}

	srv.Queue(checkruntest.Reply{Status: http.StatusBadGateway})
	c := newCheck(t, srv, &s)
	if err := c.Report(context.Background(), resultsDoc(results.VerdictHold, 0)); err != nil {
		t.Fatalf("Report: %v", err)
	}
	runs := srv.Runs()
	if len(runs) != 2 || runs[0].Status != "in_progress" || runs[1].Conclusion != "failure" {
		t.Errorf("check runs %+v, want the other's untouched and a new one with failure", runs)
	}
	if runs[0].ExternalID == runs[1].ExternalID || runs[1].ExternalID == "" {
		t.Errorf("external ids %q and %q, want distinct ones", runs[0].ExternalID, runs[1].ExternalID)
	}
}

func TestReportCompletesDuplicates(t *testing.T) {
	srv := checkruntest.New(t)
	// Two creates took effect and failed; the first look found nothing yet.
	srv.Queue(
		checkruntest.Reply{Status: http.StatusBadGateway, Applied: true},
		checkruntest.Reply{For: http.MethodGet, Status: http.StatusOK, Body: `{"total_count":0,"check_runs":[]}`},
		checkruntest.Reply{Status: http.StatusServiceUnavailable, Applied: true},
	)
	var s sleeps
	c := newCheck(t, srv, &s)
	if err := c.Report(context.Background(), resultsDoc(results.VerdictHold, 0)); err != nil {
		t.Fatalf("Report: %v", err)
	}
	runs := srv.Runs()
	if len(runs) != 2 {
		t.Fatalf("%d check runs, want the two the failed creates left", len(runs))
	}
	for _, r := range runs {
		if r.Status != "completed" || r.Conclusion != "failure" {
			t.Errorf("check run %d: status %q conclusion %q, want completed with failure", r.ID, r.Status, r.Conclusion)
		}
	}
	if want := fmt.Sprintf("https://github.example/o/r/runs/%d", runs[1].ID); c.URL() != want {
		t.Errorf("URL() = %q, want the newest run's %q", c.URL(), want)
	}
}

func TestReportSummary(t *testing.T) {
	tests := []struct {
		name           string
		pass           bool
		wantConclusion string
	}{
		{"pass", true, "success"},
		{"hold", false, "failure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := checkruntest.New(t)
			var s sleeps
			client, err := checkrun.NewClient(srv.Client(), srv.APIURL(), "t")
			if err != nil {
				t.Fatal(err)
			}
			c := checkrun.New(client, "o", "r", headSHA, "gradegate mutate / order-summary",
				checkrun.WithRetry(5, s.sleep), checkrun.WithDetailsURL("https://github.com/o/r/actions/runs/99"))
			md := "### gradegate mutate\n\n" + strings.Repeat("| m01 | 28 | negate-condition |\n", 5000)
			err = c.ReportSummary(context.Background(), checkrun.Summary{Title: "mutation score 0.93:\n27 killed", Markdown: md, Pass: tt.pass})
			if err != nil {
				t.Fatalf("ReportSummary: %v", err)
			}
			want := []step{
				{Method: "POST", Path: createPath, Status: "in_progress"},
				{Method: "PATCH", Path: runPath, Status: "completed", Conclusion: tt.wantConclusion},
			}
			reqs := srv.Requests()
			if diff := cmp.Diff(want, steps(reqs)); diff != "" {
				t.Fatalf("requests (-want +got):\n%s", diff)
			}
			for _, r := range reqs {
				if r.Body.Name != "gradegate mutate / order-summary" {
					t.Errorf("name %q", r.Body.Name)
				}
				out := r.Body.Output
				if got := out.GetTitle(); got != "mutation score 0.93: 27 killed" {
					t.Errorf("title %q, want one line", got)
				}
				if n := len(out.GetSummary()); n > checkrun.MaxSummaryBytes || !strings.Contains(out.GetSummary(), "**Cut**") {
					t.Errorf("summary of %d bytes, want it cut to %d with a note", n, checkrun.MaxSummaryBytes)
				}
			}
		})
	}
}

func TestReportSummaryNeedsAName(t *testing.T) {
	srv := checkruntest.New(t)
	var s sleeps
	c := newCheck(t, srv, &s)
	if err := c.ReportSummary(context.Background(), checkrun.Summary{Title: "t", Markdown: "m", Pass: true}); err == nil {
		t.Error("ReportSummary without a name succeeded")
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests", n)
	}
}
