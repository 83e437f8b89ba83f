package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rhysd/actionlint"
	"go.yaml.in/yaml/v3"
)

const repoRoot = "../.."

// actionMetadata is the part of action.yml the tests check.
type actionMetadata struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Author      string `yaml:"author"`
	Branding    struct {
		Icon  string `yaml:"icon"`
		Color string `yaml:"color"`
	} `yaml:"branding"`
	Inputs map[string]struct {
		Default *string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
	} `yaml:"outputs"`
	Runs map[string]any `yaml:"runs"`
}

func readActionMetadata(t *testing.T) actionMetadata {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var m actionMetadata
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return m
}

func TestActionMetadata(t *testing.T) {
	m := readActionMetadata(t)
	if m.Name == "" || m.Description == "" || m.Author == "" || m.Branding.Icon == "" || m.Branding.Color == "" {
		t.Errorf("action.yml needs name, description, author and branding: %+v", m)
	}
	// A Docker action whose entrypoint reads INPUT_*: no args.
	if diff := cmp.Diff(map[string]any{"using": "docker", "image": "Dockerfile"}, m.Runs); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	defaults := map[string]string{}
	for name, in := range m.Inputs {
		if in.Default != nil {
			defaults[name] = *in.Default
		}
	}
	wantDefaults := map[string]string{
		"manifest":     "gradegate.yaml",
		"command":      "run",
		"github-token": "${{ github.token }}",
		"results":      "",
		"shard":        "",
		"check-name":   "",
		"hosted":       "false",
	}
	if diff := cmp.Diff(wantDefaults, defaults); diff != "" {
		t.Errorf("inputs and defaults (-want +got):\n%s", diff)
	}
	var outputs []string
	for name := range m.Outputs {
		outputs = append(outputs, name)
	}
	sort.Strings(outputs)
	if diff := cmp.Diff([]string{"check-run-url", "pass-rate", "results", "verdict"}, outputs); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
}

// workflow is one workflow to lint: a file, or a block of README.md.
type workflow struct {
	name    string // for messages, and the path actionlint reports
	content []byte
}

func workflowsToLint(t *testing.T) []workflow {
	t.Helper()
	var out []workflow
	for _, dir := range []string{".github/workflows", "testdata/workflows"} {
		for _, ext := range []string{"*.yml", "*.yaml"} {
			files, err := filepath.Glob(filepath.Join(repoRoot, dir, ext))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, workflow{name: f, content: data})
			}
		}
	}
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	for i, block := range yamlBlocks(string(readme)) {
		if strings.Contains(block.text, "jobs:") {
			out = append(out, workflow{
				name:    filepath.Join(repoRoot, "README.md") + ":" + strconv.Itoa(block.line) + " (block " + strconv.Itoa(i+1) + ")",
				content: []byte(block.text),
			})
		}
	}
	return out
}

type mdBlock struct {
	line int // line of the opening fence
	text string
}

// yamlBlocks returns the ```yaml (or ```yml) fenced blocks of a markdown text.
func yamlBlocks(md string) []mdBlock {
	var out []mdBlock
	open := regexp.MustCompile("^\\s*```\\s*ya?ml\\s*$")
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		if !open.MatchString(lines[i]) {
			continue
		}
		start := i
		indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " "))
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			l := lines[i]
			if len(l) >= indent && strings.TrimSpace(l[:indent]) == "" {
				l = l[indent:]
			}
			body = append(body, l)
		}
		out = append(out, mdBlock{line: start + 1, text: strings.Join(body, "\n") + "\n"})
	}
	return out
}

// TestWorkflowsLint lints the repository's workflows, the example workflows
// and the workflows the README shows with actionlint. Steps that use this
// action locally (uses: ./) are checked against action.yml by actionlint
// itself; the published gradegate/gradegate@… is checked here.
func TestWorkflowsLint(t *testing.T) {
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	// A project rooted at the repository lets actionlint resolve `uses: ./`
	// to action.yml and validate its inputs.
	project, err := actionlint.NewProject(root)
	if err != nil {
		t.Fatal(err)
	}
	linter, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{WorkingDir: root})
	if err != nil {
		t.Fatal(err)
	}
	meta := readActionMetadata(t)

	wfs := workflowsToLint(t)
	seen := map[string]bool{}
	for _, wf := range wfs {
		seen[filepath.Base(wf.name)] = true
	}
	for _, want := range []string{"ci.yml", "pull-request.yml", "hosted-canary.yml", "release-protection.yml", "sharded.yml"} {
		if !seen[want] {
			t.Errorf("workflow %s is missing", want)
		}
	}

	for _, wf := range wfs {
		t.Run(strings.TrimPrefix(wf.name, repoRoot+"/"), func(t *testing.T) {
			for _, p := range lintWorkflow(t, linter, project, meta, wf) {
				t.Error(p)
			}
		})
	}
}

