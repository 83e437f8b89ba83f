package hosted

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A grader source with everything a careless encoder would change: CRLF and
// LF line ends, tabs, trailing blanks, HTML-escaped characters, non-ASCII
// text, a backslash, and no final newline.
const trickySource = "# grader \u00e9t\u00e9 \u2014 <ok> & \"quoted\"\r\ndef grade(sample, item):\n\tx = '\\n'  \n    return 1.0 if sample[\"output_text\"] else 0.0   "

func TestValidateSendsPinnedGrader(t *testing.T) {
	f := newFake(t)
	c := newTestClient(f, &sleeps{})
	g := Grader{Name: "order_summary_contract_v1", Source: trickySource, ImageTag: "2025-05-08"}
	if err := c.Validate(context.Background(), g); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	reqs := f.recorded()
	if len(reqs) != 1 {
		t.Fatalf("got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if want := prefix + "/v1/fine_tuning/alpha/graders/validate"; r.Path != want {
		t.Errorf("path = %q, want %q", r.Path, want)
	}
	if want := "Bearer " + testKey; r.Authorization != want {
		t.Errorf("Authorization = %q, want %q", r.Authorization, want)
	}
	if r.ContentType != "application/json" {
		t.Errorf("Content-Type = %q", r.ContentType)
	}
	var body map[string]map[string]string
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("body: %v: %s", err, r.Body)
	}
	want := map[string]map[string]string{"grader": {"type": "python", "name": "order_summary_contract_v1", "source": trickySource, "image_tag": "2025-05-08"}}
	if diff := cmp.Diff(want, body); diff != "" {
		t.Errorf("validate body (-want +got):\n%s", diff)
	}
}

