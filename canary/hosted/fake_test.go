package hosted

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// prefix is where the fake API is mounted, so that a client that drops the
// base URL's path (an absolute-URL bug) gets 404s instead of passing.
const prefix = "/prefix"

const testKey = "sk-gradegate-test-7f3a9c1e5b2d4a60"

// reply is one scripted HTTP response.
type reply struct {
	status int
	header map[string]string
	body   string
	// hangup closes the connection without a response (a network error).
	hangup bool
}

// recorded is one request the fake received.
type recorded struct {
	Path          string
	Authorization string
	ContentType   string
	Body          []byte
}

// wireRequest is a request body as the fake decodes it.
type wireRequest struct {
	Grader struct {
		Type     *string `json:"type"`
		Name     *string `json:"name"`
		Source   *string `json:"source"`
		ImageTag *string `json:"image_tag"`
	} `json:"grader"`
	ModelSample *string         `json:"model_sample"`
	Item        json.RawMessage `json:"item"`
}

// fakeAPI serves graders/validate and graders/run under prefix. Replies are
// consumed in order; the last one repeats. Run replies are chosen by the
// request's model_sample, so one fake serves many canaries.
type fakeAPI struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	validate []reply
	run      map[string][]reply // model_sample -> replies
	requests []recorded
}

func newFake(t *testing.T) *fakeAPI {
	t.Helper()
	f := &fakeAPI{t: t, validate: []reply{{status: 200, body: `{"grader": {"type": "python"}}`}}, run: map[string][]reply{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+prefix+"/v1/fine_tuning/alpha/graders/validate", f.serve)
	mux.HandleFunc("POST "+prefix+"/v1/fine_tuning/alpha/graders/run", f.serve)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request to unexpected path %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// baseURL is what a user would pass as --hosted-url.
func (f *fakeAPI) baseURL() string { return f.srv.URL + prefix }

func (f *fakeAPI) onRun(modelSample string, rs ...reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.run[modelSample] = rs
}

func (f *fakeAPI) onValidate(rs ...reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.validate = rs
}

func (f *fakeAPI) recorded() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.requests...)
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		f.t.Errorf("reading request body: %v", err)
	}
	f.mu.Lock()
	f.requests = append(f.requests, recorded{
		Path:          r.URL.Path,
		Authorization: r.Header.Get("Authorization"),
		ContentType:   r.Header.Get("Content-Type"),
		Body:          body,
	})
	var rp reply
	if strings.HasSuffix(r.URL.Path, "/validate") {
		rp, f.validate = next(f.validate)
	} else {
		var req wireRequest
		if err := json.Unmarshal(body, &req); err != nil || req.ModelSample == nil {
			f.mu.Unlock()
			f.t.Errorf("run request without model_sample: %s", body)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		rs, ok := f.run[*req.ModelSample]
		if !ok {
			f.mu.Unlock()
			f.t.Errorf("no scripted run reply for model_sample %q", *req.ModelSample)
			http.Error(w, "unscripted", http.StatusTeapot)
			return
		}
		rp, f.run[*req.ModelSample] = next(rs)
	}
	f.mu.Unlock()

	if rp.hangup {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			f.t.Errorf("hijack: %v", err)
			return
		}
		conn.Close()
		return
	}
	for k, v := range rp.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rp.status)
	io.WriteString(w, rp.body)
}

func next(rs []reply) (reply, []reply) {
	if len(rs) == 0 {
		return reply{status: 500, body: `{"error": {"message": "fake: no reply scripted"}}`}, rs
	}
	if len(rs) == 1 {
		return rs[0], rs
	}
	return rs[0], rs[1:]
}

// errorsJSON is metadata.errors with every documented flag false, then the
// given overrides.
func errorsJSON(overrides map[string]any) string {
	m := map[string]any{
		"formula_parse_error":                 false,
		"invalid_variable_error":              false,
		"model_grader_parse_error":            false,
		"model_grader_refusal_error":          false,
		"model_grader_server_error":           false,
		"model_grader_server_error_details":   nil,
		"other_error":                         false,
		"python_grader_runtime_error":         false,
		"python_grader_runtime_error_details": nil,
		"python_grader_server_error":          false,
		"python_grader_server_error_type":     nil,
		"sample_parse_error":                  false,
		"truncated_observation_error":         false,
		"unresponsive_reward_error":           false,
	}
	for k, v := range overrides {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// runBody is a full graders/run response in the documented shape.
func runBody(reward float64, errs map[string]any) string {
	return fmt.Sprintf(`{
  "reward": %v,
  "metadata": {
    "name": "order_summary_contract_v1",
    "type": "python",
    "errors": %s,
    "execution_time": 0.42,
    "scores": {},
    "token_usage": null,
    "sampled_model_name": null
  },
  "sub_rewards": {},
  "model_grader_token_usage_per_model": {}
}`, reward, errorsJSON(errs))
}

func ok(reward float64) reply { return reply{status: 200, body: runBody(reward, nil)} }

func raised(details string) reply {
	return reply{status: 200, body: runBody(0, map[string]any{
		"python_grader_runtime_error":         true,
		"python_grader_runtime_error_details": details,
	})}
}

func apiErr(status int, msg string) reply {
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "server_error"
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}})
	return reply{status: status, body: string(b), header: map[string]string{"x-request-id": "req_fake"}}
}

// apiErrParam is apiErr with error.param set, as OpenAI names the
// offending request field.
func apiErrParam(status int, msg, param string) reply {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": param, "code": nil}})
	return reply{status: status, body: string(b), header: map[string]string{"x-request-id": "req_fake"}}
}

// withHeader returns r with one more response header.
func withHeader(r reply, k, v string) reply {
	h := map[string]string{k: v}
	for hk, hv := range r.header {
		h[hk] = hv
	}
	r.header = h
	return r
}

// sleeps records the waits a client asked for, without waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// testPolicy retries quickly and predictably.
func testPolicy() RetryPolicy {
	return RetryPolicy{MaxAttempts: 3, BaseDelay: time.Second, MaxDelay: 10 * time.Second, MaxElapsed: 120 * time.Second, AttemptTimeout: 10 * time.Second}
}

func newTestClient(f *fakeAPI, s *sleeps, opts ...Option) *Client {
	return NewClient(f.baseURL(), testKey, append([]Option{WithRetryPolicy(testPolicy()), WithSleep(s.sleep), WithHTTPClient(f.srv.Client())}, opts...)...)
}
