package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gradegate/gradegate/gate/checkrun/action"
	"github.com/gradegate/gradegate/gate/checkrun/checkruntest"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/shard"
)

// Manifest paths as a workflow gives them: relative to the repository root,
// which is the action's working directory (newActionEnv changes to it).
const (
	exampleManifest = "testdata/examples/order-summary/gradegate.yaml"
	holdManifest    = "testdata/examples/broken/isinstance/gradegate.yaml"
	testToken       = "ghs_DoNotPrintThisToken0123456789"
	// prHeadSHA is pull_request.head.sha in testdata/events/pull_request.json;
	// mergeSHA stands for GITHUB_SHA, the merge commit of a pull_request run.
	prHeadSHA = "1111111111111111111111111111111111111111"
	mergeSHA  = "3333333333333333333333333333333333333333"
)

// actionEnv is a runner's environment for one action step, with its files.
type actionEnv struct {
	vars    map[string]string
	output  string // GITHUB_OUTPUT
	summary string // GITHUB_STEP_SUMMARY
}

func newActionEnv(t *testing.T, api *checkruntest.Server, inputs map[string]string) *actionEnv {
	t.Helper()
	dir := t.TempDir()
	workspace, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	events, err := filepath.Abs("testdata/events")
	if err != nil {
		t.Fatal(err)
	}
	// A container action starts in GITHUB_WORKSPACE, the repository root.
	t.Chdir(workspace)
	e := &actionEnv{
		output:  filepath.Join(dir, "output"),
		summary: filepath.Join(dir, "step_summary"),
	}
	for _, f := range []string{e.output, e.summary} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runnerTemp := filepath.Join(dir, "runner_temp")
	if err := os.Mkdir(runnerTemp, 0o755); err != nil {
		t.Fatal(err)
	}
	e.vars = map[string]string{
		"GITHUB_ACTIONS":      "true",
		"GITHUB_OUTPUT":       e.output,
		"GITHUB_STEP_SUMMARY": e.summary,
		"GITHUB_EVENT_NAME":   "pull_request",
		"GITHUB_EVENT_PATH":   filepath.Join(events, "pull_request.json"),
		"GITHUB_SHA":          mergeSHA,
		"GITHUB_REPOSITORY":   "octo-org/evals",
		"GITHUB_SERVER_URL":   "https://github.com",
		"GITHUB_RUN_ID":       "1234",
		"GITHUB_WORKSPACE":    workspace,
		"RUNNER_TEMP":         runnerTemp,
		// Graders need python3; nothing else of this process's environment
		// reaches runAction.
		"PATH": os.Getenv("PATH"),
	}
	if api != nil {
		e.vars["GITHUB_API_URL"] = api.APIURL()
	}
	for k, v := range inputs {
		e.vars["INPUT_"+k] = v
	}
	return e
}

func (e *actionEnv) getenv(k string) string { return e.vars[k] }

// run runs the binary's entry point with no arguments, as the action image does.
func (e *actionEnv) run(t *testing.T) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), nil, e.getenv, &out, &errb)
	t.Logf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	// The one place the token may appear is the command that masks it,
	// which the runner does not print.
	unmasked := strings.ReplaceAll(out.String(), "::add-mask::"+testToken+"\n", "")
	if strings.Contains(unmasked+errb.String(), testToken) {
		t.Error("the token was printed")
	}
	return code, out.String(), errb.String()
}

// outputs parses GITHUB_OUTPUT: name<<DELIMITER, value lines, DELIMITER.
func (e *actionEnv) outputs(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(e.output)
	if err != nil {
		t.Fatal(err)
	}
	return parseOutputs(t, string(data))
}