func TestRunSendsSampleAndItem(t *testing.T) {
	f := newFake(t)
	sample := `{"status":"approved","currency":"USD","total_cents":2599}`
	item := json.RawMessage(`{"expected_currency": "USD", "expected_total_cents": 2599, "nested": {"a": [1, 2.5, null]}}`)
	f.onRun(sample, ok(1))
	c := newTestClient(f, &sleeps{})
	g := Grader{Type: "python", Name: "g", Source: trickySource}

	res, err := c.Run(context.Background(), g, sample, item)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Reward != 1 || res.Errored() || len(res.Attempts) != 1 || res.Attempts[0].Status != 200 {
		t.Errorf("result = %+v", res)
	}
	reqs := f.recorded()
	if len(reqs) != 1 || reqs[0].Path != prefix+"/v1/fine_tuning/alpha/graders/run" {
		t.Fatalf("requests = %+v", reqs)
	}
	var got wireRequest
	if err := json.Unmarshal(reqs[0].Body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Grader.Source == nil || *got.Grader.Source != trickySource {
		t.Errorf("source bytes changed on the wire:\n got %q\nwant %q", deref(got.Grader.Source), trickySource)
	}
	if got.Grader.ImageTag != nil {
		t.Errorf("image_tag sent although empty: %q", *got.Grader.ImageTag)
	}
	if deref(got.ModelSample) != sample {
		t.Errorf("model_sample = %q, want %q", deref(got.ModelSample), sample)
	}
	if !jsonEqual(t, got.Item, item) {
		t.Errorf("item = %s, want %s", got.Item, item)
	}
}

func TestRunDecodesResponse(t *testing.T) {
	tests := []struct {
		name        string
		body        string
		wantReward  float64
		wantFlags   []string
		wantRuntime bool
		wantDetails string
	}{
		{
			name:       "clean reward",
			body:       runBody(0.75, nil),
			wantReward: 0.75,
		},
		{
			name:        "runtime error with details",
			body:        runBody(0, map[string]any{"python_grader_runtime_error": true, "python_grader_runtime_error_details": "Traceback…\nKeyError: 'expected_total_cents'"}),
			wantFlags:   []string{"python_grader_runtime_error"},
			wantRuntime: true,
			wantDetails: "Traceback…\nKeyError: 'expected_total_cents'",
		},
		{
			name:        "server error is an error but not a raise",
			body:        runBody(0, map[string]any{"python_grader_server_error": true, "python_grader_server_error_type": "timeout"}),
			wantFlags:   []string{"python_grader_server_error"},
			wantDetails: "python_grader_server_error_type: timeout",
		},
		{
			name:      "a flag the service adds later still counts",
			body:      runBody(1, map[string]any{"sandbox_quota_error": true}),
			wantFlags: []string{"sandbox_quota_error"}, wantReward: 1,
		},
		{
			name:       "token_usage as an object",
			body:       strings.Replace(runBody(1, nil), `"token_usage": null`, `"token_usage": {"prompt_tokens": 1, "total_tokens": 2}`, 1),
			wantReward: 1,
		},
		{
			name:       "token_usage as a number",
			body:       strings.Replace(runBody(1, nil), `"token_usage": null`, `"token_usage": 0`, 1),
			wantReward: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			f.onRun("s", reply{status: 200, body: tt.body})
			res, err := newTestClient(f, &sleeps{}).Run(context.Background(), Grader{Name: "g", Source: "x"}, "s", nil)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Reward != tt.wantReward || res.RuntimeError != tt.wantRuntime || res.ErrorDetails != tt.wantDetails {
				t.Errorf("reward %v runtime %v details %q; want %v %v %q", res.Reward, res.RuntimeError, res.ErrorDetails, tt.wantReward, tt.wantRuntime, tt.wantDetails)
			}
			if diff := cmp.Diff(tt.wantFlags, res.ErrorFlags); diff != "" {
				t.Errorf("flags (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRetries(t *testing.T) {
	clock := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		replies    []reply
		wantErr    bool
		wantStatus []int           // status of each attempt, in order
		wantSleeps []time.Duration // waits between attempts
		check      func(t *testing.T, err error)
		policy     *RetryPolicy // testPolicy when nil
	}{
		{
			name:       "500 then success keeps both attempts",
			replies:    []reply{apiErr(500, "The server had an error"), ok(1)},
			wantStatus: []int{500, 200},
			wantSleeps: []time.Duration{time.Second},
		},
		{
			name:       "429 honours Retry-After seconds",
			replies:    []reply{{status: 429, header: map[string]string{"Retry-After": "7"}, body: `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`}, ok(1)},
			wantStatus: []int{429, 200},
			wantSleeps: []time.Duration{7 * time.Second},
		},
		{
			name:       "429 honours retry-after-ms",
			replies:    []reply{{status: 429, header: map[string]string{"retry-after-ms": "2500"}}, ok(1)},
			wantStatus: []int{429, 200},
			wantSleeps: []time.Duration{2500 * time.Millisecond},
		},
		{
			name:       "429 honours Retry-After as an HTTP date",
			replies:    []reply{{status: 429, header: map[string]string{"Retry-After": clock.Add(4 * time.Second).Format(http.TimeFormat)}}, ok(1)},
			wantStatus: []int{429, 200},
			wantSleeps: []time.Duration{4 * time.Second},
		},
		{
			name:       "a Retry-After over a minute falls back to the doubling wait, as the SDKs do",
			replies:    []reply{{status: 429, header: map[string]string{"Retry-After": "3600"}}, ok(1)},
			wantStatus: []int{429, 200},
			wantSleeps: []time.Duration{time.Second},
		},
		{
			name:       "fractional Retry-After",
			replies:    []reply{{status: 429, header: map[string]string{"Retry-After": "1.5"}}, ok(1)},
			wantStatus: []int{429, 200},
			wantSleeps: []time.Duration{1500 * time.Millisecond},
		},
		{
			name:       "fractional retry-after-ms",
			replies:    []reply{{status: 503, header: map[string]string{"retry-after-ms": "250.5"}}, ok(1)},
			wantStatus: []int{503, 200},
			wantSleeps: []time.Duration{250500 * time.Microsecond},
		},
		{
			name:       "408 is retried",
			replies:    []reply{apiErr(408, "request timeout"), ok(1)},
			wantStatus: []int{408, 200},
			wantSleeps: []time.Duration{time.Second},
		},
		{
			name:       "409 is retried",
			replies:    []reply{apiErr(409, "conflict"), ok(1)},
			wantStatus: []int{409, 200},
			wantSleeps: []time.Duration{time.Second},
		},
		{
			name:       "x-should-retry: false makes a 500 final",
			replies:    []reply{withHeader(apiErr(500, "do not retry"), "x-should-retry", "false"), ok(1)},
			wantErr:    true,
			wantStatus: []int{500},
		},
		{
			name:       "x-should-retry: true retries a 400",
			replies:    []reply{withHeader(apiErr(400, "try again"), "x-should-retry", "true"), ok(1)},
			wantStatus: []int{400, 200},
			wantSleeps: []time.Duration{time.Second},
		},
		{
			name:       "no retry past 120 s in all",
			policy:     &RetryPolicy{MaxAttempts: 10, BaseDelay: time.Second, MaxDelay: 10 * time.Second, MaxElapsed: 120 * time.Second},
			replies:    []reply{{status: 429, header: map[string]string{"Retry-After": "50"}}},
			wantErr:    true,
			wantStatus: []int{429, 429, 429},
			wantSleeps: []time.Duration{50 * time.Second, 50 * time.Second},
			check: func(t *testing.T, err error) {
				if !errors.Is(err, ErrRetriesExhausted) || !strings.Contains(err.Error(), "would pass 2m0s") {
					t.Errorf("err = %v, want retries exhausted by the 120 s bound", err)
				}
			},
		},
		{
			name:       "404 says the hosted graders are unavailable",
			replies:    []reply{apiErr(404, "Invalid URL (POST /v1/fine_tuning/alpha/graders/run)"), ok(1)},
			wantErr:    true,
			wantStatus: []int{404},
			check: func(t *testing.T, err error) {
				var apiErr *APIError
				if !errors.Is(err, ErrUnavailable) || !errors.As(err, &apiErr) || apiErr.Rejected() || !strings.Contains(err.Error(), "deprecation") {
					t.Errorf("err = %v, want ErrUnavailable and no rejection", err)
				}
			},
		},
		{
			name:       "the error's param is kept",
			replies:    []reply{apiErrParam(400, "Invalid value", "grader.image_tag")},
			wantErr:    true,
			wantStatus: []int{400},
			check: func(t *testing.T, err error) {
				var apiErr *APIError
				if !errors.As(err, &apiErr) || apiErr.Param != "grader.image_tag" || !strings.Contains(err.Error(), "[param grader.image_tag]") {
					t.Errorf("err = %v (%+v), want param grader.image_tag kept", err, apiErr)
				}
			},
		},
		{
			name:       "network error is retried",
			replies:    []reply{{hangup: true}, ok(1)},
			wantStatus: []int{0, 200},
			wantSleeps: []time.Duration{time.Second},
		},
		{
			name:       "backoff doubles until attempts run out",
			replies:    []reply{apiErr(502, "bad gateway"), apiErr(503, "unavailable"), apiErr(500, "still down")},
			wantErr:    true,
			wantStatus: []int{502, 503, 500},
			wantSleeps: []time.Duration{time.Second, 2 * time.Second},
			check: func(t *testing.T, err error) {
				if !errors.Is(err, ErrRetriesExhausted) {
					t.Errorf("err = %v, want ErrRetriesExhausted", err)
				}
				var apiErr *APIError
				if !errors.As(err, &apiErr) || apiErr.StatusCode != 500 || apiErr.Message != "still down" {
					t.Errorf("last APIError = %+v", apiErr)
				}
			},
		},
		{
			name:       "400 is final",
			replies:    []reply{apiErr(400, "model_sample is required"), ok(1)},
			wantErr:    true,
			wantStatus: []int{400},
			check: func(t *testing.T, err error) {
				var apiErr *APIError
				if !errors.As(err, &apiErr) || !apiErr.Rejected() || apiErr.Message != "model_sample is required" || apiErr.RequestID != "req_fake" {
					t.Errorf("APIError = %+v", apiErr)
				}
			},
		},
		{
			name:       "401 is final and not a rejection of the grader",
			replies:    []reply{apiErr(401, "Incorrect API key provided"), ok(1)},
			wantErr:    true,
			wantStatus: []int{401},
			check: func(t *testing.T, err error) {
				var apiErr *APIError
				if !errors.As(err, &apiErr) || apiErr.Rejected() {
					t.Errorf("APIError = %+v", apiErr)
				}
			},
		},
		{
			name:       "2xx with a body that is not a run response is final",
			replies:    []reply{{status: 200, body: `<html>proxy</html>`}, ok(1)},
			wantErr:    true,
			wantStatus: []int{200},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			f.onRun("s", tt.replies...)
			s := &sleeps{}
			opts := []Option{WithClock(func() time.Time { return clock })}
			if tt.policy != nil {
				opts = append(opts, WithRetryPolicy(*tt.policy))
			}
			c := newTestClient(f, s, opts...)
			res, err := c.Run(context.Background(), Grader{Name: "g", Source: "x"}, "s", nil)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			var status []int
			for i, a := range res.Attempts {
				status = append(status, a.Status)
				if tt.name == "the error's param is kept" && a.Param != "grader.image_tag" {
					t.Errorf("attempt %d param = %q", i, a.Param)
				}
				if a.Endpoint != "run" {
					t.Errorf("attempt %d endpoint = %q", i, a.Endpoint)
				}
				failed := i < len(res.Attempts)-1 || tt.wantErr
				if failed && a.Error == "" {
					t.Errorf("attempt %d failed but records no error: %+v", i, a)
				}
				if !failed && a.Error != "" {
					t.Errorf("attempt %d succeeded but records error %q", i, a.Error)
				}
			}
			if diff := cmp.Diff(tt.wantStatus, status); diff != "" {
				t.Errorf("attempt statuses (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSleeps, s.got()); diff != "" {
				t.Errorf("sleeps (-want +got):\n%s", diff)
			}
			if got := len(f.recorded()); got != len(tt.wantStatus) {
				t.Errorf("server saw %d requests, want %d", got, len(tt.wantStatus))
			}
			if tt.check != nil {
				tt.check(t, err)
			}
		})
	}
}

func TestRetryStopsWhenContextEnds(t *testing.T) {
	f := newFake(t)
	f.onRun("s", apiErr(503, "busy"))
	ctx, cancel := context.WithCancel(context.Background())
	sleep := func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() }
	c := newTestClient(f, &sleeps{}, WithSleep(sleep))
	res, err := c.Run(ctx, Grader{Name: "g", Source: "x"}, "s", nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if len(res.Attempts) != 1 || res.Attempts[0].Status != 503 {
		t.Errorf("attempts = %+v, want the one 503 kept", res.Attempts)
	}
}

func TestValidateRejected(t *testing.T) {
	f := newFake(t)
	f.onValidate(apiErr(400, "Invalid image_tag '2099-01-01'"))
	err := newTestClient(f, &sleeps{}).Validate(context.Background(), Grader{Name: "g", Source: "x", ImageTag: "2099-01-01"})
	var apiErr *APIError
	if !errors.As(err, &apiErr) || !apiErr.Rejected() {
		t.Fatalf("err = %v, want a rejecting *APIError", err)
	}
	for _, want := range []string{"validate", "400", "Invalid image_tag '2099-01-01'"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if n := len(f.recorded()); n != 1 {
		t.Errorf("a 400 was retried: %d requests", n)
	}
}

func TestSourceThatIsNotUTF8IsRefused(t *testing.T) {
	f := newFake(t)
	err := newTestClient(f, &sleeps{}).Validate(context.Background(), Grader{Name: "g", Source: "def grade(s, i):\n    return 1.0 # \xff\n"})
	if err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("err = %v, want a refusal naming UTF-8", err)
	}
	if n := len(f.recorded()); n != 0 {
		t.Errorf("sent %d requests for a source that cannot be sent byte for byte", n)
	}
}

func TestBaseURL(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"default", "", "https://api.openai.com/v1"},
		{"host only", "https://api.openai.com", "https://api.openai.com/v1"},
		{"trailing slash", "https://api.openai.com/", "https://api.openai.com/v1"},
		{"already /v1", "https://api.openai.com/v1", "https://api.openai.com/v1"},
		{"proxy prefix", "http://127.0.0.1:8080/openai", "http://127.0.0.1:8080/openai/v1"},
		{"user info is hidden", "https://user:pw@proxy.example/x", "https://user:xxxxx@proxy.example/x/v1"},
		{"not absolute", "api.openai.com", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NewClient(tt.in, testKey).BaseURL(); got != tt.want {
				t.Errorf("BaseURL() = %q, want %q", got, tt.want)
			}
		})
	}
	err := NewClient("api.openai.com", testKey).Validate(context.Background(), Grader{Source: "x"})
	if err == nil || !strings.Contains(err.Error(), "base URL") {
		t.Errorf("err = %v, want one naming the base URL", err)
	}
}

func TestAlreadyV1BaseURLReachesTheEndpoint(t *testing.T) {
	f := newFake(t)
	c := NewClient(f.baseURL()+"/v1", testKey, WithHTTPClient(f.srv.Client()), WithSleep((&sleeps{}).sleep))
	if err := c.Validate(context.Background(), Grader{Name: "g", Source: "x"}); err != nil {
		t.Fatalf("Validate: %v", err)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<absent>"
	}
	return *s
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return cmp.Equal(x, y)
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		name, in string
		n        int
		want     string
	}{
		{"short stays", "abc", 5, "abc"},
		{"cut marks the cut", "abcdef", 3, "abc…"},
		{"never splits a rune", "aé", 2, "a…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := truncate(tt.in, tt.n); got != tt.want {
				t.Errorf("truncate(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
			}
		})
	}
}

func TestSleepContextEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sleepContext(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if err := sleepContext(context.Background(), time.Millisecond); err != nil {
		t.Errorf("err = %v", err)
	}
}
