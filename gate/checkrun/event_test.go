package checkrun_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gradegate/gradegate/gate/checkrun"
)

// The event payloads are shared with the action's tests in cmd/gradegate.
const eventsDir = "../../cmd/gradegate/testdata/events"

// githubSHA stands for GITHUB_SHA: for pull requests, the merge commit.
const githubSHA = "9999999999999999999999999999999999999999"

func TestHeadSHA(t *testing.T) {
	tests := []struct {
		event string
		file  string
		want  string
	}{
		{"pull_request", "pull_request.json", "1111111111111111111111111111111111111111"},
		{"pull_request_target", "pull_request_target.json", "4444444444444444444444444444444444444444"},
		{"push", "push.json", "7777777777777777777777777777777777777777"},
		{"workflow_dispatch", "workflow_dispatch.json", githubSHA},
		{"merge_group", "merge_group.json", "8888888888888888888888888888888888888888"},
	}
	for _, tt := range tests {
		t.Run(tt.event, func(t *testing.T) {
			payload, err := os.ReadFile(filepath.Join(eventsDir, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := checkrun.HeadSHA(tt.event, payload, githubSHA)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("HeadSHA = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestHeadSHAEdges(t *testing.T) {
	tests := []struct {
		name     string
		event    string
		payload  string
		fallback string
		want     string
		wantErr  bool
	}{
		{name: "pull request without head", event: "pull_request", payload: `{"pull_request": {}}`, fallback: githubSHA, wantErr: true},
		{name: "pull request without payload", event: "pull_request", payload: ``, fallback: githubSHA, wantErr: true},
		{name: "merge group without head", event: "merge_group", payload: `{}`, fallback: githubSHA, wantErr: true},
		{name: "push deleting a branch", event: "push", payload: `{"after": "0000000000000000000000000000000000000000"}`, fallback: githubSHA, want: githubSHA},
		{name: "push without after", event: "push", payload: `{}`, fallback: githubSHA, want: githubSHA},
		{name: "workflow_run", event: "workflow_run", payload: `{"workflow_run": {"head_sha": "abc"}}`, fallback: githubSHA, want: "abc"},
		{name: "schedule", event: "schedule", payload: `{"schedule": "0 * * * *"}`, fallback: githubSHA, want: githubSHA},
		{name: "no sha at all", event: "workflow_dispatch", payload: `{}`, wantErr: true},
		{name: "broken payload", event: "push", payload: `{"after":`, fallback: githubSHA, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := checkrun.HeadSHA(tt.event, []byte(tt.payload), tt.fallback)
			if (err != nil) != tt.wantErr {
				t.Fatalf("HeadSHA error = %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("HeadSHA = %q, want %q", got, tt.want)
			}
		})
	}
}
