package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/checkrun"
	"github.com/gradegate/gradegate/gate/checkrun/action"
	"github.com/gradegate/gradegate/gate/checkrun/checkruntest"
)

// starterSuite writes the starter suite into a temporary folder and returns
// its manifest; edit changes the manifest's text (its digest is not pinned).
func starterSuite(t *testing.T, edit func(string) string) string {
	t.Helper()
	files, err := starterContents()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, b := range files {
		if name == "gradegate.yaml" && edit != nil {
			b = []byte(edit(string(b)))
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "gradegate.yaml")
}

// With comment: true the pull request gets one comment with the summary and
// a link to the check run; the next push edits it rather than adding one.
func TestActionStickyComment(t *testing.T) {
	api := checkruntest.New(t)
	manifest := starterSuite(t, nil)
	var ids []int64
	// newActionEnv moves to the repository root; both pushes share its setup.
	e := newActionEnv(t, api, map[string]string{"MANIFEST": manifest, "GITHUB-TOKEN": testToken, "COMMENT": "true"})
	for push := range 2 {
		code, stdout, _ := e.run(t)
		if code != exitPass {
			t.Fatalf("push %d: exit %d, want %d", push+1, code, exitPass)
		}
		cs := api.Comments()
		if len(cs) != 1 {
			t.Fatalf("push %d: %d comments, want 1", push+1, len(cs))
		}
		c := cs[0]
		ids = append(ids, c.ID)
		if c.Number != 17 || c.Edits != push ||
			!strings.HasPrefix(c.Body, checkrun.CommentMarker("gradegate / starter")+"\n") ||
			!strings.Contains(c.Body, "PASS") || !strings.Contains(c.Body, "capitals") ||
			!strings.Contains(c.Body, "[Check run]("+checkruntest.HTMLURLOf(checkruntest.RunID+int64(push))+")") {
			t.Errorf("push %d: comment on #%d edited %d times:\n%s", push+1, c.Number, c.Edits, c.Body)
		}
		if !strings.Contains(stdout, "pull request comment "+checkruntest.CommentURL(c.ID)) {
			t.Errorf("push %d: the log does not name the comment", push+1)
		}
	}
	if ids[0] != ids[1] {
		t.Errorf("the second push posted comment %d, want the first one (%d) edited", ids[1], ids[0])
	}
}

// A token that may not comment is said once, as a warning: a pass stays 0
// and a hold stays 1.
func TestActionCommentWithoutPermission(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(string) string
		want int
	}{
		{"pass", nil, exitPass},
		{"hold", func(m string) string { return strings.Replace(m, "min_pass_rate: 0.75", "min_pass_rate: 0.9", 1) }, exitHold},
	} {
		t.Run(tt.name, func(t *testing.T) {
			api := checkruntest.New(t)
			api.DenyComments()
			e := newActionEnv(t, api, map[string]string{"MANIFEST": starterSuite(t, tt.edit), "GITHUB-TOKEN": testToken, "COMMENT": "true"})
			code, stdout, _ := e.run(t)
			if code != tt.want {
				t.Fatalf("exit %d, want %d", code, tt.want)
			}
			if n := strings.Count(stdout, "may not write pull request comments"); n != 1 {
				t.Errorf("said %d times that the token may not comment, want once", n)
			}
			if strings.Contains(stdout, "reporting failed") {
				t.Error("a token without pull-requests: write was reported as a failure")
			}
			if got := e.outputs(t)["verdict"]; got != action.VerdictOf(tt.want) {
				t.Errorf("output verdict %q", got)
			}
		})
	}
}

// Outside a pull request there is nothing to comment on, and that is no failure.
func TestActionCommentOnPush(t *testing.T) {
	api := checkruntest.New(t)
	e := newActionEnv(t, api, map[string]string{"MANIFEST": starterSuite(t, nil), "GITHUB-TOKEN": testToken, "COMMENT": "true"})
	e.vars["GITHUB_EVENT_NAME"] = "push"
	e.vars["GITHUB_EVENT_PATH"] = strings.Replace(e.vars["GITHUB_EVENT_PATH"], "pull_request.json", "push.json", 1)
	if code, _, _ := e.run(t); code != exitPass {
		t.Fatalf("exit %d, want %d", code, exitPass)
	}
	if cs := api.Comments(); len(cs) != 0 {
		t.Errorf("%d comments on a push", len(cs))
	}
}