func parseOutputs(t *testing.T, data string) map[string]string {
	t.Helper()
	out := map[string]string{}
	lines := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		if lines[i] == "" {
			continue
		}
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			t.Fatalf("GITHUB_OUTPUT line %d is not name<<delimiter: %q", i+1, lines[i])
		}
		var val []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			val = append(val, lines[i])
		}
		if i == len(lines) {
			t.Fatalf("GITHUB_OUTPUT: %s has no closing delimiter", name)
		}
		if _, dup := out[name]; dup {
			t.Errorf("GITHUB_OUTPUT sets %s twice", name)
		}
		out[name] = strings.Join(val, "\n")
	}
	return out
}

func (e *actionEnv) stepSummary(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(e.summary)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func readResultsFile(t *testing.T, path string) *results.Results {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("results output %q: %v", path, err)
	}
	var res results.Results
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("results output %q: %v", path, err)
	}
	return &res
}

func TestActionRunOnPullRequest(t *testing.T) {
	api := checkruntest.New(t)
	e := newActionEnv(t, api, map[string]string{
		"MANIFEST":     exampleManifest,
		"GITHUB-TOKEN": testToken,
	})
	code, stdout, _ := e.run(t)
	if code != exitPass {
		t.Fatalf("exit %d, want %d (the example suite passes)", code, exitPass)
	}

	outs := e.outputs(t)
	if outs["verdict"] != "pass" {
		t.Errorf("output verdict = %q, want pass", outs["verdict"])
	}
	if r, err := strconv.ParseFloat(outs["pass-rate"], 64); err != nil || r < 0 || r > 1 {
		t.Errorf("output pass-rate = %q, want a rate in [0, 1]", outs["pass-rate"])
	}
	if outs["check-run-url"] != api.HTMLURL() {
		t.Errorf("output check-run-url = %q, want %q", outs["check-run-url"], api.HTMLURL())
	}
	// With no results input the document still goes somewhere: RUNNER_TEMP.
	if !strings.HasPrefix(outs["results"], e.vars["RUNNER_TEMP"]) {
		t.Errorf("output results = %q, want a file in RUNNER_TEMP", outs["results"])
	}
	res := readResultsFile(t, outs["results"])
	if res.Schema != results.ResultsSchema || res.Verdict != results.VerdictPass {
		t.Errorf("results file: schema %q verdict %q", res.Schema, res.Verdict)
	}

	if sum := e.stepSummary(t); !strings.Contains(strings.ToLower(sum), "pass") || !strings.Contains(sum, "Slices") {
		t.Errorf("step summary lacks the verdict or the slice table:\n%s", sum)
	}

	reqs := api.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests to the Checks API, want create and complete", len(reqs))
	}
	create, last := reqs[0], reqs[len(reqs)-1]
	if create.Method != http.MethodPost || create.Path != "repos/octo-org/evals/check-runs" {
		t.Errorf("first request %s %s, want the create", create.Method, create.Path)
	}
	if create.Body.HeadSHA != prHeadSHA {
		t.Errorf("check run on %s, want the pull request head %s (not the merge commit)", create.Body.HeadSHA, prHeadSHA)
	}
	if create.Body.Name != "gradegate / order-summary" {
		t.Errorf("check run name %q", create.Body.Name)
	}
	if create.Body.GetStatus() != "in_progress" {
		t.Errorf("created with status %q", create.Body.GetStatus())
	}
	if create.Auth != "Bearer "+testToken {
		t.Error("the check run was not created with the github-token input")
	}
	if got := last.Body.GetConclusion(); got != "success" {
		t.Errorf("conclusion %q, want success", got)
	}
	if got := create.Body.GetDetailsURL(); got != "https://github.com/octo-org/evals/actions/runs/1234" {
		t.Errorf("details_url %q", got)
	}
	if strings.Contains(stdout, "::notice::gradegate did not create a check run") {
		t.Error("said the check run was not created")
	}
}

