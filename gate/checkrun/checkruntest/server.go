// Package checkruntest is a fake of GitHub's Checks API for tests. Like
// go-github's own test harness it serves the API under a path prefix
// (/api/v3/, as GitHub Enterprise Server does), so a client that builds
// absolute URLs instead of resolving them against its base URL fails.
package checkruntest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
)

// Prefix is the path the fake API is served under.
const Prefix = "/api/v3/"

// RunID is the id of every check run the fake creates.
const RunID = 4242

// Request is one request the fake received.
type Request struct {
	Method string
	Path   string // without Prefix, e.g. repos/o/r/check-runs/4242
	Auth   string // the Authorization header
	// Body is the decoded JSON body. Create and update requests share these
	// fields; HeadSHA is empty on updates.
	Body github.CreateCheckRunOptions
	// Status is what the fake answered.
	Status int
}

// Reply is a canned answer for one request.
type Reply struct {
	Status int
	Header map[string]string
	Body   string
	// Delay holds the answer back, to make the client time out.
	Delay time.Duration
}

// Server is the fake API. Replies queued with Queue answer the next requests
// in order; after them every create and update succeeds.
type Server struct {
	srv *httptest.Server
	t   testing.TB

	mu       sync.Mutex
	requests []Request
	queue    []Reply
	deny     bool
}

// New starts a fake closed when the test ends.
func New(t testing.TB) *Server {
	s := &Server{t: t}
	mux := http.NewServeMux()
	mux.HandleFunc(Prefix, s.handle)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request outside the API prefix %s: %s %s", Prefix, r.Method, r.URL.Path)
		http.Error(w, "outside the API prefix", http.StatusBadRequest)
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// APIURL is what GITHUB_API_URL would hold (no trailing slash, as on a runner).
func (s *Server) APIURL() string { return s.srv.URL + strings.TrimSuffix(Prefix, "/") }

// Client is an HTTP client for the fake.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Queue makes the next requests get these replies, in order.
func (s *Server) Queue(r ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, r...)
}

// Deny makes every request fail as it does for a read-only token: 403
// "Resource not accessible by integration".
func (s *Server) Deny() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deny = true
}

// Requests returns every request received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// HTMLURL is the web address the fake gives its check run.
func (s *Server) HTMLURL() string {
	return fmt.Sprintf("https://github.example/o/r/runs/%d", RunID)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		s.t.Errorf("reading request body: %v", err)
	}
	req := Request{Method: r.Method, Path: strings.TrimPrefix(r.URL.Path, Prefix), Auth: r.Header.Get("Authorization")}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &req.Body); err != nil {
			s.t.Errorf("%s %s: body is not JSON: %v", r.Method, r.URL.Path, err)
		}
	}

	s.mu.Lock()
	var reply *Reply
	switch {
	case s.deny:
		reply = &Reply{Status: http.StatusForbidden, Body: `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/checks/runs#create-a-check-run","status":"403"}`}
	case len(s.queue) > 0:
		reply = &s.queue[0]
		s.queue = s.queue[1:]
	}
	s.mu.Unlock()

	status := http.StatusOK
	if reply != nil {
		if reply.Delay > 0 {
			select {
			case <-time.After(reply.Delay):
			case <-r.Context().Done():
			}
		}
		status = reply.Status
		for k, v := range reply.Header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, reply.Body)
	} else {
		status = s.serve(w, req)
	}
	req.Status = status
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
}

// serve answers a request the way GitHub does when all goes well.
func (s *Server) serve(w http.ResponseWriter, req Request) int {
	parts := strings.Split(req.Path, "/")
	var status int
	switch {
	case req.Method == http.MethodPost && len(parts) == 4 && parts[0] == "repos" && parts[3] == "check-runs":
		status = http.StatusCreated
	case req.Method == http.MethodPatch && len(parts) == 5 && parts[0] == "repos" && parts[3] == "check-runs" && parts[4] == strconv.Itoa(RunID):
		status = http.StatusOK
	default:
		s.t.Errorf("unexpected request %s %s", req.Method, req.Path)
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
		return http.StatusNotFound
	}
	run := map[string]any{
		"id":       RunID,
		"name":     req.Body.Name,
		"html_url": s.HTMLURL(),
		"status":   req.Body.GetStatus(),
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(run)
	return status
}
