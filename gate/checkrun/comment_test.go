package checkrun_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/checkrun"
	"github.com/gradegate/gradegate/gate/checkrun/checkruntest"
)

const prNumber = 7

func newComment(t *testing.T, srv *checkruntest.Server, s *sleeps, name string) *checkrun.Comment {
	t.Helper()
	client, err := checkrun.NewClient(srv.Client(), srv.APIURL(), "ghs_secret")
	if err != nil {
		t.Fatal(err)
	}
	return checkrun.NewComment(client, "o", "r", prNumber, name, checkrun.WithRetry(5, s.sleep))
}

// The first post creates the comment; every later one edits it in place,
// found by its marker past the first page of comments, and a second check
// name keeps a comment of its own.
func TestCommentSticky(t *testing.T) {
	srv := checkruntest.New(t)
	var s sleeps
	// Other people's comments, one quoting the marker, fill the first page.
	srv.AddComment(prNumber, "looks good")
	srv.AddComment(prNumber, "> "+checkrun.CommentMarker("gradegate / order-summary")+"\nwhy does this hold?")
	srv.AddComment(prNumber+1, checkrun.CommentMarker("gradegate / order-summary")+"\nanother pull request")

	c := newComment(t, srv, &s, "gradegate / order-summary")
	if err := c.Post(context.Background(), "## ❌ HOLD\n", "https://github.example/o/r/runs/1"); err != nil {
		t.Fatal(err)
	}
	cs := srv.Comments()
	if len(cs) != 4 {
		t.Fatalf("after the first post %d comments, want 4 (one created)", len(cs))
	}
	ours := cs[3]
	if ours.Number != prNumber || !strings.HasPrefix(ours.Body, checkrun.CommentMarker("gradegate / order-summary")+"\n## ❌ HOLD\n") ||
		!strings.Contains(ours.Body, "[Check run](https://github.example/o/r/runs/1)") {
		t.Errorf("created comment on #%d:\n%s", ours.Number, ours.Body)
	}
	if c.URL() != checkruntest.CommentURL(ours.ID) {
		t.Errorf("URL = %q, want %q", c.URL(), checkruntest.CommentURL(ours.ID))
	}

	// The next push: a new Comment (a new process) edits the same comment.
	c2 := newComment(t, srv, &s, "gradegate / order-summary")
	if err := c2.Post(context.Background(), "## ✅ PASS\n", "https://github.example/o/r/runs/2"); err != nil {
		t.Fatal(err)
	}
	cs = srv.Comments()
	if len(cs) != 4 || cs[3].Edits != 1 || !strings.Contains(cs[3].Body, "PASS") || strings.Contains(cs[3].Body, "HOLD") ||
		!strings.Contains(cs[3].Body, "runs/2") {
		t.Fatalf("after the second post: %d comments, ours edited %d times:\n%s", len(cs), cs[3].Edits, cs[3].Body)
	}
	for _, other := range cs[:3] {
		if other.Edits != 0 {
			t.Errorf("comment %d of someone else was edited: %s", other.ID, other.Body)
		}
	}

	// Another manifest on the same pull request gets its own comment.
	c3 := newComment(t, srv, &s, "gradegate / billing")
	if err := c3.Post(context.Background(), "## ✅ PASS\n", ""); err != nil {
		t.Fatal(err)
	}
	if cs = srv.Comments(); len(cs) != 5 || strings.Contains(cs[4].Body, "[Check run]") {
		t.Errorf("second manifest: %d comments, want 5; newest:\n%s", len(cs), cs[len(cs)-1].Body)
	}
}

// A comment someone else starts with the marker is not taken for the
// sticky one: the verdict is never written into a comment its author can
// edit back. A personal token's own earlier comment, by a person, is.
func TestCommentNotSomeoneElses(t *testing.T) {
	const name = "gradegate / order-summary"
	srv := checkruntest.New(t)
	var s sleeps
	forged := srv.AddUserComment(prNumber, checkrun.CommentMarker(name)+"\n## ✅ PASS\n", "mallory")
	if err := newComment(t, srv, &s, name).Post(context.Background(), "## ❌ HOLD\n", ""); err != nil {
		t.Fatal(err)
	}
	cs := srv.Comments()
	if len(cs) != 2 || cs[0].ID != forged || cs[0].Edits != 0 || !strings.Contains(cs[1].Body, "HOLD") || cs[1].Login != checkruntest.TokenLogin {
		t.Fatalf("comments %+v, want mallory's untouched and one of the token's own", cs)
	}

	// A personal token: its user's comment is its own.
	srv = checkruntest.New(t)
	srv.TokenUser("ci-user")
	srv.AddUserComment(prNumber, checkrun.CommentMarker(name)+"\n## ✅ PASS\n", "mallory")
	own := srv.AddUserComment(prNumber, checkrun.CommentMarker(name)+"\n## ✅ PASS\n", "ci-user")
	if err := newComment(t, srv, &s, name).Post(context.Background(), "## ❌ HOLD\n", ""); err != nil {
		t.Fatal(err)
	}
	cs = srv.Comments()
	if len(cs) != 2 || cs[0].Edits != 0 || cs[1].ID != own || cs[1].Edits != 1 || !strings.Contains(cs[1].Body, "HOLD") {
		t.Fatalf("comments %+v, want ci-user's edited and mallory's untouched", cs)
	}
}

