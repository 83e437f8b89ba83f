package checkrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-github/v62/github"
)

// ErrNoCommentPermission means the token may not write pull request
// comments: a pull request from a fork, or a workflow without
// `permissions: pull-requests: write`. GitHub answers 403. The caller should
// say so once; it is no verdict, and never turns a hold into a pass.
var ErrNoCommentPermission = errors.New("the token may not write pull request comments")

// maxCommentBytes is the largest comment body GitHub accepts (65536
// characters); counting bytes keeps under it whatever GitHub counts.
const maxCommentBytes = 65536

// Comment keeps one sticky comment on a pull request for one check name:
// the first post creates it, every later one (each push) edits it in place.
// The comment is found again by a hidden marker that starts its body and
// holds the check name, so two manifests gated on one pull request keep a
// comment each. Requests are retried as the check run's are (see WithRetry
// and WithRequestTimeout).
type Comment struct {
	check  *Check // the client, the repository and the retry settings
	number int
	marker string

	id      int64
	htmlURL string
	// self is the login of the token's user, once asked (selfKnown): ""
	// for the Actions token and an app's, which have no user.
	self      string
	selfKnown bool
}

// NewComment returns the sticky comment of checkName on pull request number
// of owner/repo. Of opts only the retry settings apply.
func NewComment(client *github.Client, owner, repo string, number int, checkName string, opts ...Option) *Comment {
	return &Comment{
		check:  New(client, owner, repo, "", checkName, opts...),
		number: number,
		marker: CommentMarker(checkName),
	}
}

// CommentMarker is the hidden first line of the sticky comment of checkName.
// Characters that would end the HTML comment early are replaced.
func CommentMarker(checkName string) string {
	safe := strings.NewReplacer("--", "- -", "<", "‹", ">", "›", "\n", " ", "\r", " ").Replace(checkName)
	return "<!-- gradegate sticky comment: " + safe + " -->"
}

// URL is the web address of the comment after Post, or "".
func (c *Comment) URL() string { return c.htmlURL }

// Post writes markdown, followed by a link to the check run when checkURL is
// set, as the sticky comment: it edits the comment carrying the marker, or
// creates one when there is none. An error wrapping ErrNoCommentPermission
// means the token may not comment.
func (c *Comment) Post(ctx context.Context, markdown, checkURL string) error {
	body := c.body(markdown, checkURL)
	if err := c.find(ctx); err != nil {
		return err
	}
	if c.id != 0 {
		return c.try(ctx, "update pull request comment", func(ctx context.Context) error {
			return c.edit(ctx, c.id, body)
		})
	}
	// A create GitHub failed after writing would leave a comment behind;
	// before sending it again, look for it and edit it instead.
	var ambiguous bool
	return c.try(ctx, "create pull request comment", func(ctx context.Context) error {
		if ambiguous {
			if err := c.list(ctx); err != nil {
				return err
			}
			if c.id != 0 {
				return c.edit(ctx, c.id, body)
			}
		}
		cm, _, err := c.check.client.Issues.CreateComment(ctx, c.check.owner, c.check.repo, c.number, &github.IssueComment{Body: github.String(body)})
		if err != nil {
			ambiguous = ambiguous || mayHaveApplied(err)
			return err
		}
		c.id, c.htmlURL = cm.GetID(), cm.GetHTMLURL()
		return nil
	})
}

// body is the comment's text: the marker, markdown cut to fit, the link.
func (c *Comment) body(markdown, checkURL string) string {
	link := ""
	if checkURL != "" {
		link = "\n\n[Check run](" + checkURL + ")\n"
	}
	room := maxCommentBytes - len(c.marker) - 1 - len(link)
	md := cut(markdown, room, "\n\n---\n**Cut**: this report is longer than a pull request comment may be; the check run and the workflow run's step summary have all of it.\n")
	return c.marker + "\n" + md + link
}

func (c *Comment) edit(ctx context.Context, id int64, body string) error {
	cm, _, err := c.check.client.Issues.EditComment(ctx, c.check.owner, c.check.repo, id, &github.IssueComment{Body: github.String(body)})
	if err != nil {
		return err
	}
	if u := cm.GetHTMLURL(); u != "" {
		c.htmlURL = u
	}
	return nil
}

// find looks for the comment carrying the marker, with retries.
func (c *Comment) find(ctx context.Context) error {
	return c.try(ctx, "list pull request comments", c.list)
}

// list pages through the pull request's comments, oldest first, and takes
// the first whose body starts with the marker (a reply quoting it does not).
func (c *Comment) list(ctx context.Context) error {
	c.id = 0
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		list, resp, err := c.check.client.Issues.ListComments(ctx, c.check.owner, c.check.repo, c.number, opts)
		if err != nil {
			return err
		}
		for _, cm := range list {
			if strings.HasPrefix(cm.GetBody(), c.marker) && c.ours(ctx, cm) {
				c.id, c.htmlURL = cm.GetID(), cm.GetHTMLURL()
				return nil
			}
		}
		if resp == nil || resp.NextPage == 0 {
			return nil
		}
		opts.Page = resp.NextPage
	}
}

// ours says whether cm was written by the token's account, so that it may
// be edited: anyone who may comment can start a comment with the marker,
// and the verdict written into their comment would be theirs to change
// back. The Actions token and an app's write as a bot (user type "Bot",
// which no person's account is); a personal token writes as its user,
// whom GET /user names (asked only for a comment by a person; the Actions
// token is refused it, and then no person's comment is ours).
func (c *Comment) ours(ctx context.Context, cm *github.IssueComment) bool {
	u := cm.GetUser()
	if u.GetType() == "Bot" {
		return true
	}
	if !c.selfKnown {
		c.selfKnown = true
		if me, _, err := c.check.client.Users.Get(ctx, ""); err == nil {
			c.self = me.GetLogin()
		}
	}
	return c.self != "" && u.GetLogin() == c.self
}

// try retries as the check run does; a 403 becomes ErrNoCommentPermission.
func (c *Comment) try(ctx context.Context, what string, call func(ctx context.Context) error) error {
	err := c.check.try(ctx, what, call)
	if errors.Is(err, ErrNoPermission) {
		msg := ""
		var er *github.ErrorResponse
		if errors.As(err, &er) && er.Message != "" {
			msg = " (" + er.Message + ")"
		}
		return fmt.Errorf("%s: %w%s", what, ErrNoCommentPermission, msg)
	}
	return err
}

// PullRequestNumber returns the number of the pull request a workflow event
// is about (pull_request.number in the payload), or 0 when the event is not
// about one (a push, a merge queue, a schedule).
func PullRequestNumber(payload []byte) (int, error) {
	if len(strings.TrimSpace(string(payload))) == 0 {
		return 0, nil
	}
	var ev struct {
		PullRequest *struct {
			Number int `json:"number"`
		} `json:"pull_request"`
	}
	if err := json.Unmarshal(payload, &ev); err != nil {
		return 0, fmt.Errorf("event payload: %w", err)
	}
	if ev.PullRequest == nil {
		return 0, nil
	}
	return ev.PullRequest.Number, nil
}
