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
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
)

// Prefix is the path the fake API is served under.
const Prefix = "/api/v3/"

// RunID is the id of the first check run the fake creates; later ones count
// up from it.
const RunID = 4242

// Request is one request the fake received.
type Request struct {
	Method string
	Path   string // without Prefix, e.g. repos/o/r/check-runs/4242
	Auth   string // the Authorization header
	// Body is the decoded JSON body. Create and update requests share these
	// fields; HeadSHA is empty on updates.
	Body github.CreateCheckRunOptions
	// Comment is the body of a pull request comment create or edit.
	Comment string
	// Status is what the fake answered.
	Status int
}

// CommentID is the id of the first pull request comment the fake holds;
// later ones count up from it.
const CommentID = 9000

// Comment is a pull request comment as the fake holds it.
type Comment struct {
	ID     int64
	Number int // the pull request
	Body   string
	Edits  int // how many times it was edited
	// Login and Type are its author's, "github-actions[bot]" and "Bot"
	// for one the token wrote (or AddComment's earlier run).
	Login, Type string
}

// TokenLogin and TokenType are who a comment the token writes is by: the
// Actions token writes as this bot.
const (
	TokenLogin = "github-actions[bot]"
	TokenType  = "Bot"
)

// commentsPerPage is the fake's page size for comments unless per_page
// asks for fewer, small so that tests page without many comments.
const commentsPerPage = 2

// Reply is a canned answer for one request.
type Reply struct {
	Status int
	Header map[string]string
	Body   string
	// Delay holds the answer back, to make the client time out.
	Delay time.Duration
	// For is the method of the request the reply answers; empty means the
	// next create or update (POST or PATCH). A reply for GET answers a list.
	For string
	// Applied makes the request take effect (the check run is created or
	// updated) although the answer is this reply, as when GitHub fails
	// after writing.
	Applied bool
}

// Run is a check run as the fake holds it.
type Run struct {
	ID         int64
	Name       string
	HeadSHA    string
	ExternalID string
	Status     string
	Conclusion string
}

// Server is the fake API. Replies queued with Queue answer the next requests
// they are for (see Reply.For) in order; without one, creates and updates
// succeed and a list answers from the runs created so far.
type Server struct {
	srv *httptest.Server
	t   testing.TB

	mu       sync.Mutex
	requests []Request
	queue    []Reply
	deny     bool
	runs     []Run

	denyComments bool
	comments     []Comment
	// user is the login GET /user answers, as for a personal token; ""
	// answers 403, as for the Actions token.
	user string
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

// DenyComments makes every pull request comment request fail with 403, as
// for a token without `pull-requests: write`; check runs still work.
func (s *Server) DenyComments() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.denyComments = true
}

// AddComment puts a comment on pull request number, as someone else (or an
// earlier run) wrote it, and returns its id.
func (s *Server) AddComment(number int, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addComment(number, body)
}

// AddUserComment puts a comment by a user, login, on pull request number
// and returns its id.
func (s *Server) AddUserComment(number int, body, login string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.addComment(number, body)
	s.comments[len(s.comments)-1].Login, s.comments[len(s.comments)-1].Type = login, "User"
	return id
}

// TokenUser makes the token a personal one of user login: GET /user
// answers it, and the comments the token writes are by it.
func (s *Server) TokenUser(login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.user = login
}

func (s *Server) addComment(number int, body string) int64 {
	id := CommentID + int64(len(s.comments))
	login, typ := TokenLogin, TokenType
	if s.user != "" {
		login, typ = s.user, "User"
	}
	s.comments = append(s.comments, Comment{ID: id, Number: number, Body: body, Login: login, Type: typ})
	return id
}

// Comments returns the pull request comments, oldest first.
func (s *Server) Comments() []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Comment(nil), s.comments...)
}

// CommentURL is the web address the fake gives a comment.
func CommentURL(id int64) string {
	return fmt.Sprintf("https://github.example/o/r/pull/1#issuecomment-%d", id)
}

// Requests returns every request received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Runs returns the check runs created so far, in order.
func (s *Server) Runs() []Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Run(nil), s.runs...)
}

// HTMLURL is the web address the fake gives its first check run.
func (s *Server) HTMLURL() string { return htmlURL(RunID) }

// HTMLURLOf is the web address the fake gives the check run with id.
func HTMLURLOf(id int64) string { return htmlURL(id) }

func htmlURL(id int64) string { return fmt.Sprintf("https://github.example/o/r/runs/%d", id) }

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		s.t.Errorf("reading request body: %v", err)
	}
	req := Request{Method: r.Method, Path: strings.TrimPrefix(r.URL.Path, Prefix), Auth: r.Header.Get("Authorization")}
	isComment := strings.Contains(req.Path, "/issues/")
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &req.Body); err != nil {
			s.t.Errorf("%s %s: body is not JSON: %v", r.Method, r.URL.Path, err)
		}
		if isComment {
			var c struct {
				Body string `json:"body"`
			}
			json.Unmarshal(raw, &c)
			req.Comment = c.Body
		}
	}

	s.mu.Lock()
	var reply *Reply
	switch {
	case s.denyComments && isComment:
		reply = &Reply{Status: http.StatusForbidden, Body: `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/issues/comments#create-an-issue-comment","status":"403"}`}
	case s.deny:
		reply = &Reply{Status: http.StatusForbidden, Body: `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/checks/runs#create-a-check-run","status":"403"}`}
	case len(s.queue) > 0 && (s.queue[0].For == r.Method || s.queue[0].For == "" && r.Method != http.MethodGet):
		reply = &s.queue[0]
		s.queue = s.queue[1:]
	}
	s.mu.Unlock()

	status := http.StatusOK
	if reply != nil && reply.Applied {
		s.serve(httptest.NewRecorder(), req, r.URL.Query())
	}
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
		status = s.serve(w, req, r.URL.Query())
	}
	req.Status = status
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
}