func TestActionHoldFromFork(t *testing.T) {
	api := checkruntest.New(t)
	api.Deny()
	e := newActionEnv(t, api, map[string]string{
		"MANIFEST":     holdManifest,
		"GITHUB-TOKEN": testToken,
		"CHECK-NAME":   "evals",
	})
	e.vars["GITHUB_EVENT_PATH"] = strings.Replace(e.vars["GITHUB_EVENT_PATH"], "pull_request.json", "pull_request_target.json", 1)
	e.vars["GITHUB_EVENT_NAME"] = "pull_request_target"
	code, stdout, _ := e.run(t)
	if code != exitHold {
		t.Fatalf("exit %d, want %d: a hold stays a hold when the check run cannot be created", code, exitHold)
	}
	if n := strings.Count(stdout, "::notice::gradegate did not create a check run"); n != 1 {
		t.Errorf("said %d times that the check run was not created, want once", n)
	}
	if strings.Contains(stdout, "reporting failed") {
		t.Error("a read-only token was reported as a failure")
	}
	// Annotations fall back to workflow commands with repository paths.
	for _, m := range regexp.MustCompile(`::(?:error|warning|notice) file=([^,]*),`).FindAllStringSubmatch(stdout, -1) {
		if strings.HasPrefix(m[1], "/") || strings.HasPrefix(m[1], "..") {
			t.Errorf("annotation path %q is not relative to the repository root", m[1])
		}
	}
	outs := e.outputs(t)
	if outs["verdict"] != "hold" || outs["check-run-url"] != "" {
		t.Errorf("outputs verdict=%q check-run-url=%q, want hold and none", outs["verdict"], outs["check-run-url"])
	}
	if reqs := api.Requests(); len(reqs) != 1 || reqs[0].Body.Name != "evals" {
		t.Errorf("requests %+v, want one create named by the check-name input", reqs)
	}
	if sum := e.stepSummary(t); !strings.Contains(strings.ToLower(sum), "hold") {
		t.Errorf("step summary lacks the hold:\n%s", sum)
	}
}

func TestActionReportingFailure(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		want     int
	}{
		{"a pass becomes 3", exampleManifest, exitInternal},
		{"a hold stays 1", holdManifest, exitHold},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := checkruntest.New(t)
			api.Queue(checkruntest.Reply{Status: http.StatusUnauthorized, Body: `{"message":"Bad credentials"}`})
			e := newActionEnv(t, api, map[string]string{"MANIFEST": tt.manifest, "GITHUB-TOKEN": testToken})
			code, stdout, _ := e.run(t)
			if code != tt.want {
				t.Errorf("exit %d, want %d", code, tt.want)
			}
			if !strings.Contains(stdout, "::error::gradegate: reporting failed: check run") {
				t.Error("the failed check run was not reported as an error")
			}
			// Exit 3 is no pass: a step guarded by the verdict output
			// must not go ahead.
			if got := e.outputs(t)["verdict"]; got != "hold" {
				t.Errorf("output verdict = %q after the check run failed, want hold", got)
			}
		})
	}
}

func TestActionMissingStepSummaryFailsAPass(t *testing.T) {
	api := checkruntest.New(t)
	e := newActionEnv(t, api, map[string]string{"MANIFEST": exampleManifest, "GITHUB-TOKEN": testToken})
	delete(e.vars, "GITHUB_STEP_SUMMARY")
	if code, _, _ := e.run(t); code != exitInternal {
		t.Errorf("exit %d, want %d", code, exitInternal)
	}
}

func TestActionShardPostsNoCheckRun(t *testing.T) {
	api := checkruntest.New(t)
	e := newActionEnv(t, api, map[string]string{"MANIFEST": exampleManifest, "GITHUB-TOKEN": testToken, "SHARD": "1/2"})
	// The Action writes only inside the workspace or RUNNER_TEMP.
	results := filepath.Join(e.vars["RUNNER_TEMP"], "shard-1.json")
	e.vars["INPUT_RESULTS"] = results
	code, _, _ := e.run(t)
	if code != exitPass && code != exitHold {
		t.Fatalf("exit %d", code)
	}
	if n := len(api.Requests()); n != 0 {
		t.Errorf("a shard made %d Checks API requests; only the merge posts", n)
	}
	outs := e.outputs(t)
	if outs["results"] != results {
		t.Errorf("output results = %q, want the results input %q", outs["results"], results)
	}
	if res := readResultsFile(t, results); res.Shard != (shard.Shard{Index: 1, Count: 2}) {
		t.Errorf("results shard = %+v, want 1/2", res.Shard)
	}
}

