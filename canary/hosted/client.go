// Package hosted runs gradegate's canaries on OpenAI's hosted Python grader
// (POST /v1/fine_tuning/alpha/graders/validate and /run) and compares the
// hosted outcome of each canary with its expectation and with the local
// sandbox's outcome: `gradegate canary --hosted`.
//
// The API key is only ever written into the Authorization header. Errors,
// attempt records and reports never carry it.
package hosted

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultBaseURL is the OpenAI API's base URL. Paths are appended under it as
// /v1/fine_tuning/alpha/graders/...; a base URL that already ends in /v1 is
// used as it is.
const DefaultBaseURL = "https://api.openai.com"

// Endpoint paths below the base URL's /v1.
const (
	validatePath = "fine_tuning/alpha/graders/validate"
	runPath      = "fine_tuning/alpha/graders/run"
)

// Bounds on what is read from, or kept of, a response.
const (
	maxResponseBytes = 8 << 20 // a run response carries the grader's scores and error details
	maxMessageBytes  = 2048    // an error message kept in an Attempt or an error
	redacted         = "[redacted]"
)

// RetryPolicy bounds how requests are retried. The rules are those of
// OpenAI's own SDKs: a response with the header x-should-retry: true is
// retried and one with false is not, whatever its status; otherwise 408, 409,
// 429, 5xx and network errors are retried and any other status is final.
type RetryPolicy struct {
	// MaxAttempts is the total number of attempts per request, first included (at least 1).
	MaxAttempts int
	// BaseDelay is the wait before the second attempt; it doubles for each later one.
	BaseDelay time.Duration
	// MaxDelay caps the doubling waits. A Retry-After (or retry-after-ms) of
	// more than zero and at most a minute is waited out as asked; a longer or
	// unreadable one falls back to the doubling wait, as the SDKs do.
	MaxDelay time.Duration
	// MaxElapsed bounds one request with all its retries: no retry starts
	// when the attempts and waits so far, plus the next wait, would pass it.
	MaxElapsed time.Duration
	// AttemptTimeout bounds one attempt. The hosted grader may run for up to
	// two minutes (OpenAI's grader guide), so the default leaves room above that.
	AttemptTimeout time.Duration
}

// DefaultRetryPolicy is the policy a Client uses unless WithRetryPolicy is given.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxAttempts: 4, BaseDelay: time.Second, MaxDelay: 8 * time.Second, MaxElapsed: 120 * time.Second, AttemptTimeout: 180 * time.Second}
}

// maxRetryAfter is the longest server-asked wait that is honoured as is.
const maxRetryAfter = time.Minute

// delay is the wait before attempt n+1 after attempt n (n >= 1) failed: the
// server's Retry-After when it asked for one within maxRetryAfter, else the
// doubling wait.
func (p RetryPolicy) delay(n int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 && retryAfter <= maxRetryAfter {
		return retryAfter
	}
	d := p.BaseDelay
	for i := 1; i < n && (p.MaxDelay <= 0 || d < p.MaxDelay); i++ {
		d *= 2
	}
	if p.MaxDelay > 0 {
		d = min(d, p.MaxDelay)
	}
	return d
}

// SleepFunc waits for d or until ctx ends, whichever is first, and returns
// ctx's error in the second case. Tests inject one that does not wait.
type SleepFunc func(ctx context.Context, d time.Duration) error

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