// A token without pull-requests: write gets ErrNoCommentPermission at once,
// not retries.
func TestCommentNoPermission(t *testing.T) {
	srv := checkruntest.New(t)
	srv.DenyComments()
	var s sleeps
	err := newComment(t, srv, &s, "gradegate / x").Post(context.Background(), "md", "")
	if !errors.Is(err, checkrun.ErrNoCommentPermission) || errors.Is(err, checkrun.ErrNoPermission) {
		t.Fatalf("Post = %v; want ErrNoCommentPermission", err)
	}
	if len(srv.Requests()) != 1 || len(s) != 0 {
		t.Errorf("%d requests, %d waits; want 1 request and no retry", len(srv.Requests()), len(s))
	}
}

// A 5xx is retried like a check run request, and a create GitHub failed
// after writing is found and edited, never posted twice.
func TestCommentRetries(t *testing.T) {
	srv := checkruntest.New(t)
	var s sleeps
	srv.Queue(
		checkruntest.Reply{For: http.MethodGet, Status: http.StatusBadGateway, Body: `{"message":"Bad Gateway"}`},
		checkruntest.Reply{For: http.MethodPost, Status: http.StatusInternalServerError, Body: `{"message":"Server Error"}`, Applied: true},
	)
	c := newComment(t, srv, &s, "gradegate / x")
	if err := c.Post(context.Background(), "md", ""); err != nil {
		t.Fatal(err)
	}
	cs := srv.Comments()
	if len(cs) != 1 || cs[0].Edits != 1 {
		t.Fatalf("%d comments (want 1), edited %d times (want 1)", len(cs), cs[0].Edits)
	}
	if len(s) != 2 {
		t.Errorf("waited %d times, want 2 (one per failed request)", len(s))
	}
	var methods []string
	for _, r := range srv.Requests() {
		methods = append(methods, r.Method)
	}
	if got := strings.Join(methods, " "); got != "GET GET POST GET PATCH" {
		t.Errorf("requests %s; want GET GET POST GET PATCH", got)
	}
}

func TestCommentMarkerStaysHidden(t *testing.T) {
	m := checkrun.CommentMarker("x --> <b>y</b>\nz")
	if !strings.HasPrefix(m, "<!--") || !strings.HasSuffix(m, "-->") || strings.Count(m, "--") != 2 ||
		strings.Count(m, "<") != 1 || strings.Count(m, ">") != 1 || strings.Contains(m, "\n") {
		t.Errorf("CommentMarker = %q; the comment must end only at its end", m)
	}
}

func TestPullRequestNumber(t *testing.T) {
	tests := []struct {
		payload string
		want    int
		err     bool
	}{
		{`{"pull_request": {"number": 12, "head": {"sha": "abc"}}}`, 12, false},
		{`{"after": "abc"}`, 0, false},
		{``, 0, false},
		{`{`, 0, true},
	}
	for _, tt := range tests {
		got, err := checkrun.PullRequestNumber([]byte(tt.payload))
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("PullRequestNumber(%s) = %d, %v; want %d, error %v", tt.payload, got, err, tt.want, tt.err)
		}
	}
}

// A report longer than a comment may be is cut with a note, and keeps the
// marker and the link.
func TestCommentCut(t *testing.T) {
	srv := checkruntest.New(t)
	var s sleeps
	if err := newComment(t, srv, &s, "gradegate / x").Post(context.Background(), strings.Repeat("é", 40000), "https://github.example/run"); err != nil {
		t.Fatal(err)
	}
	body := srv.Comments()[0].Body
	if len(body) > 65536 || !strings.Contains(body, "**Cut**") || !strings.HasSuffix(body, "[Check run](https://github.example/run)\n") {
		t.Errorf("body of %d bytes ends %q", len(body), body[max(len(body)-200, 0):])
	}
}