func TestActionNoTokenAnnotatesWithCommands(t *testing.T) {
	e := newActionEnv(t, nil, map[string]string{"MANIFEST": holdManifest})
	code, stdout, _ := e.run(t)
	if code != exitHold {
		t.Errorf("exit %d, want %d", code, exitHold)
	}
	if n := strings.Count(stdout, "::notice::gradegate did not create a check run: no github-token"); n != 1 {
		t.Errorf("said %d times that there is no token, want once", n)
	}
}

func TestActionUnusableManifest(t *testing.T) {
	api := checkruntest.New(t)
	e := newActionEnv(t, api, map[string]string{"MANIFEST": "testdata/no-such-manifest.yaml", "GITHUB-TOKEN": testToken})
	code, _, _ := e.run(t)
	if code != exitInput {
		t.Errorf("exit %d, want %d", code, exitInput)
	}
	if n := len(api.Requests()); n != 0 {
		t.Errorf("%d Checks API requests without results", n)
	}
	if sum := e.stepSummary(t); !strings.Contains(sum, "no verdict") {
		t.Errorf("step summary does not say there is no verdict:\n%s", sum)
	}
	if outs := e.outputs(t); outs["verdict"] != "hold" || outs["results"] != "" {
		t.Errorf("outputs verdict=%q results=%q, want hold and no results", outs["verdict"], outs["results"])
	}

	// The arguments are said in the summary escaped: a path from the
	// repository (a shard file's name, a manifest's) could close the code
	// span and mention, link or head the summary.
	hostile := "testdata/no-such` @octocat <img src=x> [click](http://evil.example)\n\n## PASS.yaml"
	e = newActionEnv(t, api, map[string]string{"MANIFEST": hostile, "GITHUB-TOKEN": testToken})
	if code, _, _ := e.run(t); code != exitInput {
		t.Errorf("hostile manifest path: exit %d, want %d", code, exitInput)
	}
	sum := e.stepSummary(t)
	for _, bad := range []string{"@octocat", "<img", "[click](", "\n## PASS"} {
		if strings.Contains(sum, bad) {
			t.Errorf("step summary holds %q:\n%s", bad, sum)
		}
	}
	if !strings.Contains(sum, "no verdict") {
		t.Errorf("step summary does not say there is no verdict:\n%s", sum)
	}
}