// lintWorkflow returns every problem actionlint finds in wf, and every input
// given to this action that action.yml does not declare.
func lintWorkflow(t *testing.T, linter *actionlint.Linter, project *actionlint.Project, meta actionMetadata, wf workflow) []string {
	t.Helper()
	errs, err := linter.Lint(wf.name, wf.content, project)
	if err != nil {
		t.Fatalf("actionlint: %v", err)
	}
	var problems []string
	for _, e := range errs {
		problems = append(problems, fmt.Sprintf("%s:%d:%d: %s [%s]", wf.name, e.Line, e.Column, e.Message, e.Kind))
	}
	parsed, _ := actionlint.Parse(wf.content)
	if parsed == nil {
		return problems
	}
	for jobID, job := range parsed.Jobs {
		for _, step := range job.Steps {
			exec, ok := step.Exec.(*actionlint.ExecAction)
			if !ok || exec.Uses == nil {
				continue
			}
			uses := exec.Uses.Value
			if uses != "./" && !strings.HasPrefix(uses, "gradegate/gradegate@") {
				continue
			}
			for name, in := range exec.Inputs {
				if _, ok := meta.Inputs[name]; !ok {
					problems = append(problems, fmt.Sprintf("%s:%d: job %s: input %q is not in action.yml", wf.name, in.Name.Pos.Line, jobID, name))
				}
			}
			if exec.Args != nil || exec.Entrypoint != nil {
				problems = append(problems, fmt.Sprintf("%s: job %s: the action takes no args or entrypoint; its options are inputs", wf.name, jobID))
			}
		}
	}
	return problems
}

// TestWorkflowsLintCatchesMistakes makes sure the lint above can fail: a
// misspelt input is caught for the local action (by actionlint, through
// action.yml) and for the published one (by lintWorkflow).
func TestWorkflowsLintCatchesMistakes(t *testing.T) {
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	project, err := actionlint.NewProject(root)
	if err != nil {
		t.Fatal(err)
	}
	linter, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{WorkingDir: root})
	if err != nil {
		t.Fatal(err)
	}
	meta := readActionMetadata(t)
	for _, uses := range []string{"./", "gradegate/gradegate@v1"} {
		wf := workflow{name: filepath.Join(root, ".github/workflows/mistake.yml"), content: []byte(`on: push
jobs:
  gate:
    runs-on: ubuntu-latest
    steps:
      - uses: ` + uses + `
        with:
          manfest: gradegate.yaml
`)}
		problems := lintWorkflow(t, linter, project, meta, wf)
		if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, `"manfest"`) }) {
			t.Errorf("uses: %s with a misspelt input: problems %q", uses, problems)
		}
		if uses == "./" && !slices.ContainsFunc(problems, func(p string) bool { return strings.HasSuffix(p, "[action]") }) {
			t.Errorf("actionlint did not check the local action against action.yml: %q", problems)
		}
	}
}

func TestExampleWorkflowsUseTheAction(t *testing.T) {
	tests := []struct {
		file string
		want []string
	}{
		{"pull-request.yml", []string{"uses: gradegate/gradegate@v1", "pull_request:", "checks: write", "contents: read"}},
		{"hosted-canary.yml", []string{"workflow_dispatch:", "command: canary", "hosted: true", "OPENAI_API_KEY: ${{ secrets.OPENAI_API_KEY }}"}},
		{"release-protection.yml", []string{`- "release/**"`, "check-name: gradegate / release"}},
		{"sharded.yml", []string{"matrix:", "shard: ${{ matrix.shard }}/4", "actions/upload-artifact@", "actions/download-artifact@", "command: merge"}},
	}
	for _, tt := range tests {
		data, err := os.ReadFile(filepath.Join(repoRoot, "testdata/workflows", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(string(data), w) {
				t.Errorf("%s lacks %q", tt.file, w)
			}
		}
	}
	ci, err := os.ReadFile(filepath.Join(repoRoot, ".github/workflows/ci.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"go test ./...", "uses: ./", "manifest: testdata/examples/order-summary/gradegate.yaml"} {
		if !strings.Contains(string(ci), w) {
			t.Errorf("ci.yml lacks %q", w)
		}
	}
}

func TestYAMLBlocks(t *testing.T) {
	md := "# x\n\n```yaml\non: push\njobs:\n  a: {}\n```\n\n```sh\nls\n```\n\n  ```yml\n  name: indented\n  ```\n"
	got := yamlBlocks(md)
	want := []mdBlock{{line: 3, text: "on: push\njobs:\n  a: {}\n"}, {line: 13, text: "name: indented\n"}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(mdBlock{})); diff != "" {
		t.Errorf("yamlBlocks (-want +got):\n%s", diff)
	}
	if !slices.ContainsFunc(got, func(b mdBlock) bool { return strings.Contains(b.text, "jobs:") }) {
		t.Error("no block with jobs")
	}
}