// serve answers a request the way GitHub does when all goes well.
func (s *Server) serve(w http.ResponseWriter, req Request, query url.Values) int {
	parts := strings.Split(req.Path, "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	var status int
	var run *Run
	switch {
	case req.Method == http.MethodPost && len(parts) == 4 && parts[0] == "repos" && parts[3] == "check-runs":
		status = http.StatusCreated
		s.runs = append(s.runs, Run{
			ID:         RunID + int64(len(s.runs)),
			Name:       req.Body.Name,
			HeadSHA:    req.Body.HeadSHA,
			ExternalID: req.Body.GetExternalID(),
			Status:     req.Body.GetStatus(),
		})
		run = &s.runs[len(s.runs)-1]
	case req.Method == http.MethodPatch && len(parts) == 5 && parts[0] == "repos" && parts[3] == "check-runs":
		id, _ := strconv.ParseInt(parts[4], 10, 64)
		for i := range s.runs {
			if s.runs[i].ID == id {
				run = &s.runs[i]
			}
		}
		if run == nil {
			break
		}
		status = http.StatusOK
		if st := req.Body.GetStatus(); st != "" {
			run.Status = st
		}
		if c := req.Body.GetConclusion(); c != "" {
			run.Conclusion = c
		}
	case req.Method == http.MethodGet && len(parts) == 6 && parts[0] == "repos" && parts[3] == "commits" && parts[5] == "check-runs":
		return s.list(w, parts[4], query)
	case req.Method == http.MethodGet && len(parts) == 1 && parts[0] == "user":
		if s.user == "" {
			return writeJSON(w, http.StatusForbidden, map[string]any{"message": "Resource not accessible by integration", "status": "403"})
		}
		return writeJSON(w, http.StatusOK, map[string]any{"login": s.user, "type": "User"})
	case len(parts) == 6 && parts[0] == "repos" && parts[3] == "issues" && parts[5] == "comments":
		n, err := strconv.Atoi(parts[4])
		switch {
		case err != nil:
		case req.Method == http.MethodGet:
			return s.listComments(w, n, query)
		case req.Method == http.MethodPost:
			s.addComment(n, req.Comment)
			return writeJSON(w, http.StatusCreated, apiComment(s.comments[len(s.comments)-1]))
		}
	case req.Method == http.MethodPatch && len(parts) == 6 && parts[0] == "repos" && parts[3] == "issues" && parts[4] == "comments":
		id, _ := strconv.ParseInt(parts[5], 10, 64)
		for i := range s.comments {
			if s.comments[i].ID == id {
				s.comments[i].Body = req.Comment
				s.comments[i].Edits++
				return writeJSON(w, http.StatusOK, apiComment(s.comments[i]))
			}
		}
	}
	if run == nil {
		s.t.Errorf("unexpected request %s %s", req.Method, req.Path)
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
		return http.StatusNotFound
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(apiRun(*run))
	return status
}

// list answers GET repos/{o}/{r}/commits/{ref}/check-runs with the runs on
// ref, filtered by check_name and status as GitHub does.
func (s *Server) list(w http.ResponseWriter, ref string, query url.Values) int {
	runs := []map[string]any{}
	for _, run := range s.runs {
		if run.HeadSHA != ref ||
			query.Has("check_name") && run.Name != query.Get("check_name") ||
			query.Has("status") && run.Status != query.Get("status") {
			continue
		}
		runs = append(runs, apiRun(run))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	json.NewEncoder(w).Encode(map[string]any{"total_count": len(runs), "check_runs": runs})
	return http.StatusOK
}

func apiRun(r Run) map[string]any {
	return map[string]any{
		"id":          r.ID,
		"name":        r.Name,
		"head_sha":    r.HeadSHA,
		"external_id": r.ExternalID,
		"html_url":    htmlURL(r.ID),
		"status":      r.Status,
	}
}

// listComments answers GET repos/{o}/{r}/issues/{n}/comments a page at a
// time, oldest first, with a Link header to the next page as GitHub sends.
func (s *Server) listComments(w http.ResponseWriter, number int, query url.Values) int {
	var all []map[string]any
	for _, c := range s.comments {
		if c.Number == number {
			all = append(all, apiComment(c))
		}
	}
	per := commentsPerPage
	if n, err := strconv.Atoi(query.Get("per_page")); err == nil && n > 0 && n < per {
		per = n
	}
	page := 1
	if n, err := strconv.Atoi(query.Get("page")); err == nil && n > 0 {
		page = n
	}
	from := min((page-1)*per, len(all))
	to := min(from+per, len(all))
	if to < len(all) {
		next := url.Values{"page": {strconv.Itoa(page + 1)}, "per_page": {strconv.Itoa(per)}}
		w.Header().Set("Link", fmt.Sprintf(`<%s%srepos/o/r/issues/%d/comments?%s>; rel="next"`, s.srv.URL, Prefix, number, next.Encode()))
	}
	out := all[from:to]
	if out == nil {
		out = []map[string]any{}
	}
	return writeJSON(w, http.StatusOK, out)
}

func writeJSON(w http.ResponseWriter, status int, v any) int {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
	return status
}

func apiComment(c Comment) map[string]any {
	return map[string]any{
		"id":       c.ID,
		"body":     c.Body,
		"html_url": CommentURL(c.ID),
		"user":     map[string]any{"login": c.Login, "type": c.Type},
	}
}