func TestActionInputs(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"shard-1.json", "shard-2.json"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		env     map[string]string
		want    []string
		wantErr string
	}{
		{
			name: "defaults",
			env:  map[string]string{},
			want: []string{"run", "gradegate.yaml", "--results", "OUT"},
		},
		{
			name: "run with a shard and a results path",
			env:  map[string]string{"INPUT_MANIFEST": "evals/x/gradegate.yaml", "INPUT_SHARD": "2/4", "INPUT_RESULTS": "OUT"},
			want: []string{"run", "evals/x/gradegate.yaml", "--results", "OUT", "--shard", "2/4"},
		},
		{
			name: "hosted canary, input spelled with spaces trimmed",
			env:  map[string]string{"INPUT_COMMAND": " canary ", "INPUT_HOSTED": "true"},
			want: []string{"canary", "gradegate.yaml", "--results", "OUT", "--hosted"},
		},
		{
			name: "merge expands globs",
			env:  map[string]string{"INPUT_COMMAND": "merge", "INPUT_RESULTS": filepath.Join(dir, "shard-*.json")},
			want: []string{"merge", "--manifest", "gradegate.yaml", "--results", "OUT", filepath.Join(dir, "shard-1.json"), filepath.Join(dir, "shard-2.json")},
		},
		{
			name: "validate",
			env:  map[string]string{"INPUT_COMMAND": "validate", "INPUT_MANIFEST": "m.yaml"},
			want: []string{"validate", "m.yaml"},
		},
		{
			name: "doctor",
			env:  map[string]string{"INPUT_COMMAND": "doctor"},
			want: []string{"doctor"},
		},
		{
			name: "mutate",
			env:  map[string]string{"INPUT_COMMAND": "mutate", "INPUT_MANIFEST": "m.yaml"},
			want: []string{"mutate", "m.yaml", "--results", "OUT"},
		},
		{
			name: "shadow",
			env:  map[string]string{"INPUT_COMMAND": "shadow", "INPUT_MANIFEST": "m.yaml", "INPUT_BASE": "old/grader.py"},
			want: []string{"shadow", "m.yaml", "--base", "old/grader.py", "--results", "OUT"},
		},
		{name: "shadow without base", env: map[string]string{"INPUT_COMMAND": "shadow"}, wantErr: "command shadow needs the path of the old grader"},
		{name: "base outside shadow", env: map[string]string{"INPUT_BASE": "old.py"}, wantErr: "input base applies to command shadow, not run"},
		{name: "unknown command", env: map[string]string{"INPUT_COMMAND": "deploy"}, wantErr: "input command"},
		{name: "shard outside run", env: map[string]string{"INPUT_COMMAND": "canary", "INPUT_SHARD": "1/2"}, wantErr: "input shard"},
		{name: "hosted outside canary", env: map[string]string{"INPUT_HOSTED": "true"}, wantErr: "input hosted applies"},
		{name: "hosted not a boolean", env: map[string]string{"INPUT_COMMAND": "canary", "INPUT_HOSTED": "yes please"}, wantErr: "input hosted: want true or false"},
		{name: "merge without shards", env: map[string]string{"INPUT_COMMAND": "merge"}, wantErr: "needs the shard results"},
		{name: "merge glob matching nothing", env: map[string]string{"INPUT_COMMAND": "merge", "INPUT_RESULTS": filepath.Join(dir, "none-*.json")}, wantErr: "no shard results file matches"},
		{name: "results for validate", env: map[string]string{"INPUT_COMMAND": "validate", "INPUT_RESULTS": "r.json"}, wantErr: "input results applies"},
		{name: "comment for validate", env: map[string]string{"INPUT_COMMAND": "validate", "INPUT_COMMENT": "true"}, wantErr: "input comment applies"},
		{name: "comment not a boolean", env: map[string]string{"INPUT_COMMENT": "please"}, wantErr: "input comment: want true or false"},
		{name: "comment on run", env: map[string]string{"INPUT_COMMENT": "true"}, want: []string{"run", "gradegate.yaml", "--results", "OUT"}},
		{
			name: "model grader cache on run",
			env:  map[string]string{"INPUT_JUDGE-CACHE": "evals/judge/cache", "INPUT_JUDGE-CACHE-MODE": "read"},
			want: []string{"run", "gradegate.yaml", "--results", "OUT", "--judge-cache", "evals/judge/cache", "--judge-cache-mode", "read"},
		},
		{
			name: "model grader cache on shadow",
			env:  map[string]string{"INPUT_COMMAND": "shadow", "INPUT_BASE": "old.yaml", "INPUT_JUDGE-CACHE": "c"},
			want: []string{"shadow", "gradegate.yaml", "--base", "old.yaml", "--results", "OUT", "--judge-cache", "c"},
		},
		{name: "judge cache for merge", env: map[string]string{"INPUT_COMMAND": "merge", "INPUT_RESULTS": filepath.Join(dir, "shard-*.json"), "INPUT_JUDGE-CACHE": "c"}, wantErr: "apply to commands run, canary and shadow"},
		{
			name: "baseline on run",
			env:  map[string]string{"INPUT_BASELINE": "base/results.json", "INPUT_SHARD": "1/2"},
			want: []string{"run", "gradegate.yaml", "--results", "OUT", "--shard", "1/2", "--baseline", "base/results.json"},
		},
		{name: "baseline outside run", env: map[string]string{"INPUT_COMMAND": "canary", "INPUT_BASELINE": "b.json"}, wantErr: "input baseline applies to command run, not canary"},
		{
			name: "base manifest on run",
			env:  map[string]string{"INPUT_BASE-MANIFEST": "base/evals/gradegate.yaml"},
			want: []string{"run", "gradegate.yaml", "--results", "OUT", "--base-manifest", "base/evals/gradegate.yaml"},
		},
		{name: "base manifest outside run", env: map[string]string{"INPUT_COMMAND": "canary", "INPUT_BASE-MANIFEST": "b.yaml"}, wantErr: "input base-manifest applies to command run, not canary"},
		{name: "judge cache mode alone", env: map[string]string{"INPUT_JUDGE-CACHE-MODE": "read"}, wantErr: "input judge-cache-mode needs judge-cache"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := action.ReadInputs(func(k string) string { return tt.env[k] })
			var args []string
			if err == nil {
				args, err = actionArgs(in, "OUT")
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
		})
	}
}