// Client talks to the hosted grader API. It is safe for concurrent use.
type Client struct {
	base   *url.URL
	apiKey string
	http   *http.Client
	retry  RetryPolicy
	sleep  SleepFunc
	now    func() time.Time
	agent  string
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client (default: a new http.Client).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithRetryPolicy sets how requests are retried (default: DefaultRetryPolicy).
func WithRetryPolicy(p RetryPolicy) Option { return func(c *Client) { c.retry = p } }

// WithSleep sets how the client waits between attempts (default: a timer).
func WithSleep(s SleepFunc) Option { return func(c *Client) { c.sleep = s } }

// WithClock sets the clock used to time attempts and read Retry-After dates.
func WithClock(now func() time.Time) Option { return func(c *Client) { c.now = now } }

// WithUserAgent sets the User-Agent header (default "gradegate").
func WithUserAgent(ua string) Option { return func(c *Client) { c.agent = ua } }

// NewClient returns a client for the API at baseURL (DefaultBaseURL when
// empty) that authenticates with apiKey. A baseURL that does not parse as an
// absolute http(s) URL makes every request fail with an error saying so.
func NewClient(baseURL, apiKey string, opts ...Option) *Client {
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	c := &Client{
		apiKey: apiKey,
		http:   &http.Client{},
		retry:  DefaultRetryPolicy(),
		sleep:  sleepContext,
		now:    time.Now,
		agent:  "gradegate",
	}
	if u, err := url.Parse(strings.TrimRight(baseURL, "/")); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		if !strings.HasSuffix(u.Path, "/v1") {
			u = u.JoinPath("v1")
		}
		c.base = u
	}
	for _, o := range opts {
		o(c)
	}
	if c.retry.MaxAttempts < 1 {
		c.retry.MaxAttempts = 1
	}
	return c
}

// BaseURL is the API base the client sends to, with any user info removed.
func (c *Client) BaseURL() string {
	if c.base == nil {
		return ""
	}
	return c.base.Redacted()
}

// String describes the client without its API key, so that printing a
// Client with %v or %+v cannot leak it.
func (c *Client) String() string { return "hosted.Client{" + c.BaseURL() + "}" }

// GoString is String, for %#v.
func (c *Client) GoString() string { return c.String() }

// redact removes the API key from text that came from outside (a server's
// error body, a transport error) before it is kept anywhere.
func (c *Client) redact(s string) string {
	if c.apiKey == "" {
		return s
	}
	return strings.ReplaceAll(s, c.apiKey, redacted)
}

// Attempt is one HTTP request to the hosted API, kept whether it succeeded
// or not: a retry never erases an earlier failure.
type Attempt struct {
	Endpoint  string        `json:"endpoint"`             // validate | run
	Status    int           `json:"status"`               // HTTP status; 0 when no response arrived
	Error     string        `json:"error,omitempty"`      // why the attempt failed; empty on success
	Duration  time.Duration `json:"-"`                    // time from sending to the end of the body
	RequestID string        `json:"request_id,omitempty"` // the x-request-id response header
	// Param is the error body's param: the request field it is about.
	Param string `json:"param,omitempty"`
	// Wait is the pause taken after this attempt before the next one.
	Wait time.Duration `json:"-"`
}

