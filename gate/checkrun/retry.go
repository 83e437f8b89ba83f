package checkrun

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
)

// try runs one API call, retrying GitHub's transient failures with bounded
// backoff: 5xx answers, timeouts and broken connections, and rate limits that
// say when to come back. A create that may have taken effect is not simply
// sent again: see Check.create.
func (c *Check) try(ctx context.Context, what string, call func(ctx context.Context) error) error {
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, c.requestTimeout)
		err := call(actx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", what, ctx.Err())
		}
		if noPermission(err) {
			return fmt.Errorf("%s: %w: %w", what, ErrNoPermission, err)
		}
		wait, retry := retryWait(err, attempt)
		if !retry || attempt >= c.maxAttempts {
			if retry {
				return fmt.Errorf("%s: gave up after %d attempts: %w", what, attempt, err)
			}
			return fmt.Errorf("%s: %w", what, err)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return fmt.Errorf("%s: waiting to retry: %w", what, err)
		}
	}
}

// mayHaveApplied reports whether a failed request may still have taken
// effect on GitHub: a 5xx (GitHub can fail after writing) or no answer at all.
// A 4xx or a rate limit means the request was refused before it did anything.
func mayHaveApplied(err error) bool {
	var abuse *github.AbuseRateLimitError
	var rate *github.RateLimitError
	if errors.As(err, &abuse) || errors.As(err, &rate) {
		return false
	}
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode >= 500
	}
	return true
}

// noPermission reports a 403 that is not a rate limit: the token may not
// write checks ("Resource not accessible by integration" for a fork's pull
// request, or a workflow without `permissions: checks: write`).
func noPermission(err error) bool {
	var er *github.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil || er.Response.StatusCode != http.StatusForbidden {
		return false
	}
	return !secondaryLimit(er)
}

// retryWait says whether err is worth another attempt and how long to wait
// before attempt+1.
func retryWait(err error, attempt int) (time.Duration, bool) {
	backoff := min(defaultBackoff<<(attempt-1), maxBackoff)

	var abuse *github.AbuseRateLimitError
	if errors.As(err, &abuse) {
		// A secondary rate limit; go-github refuses further requests until
		// RetryAfter has passed, so we must wait at least that long.
		if abuse.RetryAfter != nil {
			return fitWait(*abuse.RetryAfter)
		}
		return secondaryRateLimitWait, true
	}
	var rate *github.RateLimitError
	if errors.As(err, &rate) {
		// The primary limit resets within the hour; wait only if it is soon.
		return fitWait(time.Until(rate.Rate.Reset.Time))
	}
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		switch code := er.Response.StatusCode; {
		case code >= 500:
			return backoff, true
		case secondaryLimit(er):
			if d, ok := retryAfter(er.Response); ok {
				return fitWait(d)
			}
			return secondaryRateLimitWait, true
		}
		return 0, false
	}
	// No HTTP answer at all: a timeout, a reset or refused connection.
	var ue *url.Error
	if errors.As(err, &ue) || errors.Is(err, context.DeadlineExceeded) {
		return backoff, true
	}
	return 0, false
}

// secondaryLimit recognises a secondary rate limit that go-github did not
// classify: a 429, or a 403 with Retry-After or saying so in its message.
func secondaryLimit(er *github.ErrorResponse) bool {
	code := er.Response.StatusCode
	if code == http.StatusTooManyRequests {
		return true
	}
	if code != http.StatusForbidden {
		return false
	}
	if _, ok := retryAfter(er.Response); ok {
		return true
	}
	msg := strings.ToLower(er.Message)
	return strings.Contains(msg, "secondary rate limit") || strings.Contains(msg, "abuse detection") ||
		er.Response.Header.Get("X-RateLimit-Remaining") == "0"
}

// retryAfter reads a Retry-After header in seconds.
func retryAfter(r *http.Response) (time.Duration, bool) {
	v := r.Header.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	s, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || s < 0 {
		return 0, false
	}
	return time.Duration(s) * time.Second, true
}

// fitWait retries after d unless d is longer than we are willing to wait.
func fitWait(d time.Duration) (time.Duration, bool) {
	if d > maxWait {
		return 0, false
	}
	return max(d, 0), true
}