func TestActionMasksTheToken(t *testing.T) {
	tests := []struct {
		name   string
		inputs map[string]string
	}{
		// The example, whose run is quick (the broken one's mutation stage
		// grades its mutants for half a minute): the token is masked before
		// any command runs, whichever it is.
		{"before running", map[string]string{"MANIFEST": exampleManifest, "GITHUB-TOKEN": testToken}},
		{"before reporting bad input", map[string]string{"COMMAND": "deploy", "GITHUB-TOKEN": testToken}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The fake API: the real one is out of reach, and reporting to
			// it would retry with backoff for seconds.
			e := newActionEnv(t, checkruntest.New(t), tt.inputs)
			_, stdout, _ := e.run(t)
			if first, _, _ := strings.Cut(stdout, "\n"); first != "::add-mask::"+testToken {
				t.Errorf("first line %q, want the token masked before anything else", first)
			}
		})
	}
}

// TestActionPostsMutateAndShadow checks that mutate and shadow post to
// GitHub like the gate commands, their exit code being the verdict.
func TestActionPostsMutateAndShadow(t *testing.T) {
	tests := []struct {
		name           string
		inputs         map[string]string
		wantCode       int
		wantName       string
		wantConclusion string
		wantSchema     string
		wantSummary    string
	}{
		{
			name:           "mutate, every mutant killed",
			inputs:         map[string]string{"COMMAND": "mutate", "MANIFEST": exampleManifest},
			wantCode:       exitPass,
			wantName:       "gradegate mutate / order-summary",
			wantConclusion: "success",
			wantSchema:     "gradegate.mutate/v1",
			wantSummary:    "Mutation score",
		},
		{
			name:           "shadow, a canary changed",
			inputs:         map[string]string{"COMMAND": "shadow", "MANIFEST": exampleManifest, "BASE": "testdata/examples/broken/isinstance/grader.py", "CHECK-NAME": "grader change"},
			wantCode:       exitHold,
			wantName:       "grader change",
			wantConclusion: "failure",
			wantSchema:     "gradegate.shadow/v1",
			wantSummary:    "gradegate shadow",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := checkruntest.New(t)
			tt.inputs["GITHUB-TOKEN"] = testToken
			e := newActionEnv(t, api, tt.inputs)
			code, _, _ := e.run(t)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d", code, tt.wantCode)
			}

			want := []checkruntest.Run{{ID: checkruntest.RunID, Name: tt.wantName, HeadSHA: prHeadSHA, Status: "completed", Conclusion: tt.wantConclusion}}
			runs := api.Runs()
			if diff := cmp.Diff(want, runs, cmpopts.IgnoreFields(checkruntest.Run{}, "ExternalID")); diff != "" {
				t.Errorf("check runs (-want +got):\n%s", diff)
			}
			reqs := api.Requests()
			last := reqs[len(reqs)-1].Body.Output
			if !strings.Contains(last.GetSummary(), tt.wantSummary) || last.GetTitle() == "" || strings.Contains(last.GetTitle(), "\n") {
				t.Errorf("check run title %q, summary:\n%s", last.GetTitle(), last.GetSummary())
			}
			if !strings.HasPrefix(last.GetTitle(), action.VerdictOf(tt.wantCode)+":") {
				t.Errorf("check run title %q does not start with the verdict", last.GetTitle())
			}

			if sum := e.stepSummary(t); !strings.Contains(sum, tt.wantSummary) {
				t.Errorf("step summary lacks %q:\n%s", tt.wantSummary, sum)
			}
			outs := e.outputs(t)
			wantOuts := map[string]string{"verdict": action.VerdictOf(tt.wantCode), "pass-rate": "", "results": outs["results"], "check-run-url": api.HTMLURL()}
			if diff := cmp.Diff(wantOuts, outs); diff != "" {
				t.Errorf("outputs (-want +got):\n%s", diff)
			}
			data, err := os.ReadFile(outs["results"])
			if err != nil {
				t.Fatalf("output results: %v", err)
			}
			var doc struct{ Schema string }
			if err := json.Unmarshal(data, &doc); err != nil || doc.Schema != tt.wantSchema {
				t.Errorf("output results %s: schema %q (%v), want %s", outs["results"], doc.Schema, err, tt.wantSchema)
			}
		})
	}
}

