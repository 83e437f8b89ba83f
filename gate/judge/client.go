package judge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultBaseURL is OpenAI's API; OPENAI_BASE_URL names another
// (an OpenAI-compatible server or a proxy).
const DefaultBaseURL = "https://api.openai.com/v1"

// Retry rules of OpenAI's own SDKs (openai-python _base_client.py): two
// retries, a delay of 0.5 s doubling up to 8 s, cut by up to a quarter at
// random; a server's retry-after-ms or retry-after of at most 60 s is
// honoured instead.
const (
	DefaultMaxRetries = 2
	initialRetryDelay = 500 * time.Millisecond
	maxRetryDelay     = 8 * time.Second
	maxRetryAfter     = 60 * time.Second
)

// maxBodyBytes bounds a response body read from the API, and a cache file.
const maxBodyBytes = 4 << 20

// maxErrorShown bounds the part of an error body quoted in a message.
const maxErrorShown = 300

// client asks the API. It never puts the key in an error.
type client struct {
	baseURL    string
	key        string
	http       *http.Client
	timeout    time.Duration // per attempt
	maxRetries int
	sleep      func(ctx context.Context, d time.Duration) error
	random     func() float64
}

// APIError is a request the API refused or could not answer, after the
// retries it allows.
type APIError struct {
	Status int // 0 when no response came (connection, timeout)
	Msg    string
}

func (e *APIError) Error() string {
	if e.Status == 0 {
		return e.Msg
	}
	return fmt.Sprintf("HTTP %d: %s", e.Status, e.Msg)
}

// answer is one successful call.
type answer struct {
	body    []byte
	retries int
}

// do sends one request, retrying as OpenAI's SDK does: connection errors
// and timeouts, 408, 409, 429 and 5xx, unless the server says
// x-should-retry: false (and any status when it says true).
func (c *client) do(ctx context.Context, r request) (answer, error) {
	for attempt := 0; ; attempt++ {
		body, status, header, err := c.once(ctx, r)
		if err == nil && status >= 200 && status < 300 {
			return answer{body: body, retries: attempt}, nil
		}
		if ctx.Err() != nil {
			return answer{}, ctx.Err()
		}
		var apiErr *APIError
		retry := false
		if err != nil {
			apiErr = &APIError{Msg: c.redact(err.Error())}
			retry = true
		} else {
			apiErr = &APIError{Status: status, Msg: c.redact(errorText(body))}
			retry = shouldRetry(status, header)
		}
		if !retry || attempt >= c.maxRetries {
			if attempt > 0 {
				apiErr.Msg += fmt.Sprintf(" (after %d retries)", attempt)
			}
			return answer{}, apiErr
		}
		if err := c.sleep(ctx, c.retryDelay(attempt, header)); err != nil {
			return answer{}, err
		}
	}
}

// once is one attempt.
func (c *client) once(ctx context.Context, r request) ([]byte, int, http.Header, error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.baseURL+r.path, bytes.NewReader(r.body))
	if err != nil {
		return nil, 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes+1))
	if err != nil {
		return nil, 0, nil, fmt.Errorf("reading the response: %w", err)
	}
	if len(body) > maxBodyBytes {
		return nil, 0, nil, fmt.Errorf("the response is over %d bytes", maxBodyBytes)
	}
	return body, resp.StatusCode, resp.Header, nil
}

// shouldRetry is the SDK's rule for a response that is not a success.
func shouldRetry(status int, h http.Header) bool {
	switch h.Get("x-should-retry") {
	case "true":
		return true
	case "false":
		return false
	}
	return status == http.StatusRequestTimeout || status == http.StatusConflict ||
		status == http.StatusTooManyRequests || status >= 500
}

// retryDelay is how long to wait before retry number attempt+1.
func (c *client) retryDelay(attempt int, h http.Header) time.Duration {
	if d, ok := retryAfter(h, time.Now()); ok && d > 0 && d <= maxRetryAfter {
		return d
	}
	d := min(float64(initialRetryDelay)*math.Pow(2, float64(attempt)), float64(maxRetryDelay))
	return time.Duration(d * (1 - 0.25*c.random()))
}

// retryAfter reads retry-after-ms (milliseconds) or retry-after (seconds,
// or an HTTP date).
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if h == nil {
		return 0, false
	}
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && !math.IsNaN(ms) {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := h.Get("retry-after")
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && !math.IsNaN(s) {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return t.Sub(now), true
	}
	return 0, false
}

// ErrorText is the message of an API error body ({"error": {"message"}}),
// or the start of the body.
func errorText(body []byte) string {
	s := strings.TrimSpace(string(body))
	if i := strings.Index(s, `"message"`); i >= 0 {
		rest := s[i+len(`"message"`):]
		rest = strings.TrimLeft(rest, " :")
		if strings.HasPrefix(rest, `"`) {
			if j := strings.Index(rest[1:], `"`); j >= 0 {
				s = rest[1 : j+1]
			}
		}
	}
	if len(s) > maxErrorShown {
		s = s[:maxErrorShown] + "…"
	}
	if s == "" {
		s = "(empty body)"
	}
	return s
}

// redact removes the API key from text that came back from the network: an
// API that quotes the key it refused must not put it in gradegate's output.
func (c *client) redact(s string) string {
	return redactKey(s, c.key)
}

func redactKey(s, key string) string {
	if key == "" {
		return s
	}
	s = strings.ReplaceAll(s, key, "[redacted]")
	// OpenAI quotes a refused key as its first and last few characters
	// ("sk-abc***********wxyz"): cut any run of the key's tail as well.
	if len(key) >= 8 {
		s = strings.ReplaceAll(s, key[len(key)-4:], "[redacted]")
	}
	return s
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

var errNoKey = errors.New("no OPENAI_API_KEY")
