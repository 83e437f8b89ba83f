package checkrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// zeroSHA is the "after" of a push that deleted a branch.
const zeroSHA = "0000000000000000000000000000000000000000"

// HeadSHA returns the commit a check run belongs on, from the workflow's
// event name (GITHUB_EVENT_NAME) and payload (the file at GITHUB_EVENT_PATH).
// fallbackSHA is GITHUB_SHA.
//
// For pull requests GITHUB_SHA is the merge commit GitHub made for the run,
// which the pull request page does not show; the check must go on
// pull_request.head.sha
// (https://docs.github.com/actions/writing-workflows/choosing-when-your-workflow-runs/events-that-trigger-workflows#pull_request).
// A merge queue's commit is merge_group.head_sha; a push's is "after".
// Other events use GITHUB_SHA.
func HeadSHA(eventName string, payload []byte, fallbackSHA string) (string, error) {
	var ev struct {
		PullRequest *struct {
			Head struct {
				SHA string `json:"sha"`
			} `json:"head"`
		} `json:"pull_request"`
		After      string `json:"after"`
		MergeGroup *struct {
			HeadSHA string `json:"head_sha"`
		} `json:"merge_group"`
		WorkflowRun *struct {
			HeadSHA string `json:"head_sha"`
		} `json:"workflow_run"`
	}
	if len(strings.TrimSpace(string(payload))) > 0 {
		if err := json.Unmarshal(payload, &ev); err != nil {
			return "", fmt.Errorf("event payload of %s: %w", eventName, err)
		}
	}

	var sha, from string
	switch eventName {
	case "pull_request", "pull_request_target", "pull_request_review", "pull_request_review_comment":
		from = "pull_request.head.sha"
		if ev.PullRequest == nil || ev.PullRequest.Head.SHA == "" {
			// Falling back to GITHUB_SHA would put the check on the merge
			// commit, where nobody sees it.
			return "", fmt.Errorf("%s event payload has no %s", eventName, from)
		}
		sha = ev.PullRequest.Head.SHA
	case "merge_group":
		from = "merge_group.head_sha"
		if ev.MergeGroup == nil || ev.MergeGroup.HeadSHA == "" {
			return "", fmt.Errorf("%s event payload has no %s", eventName, from)
		}
		sha = ev.MergeGroup.HeadSHA
	case "push":
		sha = ev.After
		if sha == zeroSHA {
			sha = ""
		}
	case "workflow_run":
		if ev.WorkflowRun != nil {
			sha = ev.WorkflowRun.HeadSHA
		}
	}
	if sha == "" {
		sha = fallbackSHA
	}
	if sha == "" {
		return "", errors.New("no commit to put the check run on: GITHUB_SHA is empty")
	}
	return sha, nil
}