func TestActionMutateWithoutToken(t *testing.T) {
	e := newActionEnv(t, nil, map[string]string{"COMMAND": "mutate", "MANIFEST": exampleManifest})
	code, stdout, _ := e.run(t)
	if code != exitPass {
		t.Fatalf("exit %d, want %d", code, exitPass)
	}
	if n := strings.Count(stdout, "::notice::gradegate did not create a check run: no github-token"); n != 1 {
		t.Errorf("said %d times that there is no token, want once", n)
	}
	if got := e.outputs(t)["verdict"]; got != "pass" {
		t.Errorf("output verdict = %q, want pass", got)
	}
}

func TestActionAdoptsTheCheckRunAFailedCreateLeft(t *testing.T) {
	api := checkruntest.New(t)
	// GitHub created the run but answered 502; retrying the create blindly
	// would leave this one in progress for ever.
	api.Queue(checkruntest.Reply{Status: http.StatusBadGateway, Applied: true})
	e := newActionEnv(t, api, map[string]string{"MANIFEST": exampleManifest, "GITHUB-TOKEN": testToken})
	if code, _, _ := e.run(t); code != exitPass {
		t.Fatalf("exit %d, want %d", code, exitPass)
	}
	creates := 0
	for _, r := range api.Requests() {
		if r.Method == http.MethodPost {
			creates++
		}
	}
	if creates != 1 {
		t.Errorf("%d creates, want 1: the run the failed create left is used", creates)
	}
	if runs := api.Runs(); len(runs) != 1 || runs[0].Conclusion != "success" {
		t.Errorf("check runs %+v, want one, completed with success", runs)
	}
	if got := e.outputs(t)["check-run-url"]; got != api.HTMLURL() {
		t.Errorf("output check-run-url = %q, want %q", got, api.HTMLURL())
	}
}

func TestActionBadInputExits2(t *testing.T) {
	e := newActionEnv(t, nil, map[string]string{"COMMAND": "deploy"})
	code, stdout, _ := e.run(t)
	if code != exitInput {
		t.Errorf("exit %d, want %d", code, exitInput)
	}
	if !strings.Contains(stdout, "::error::gradegate: input command") {
		t.Errorf("no error annotation for the bad input:\n%s", stdout)
	}
}