// MarshalJSON writes durations as milliseconds.
func (a Attempt) MarshalJSON() ([]byte, error) {
	type plain Attempt
	return json.Marshal(struct {
		plain
		DurationMS float64 `json:"duration_ms"`
		WaitMS     float64 `json:"wait_ms,omitempty"`
	}{plain(a), ms(a.Duration), ms(a.Wait)})
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// APIError is a final error response from the hosted API.
type APIError struct {
	Endpoint   string // validate | run
	StatusCode int
	Type       string // error.type from the body, when it has one
	Code       string // error.code from the body, when it has one
	// Param is error.param: the request field the error is about
	// ("grader.source", "item"), when the body names one.
	Param     string
	Message   string // error.message, or the start of the body
	RequestID string
	// shouldRetry is the x-should-retry header: "true", "false" or "".
	shouldRetry string
}

// ErrUnavailable marks a 404 from the graders endpoints: the hosted graders
// are not there (OpenAI's graders guide announces their deprecation), which
// is the service failing gradegate, not a verdict on the grader. Test with
// errors.Is.
var ErrUnavailable = errors.New("the hosted graders are unavailable")

// Is makes a 404 match ErrUnavailable.
func (e *APIError) Is(target error) bool {
	return target == ErrUnavailable && e.StatusCode == http.StatusNotFound
}

// retryable applies OpenAI's SDK rules to a final response.
func (e *APIError) retryable() bool {
	switch e.shouldRetry {
	case "true":
		return true
	case "false":
		return false
	}
	switch e.StatusCode {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooManyRequests:
		return true
	}
	return e.StatusCode >= 500
}

func (e *APIError) Error() string {
	return fmt.Sprintf("hosted %s: HTTP %d%s", e.Endpoint, e.StatusCode, e.detail())
}

// detail is what the body said, as " type (code): message [request id]".
func (e *APIError) detail() string {
	var b strings.Builder
	if e.Type != "" {
		b.WriteString(" " + e.Type)
	}
	if e.Code != "" {
		b.WriteString(" (" + e.Code + ")")
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.Param != "" {
		b.WriteString(" [param " + e.Param + "]")
	}
	if e.StatusCode == http.StatusNotFound {
		b.WriteString(" (" + ErrUnavailable.Error() + ": OpenAI's graders guide announces their deprecation)")
	}
	if e.RequestID != "" {
		b.WriteString(" [request " + e.RequestID + "]")
	}
	return b.String()
}

// Rejected reports whether the API judged the request itself unacceptable
// (400, 422: bad grader, bad sample or item) rather than failing to serve it
// (auth, a missing endpoint, rate limit, server or network failure).
func (e *APIError) Rejected() bool {
	switch e.StatusCode {
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

// ErrRetriesExhausted marks an error after every allowed attempt, or the
// whole time allowed (RetryPolicy.MaxElapsed), went to retryable failures.
// Test with errors.Is.
var ErrRetriesExhausted = errors.New("retries exhausted")

type exhaustedError struct {
	endpoint string
	attempts int
	why      string // "" when the attempts ran out
	last     error
}

func (e *exhaustedError) Error() string {
	return fmt.Sprintf("hosted %s: gave up after %d attempts%s: %v", e.endpoint, e.attempts, e.why, e.last)
}
func (e *exhaustedError) Unwrap() []error { return []error{ErrRetriesExhausted, e.last} }

// transportError is an attempt that got no HTTP response (or no full body).
type transportError struct {
	endpoint string
	msg      string
}

func (e *transportError) Error() string { return "hosted " + e.endpoint + ": " + e.msg }

// post sends body to path with retries and decodes a 2xx response into out
// (when out is non-nil). It returns every attempt made, also on error.
func (c *Client) post(ctx context.Context, endpoint, path string, body []byte, out any) ([]Attempt, error) {
	if c.base == nil {
		return nil, fmt.Errorf("hosted %s: base URL is not an absolute http(s) URL", endpoint)
	}
	target := c.base.JoinPath(path).String()
	var attempts []Attempt
	var spent time.Duration // attempts and waits so far
	for n := 1; ; n++ {
		a, respBody, retryAfter, err := c.attempt(ctx, endpoint, target, body)
		if err == nil && out != nil {
			if jerr := json.Unmarshal(respBody, out); jerr != nil {
				// A 2xx whose body is not the documented shape is final: retrying
				// would not change what the service means.
				err = fmt.Errorf("hosted %s: decode response: %w", endpoint, jerr)
				a.Error = c.redact(err.Error())
				attempts = append(attempts, a)
				return attempts, err
			}
		}
		if err == nil {
			attempts = append(attempts, a)
			return attempts, nil
		}
		var apiErr *APIError
		retryable := !errors.As(err, &apiErr) || apiErr.retryable()
		spent += a.Duration
		if ctx.Err() != nil {
			attempts = append(attempts, a)
			return attempts, fmt.Errorf("hosted %s: %w", endpoint, ctx.Err())
		}
		if !retryable {
			attempts = append(attempts, a)
			return attempts, err
		}
		if n >= c.retry.MaxAttempts {
			attempts = append(attempts, a)
			return attempts, &exhaustedError{endpoint: endpoint, attempts: n, last: err}
		}
		wait := c.retry.delay(n, retryAfter)
		if c.retry.MaxElapsed > 0 && spent+wait > c.retry.MaxElapsed {
			attempts = append(attempts, a)
			return attempts, &exhaustedError{endpoint: endpoint, attempts: n, last: err,
				why: fmt.Sprintf(" (a retry after %s would pass %s in all)", wait, c.retry.MaxElapsed)}
		}
		a.Wait = wait
		spent += wait
		attempts = append(attempts, a)
		if serr := c.sleep(ctx, a.Wait); serr != nil {
			return attempts, fmt.Errorf("hosted %s: waiting to retry: %w", endpoint, serr)
		}
	}
}

// attempt makes one request. err is an *APIError for an HTTP error status and
// a *transportError when no usable response arrived.
func (c *Client) attempt(ctx context.Context, endpoint, target string, body []byte) (Attempt, []byte, time.Duration, error) {
	a := Attempt{Endpoint: endpoint}
	if c.retry.AttemptTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.retry.AttemptTimeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		a.Error = c.redact(err.Error())
		return a, nil, 0, &transportError{endpoint: endpoint, msg: a.Error}
	}
	req.Header.Set("Authorization", "Bearer "+c.apiKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.agent)

	start := c.now()
	resp, err := c.http.Do(req)
	if err != nil {
		a.Duration = c.now().Sub(start)
		a.Error = c.redact(err.Error())
		return a, nil, 0, &transportError{endpoint: endpoint, msg: a.Error}
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	a.Duration = c.now().Sub(start)
	a.Status = resp.StatusCode
	a.RequestID = c.redact(resp.Header.Get("x-request-id"))
	if err != nil {
		a.Error = c.redact("reading response: " + err.Error())
		return a, nil, 0, &transportError{endpoint: endpoint, msg: a.Error}
	}
	if len(respBody) > maxResponseBytes {
		a.Error = fmt.Sprintf("response larger than %d bytes", maxResponseBytes)
		return a, nil, 0, &transportError{endpoint: endpoint, msg: a.Error}
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return a, respBody, 0, nil
	}
	apiErr := c.apiError(endpoint, resp, respBody)
	a.Error = strings.TrimPrefix(apiErr.detail(), " ")
	if a.Error == "" {
		a.Error = http.StatusText(resp.StatusCode)
	}
	a.Param = apiErr.Param
	return a, nil, c.retryAfter(resp.Header), apiErr
}

// apiError reads OpenAI's error body {"error": {"message", "type", "code"}},
// falling back to the start of the body as text.
func (c *Client) apiError(endpoint string, resp *http.Response, body []byte) *APIError {
	e := &APIError{Endpoint: endpoint, StatusCode: resp.StatusCode, RequestID: c.redact(resp.Header.Get("x-request-id")),
		shouldRetry: strings.ToLower(strings.TrimSpace(resp.Header.Get("x-should-retry")))}
	var env struct {
		Error *struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Param   json.RawMessage `json:"param"` // a string or null
			Code    json.RawMessage `json:"code"`  // a string or null
		} `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && env.Error != nil {
		e.Message = env.Error.Message
		e.Type = env.Error.Type
		var code, param string
		if json.Unmarshal(env.Error.Code, &code) == nil {
			e.Code = code
		}
		if json.Unmarshal(env.Error.Param, &param) == nil {
			e.Param = truncate(c.redact(param), 200)
		}
	} else {
		e.Message = strings.TrimSpace(string(body))
	}
	e.Message = truncate(c.redact(e.Message), maxMessageBytes)
	e.Type = truncate(c.redact(e.Type), 100)
	e.Code = truncate(c.redact(e.Code), 100)
	return e
}

// retryAfter reads the wait a server asked for: retry-after-ms (sent by
// OpenAI), else Retry-After in seconds, which may be fractional ("1.5") as
// OpenAI's SDKs read it, or as an HTTP date (RFC 9110 10.2.3).
func (c *Client) retryAfter(h http.Header) time.Duration {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 && f < float64(time.Hour/time.Millisecond) {
			return time.Duration(f * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f > 0 && f < time.Hour.Seconds() {
			return time.Duration(f * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(c.now()); d > 0 {
			return d
		}
	}
	return 0
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
