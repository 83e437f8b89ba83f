package main

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rhysd/actionlint"
	"go.yaml.in/yaml/v3"

	"github.com/gradegate/gradegate/gate/buildinfo"
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
	return readActionFile(t, filepath.Join(repoRoot, "action.yml"))
}

func readActionFile(t *testing.T, path string) actionMetadata {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m actionMetadata
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

func TestActionMetadata(t *testing.T) {
	m := readActionMetadata(t)
	if m.Name == "" || m.Description == "" || m.Author == "" || m.Branding.Icon == "" || m.Branding.Color == "" {
		t.Errorf("action.yml needs name, description, author and branding: %+v", m)
	}
	// A Docker action whose entrypoint reads INPUT_*: no args. The image
	// is checked by TestActionImage.
	if m.Runs["using"] != "docker" || len(m.Runs) != 2 || m.Runs["image"] == nil {
		t.Errorf("runs: %v, want using: docker and an image, nothing else", m.Runs)
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
		"comment":      "false",
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

// workflow is one workflow to lint: a file, or a block of README.md or of
// a page in docs/.
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
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range append([]string{filepath.Join(repoRoot, "README.md")}, pages...) {
		md, err := os.ReadFile(page)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		for i, block := range yamlBlocks(string(md)) {
			if strings.Contains(block.text, "jobs:") {
				out = append(out, workflow{
					name:    page + ":" + strconv.Itoa(block.line) + " (block " + strconv.Itoa(i+1) + ")",
					content: []byte(block.text),
				})
			}
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
	for _, want := range []string{"ci.yml", "pull-request.yml", "hosted-canary.yml", "release-protection.yml", "sharded.yml", "baseline.yml"} {
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
		if e.Kind == "action" && strings.Contains(e.Message, `"`+sourceImages[1]+`"`) && strings.Contains(e.Message, `must be named "Dockerfile"`) {
			// slim/action.yml builds ../slim.Dockerfile on a source
			// checkout. actionlint wants the file named Dockerfile; the
			// runner builds any image path ending in "Dockerfile", with
			// the file's directory (here the repository root) as the
			// context (actions/runner, ContainerActionHandler.cs).
			continue
		}
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
		{"pull-request.yml", []string{"uses: gradegate/gradegate@", "pull_request:", "checks: write", "contents: read"}},
		{"hosted-canary.yml", []string{"workflow_dispatch:", "command: canary", "hosted: true", "OPENAI_API_KEY: ${{ secrets.OPENAI_API_KEY }}"}},
		{"release-protection.yml", []string{`- "release/**"`, "check-name: gradegate / release"}},
		{"baseline.yml", []string{"push:", "pull_request:", "actions: read", "gh run download", "baseline: ${{ steps.base.outputs.file }}", "actions/upload-artifact@"}},
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

// imageRepository is where the release workflow publishes the images.
const imageRepository = "ghcr.io/gradegate/gradegate"

// The runs.image lines of action.yml and slim/action.yml: on a source
// checkout they build the Dockerfiles; on a release commit they name the
// published images by digest, with the tag pushed beside it.
var (
	sourceImages = [2]string{"Dockerfile", "../slim.Dockerfile"}
	pinnedImage  = regexp.MustCompile(`^docker://` + regexp.QuoteMeta(imageRepository) + `@(sha256:[0-9a-f]{64}) # ` + regexp.QuoteMeta(imageRepository) + `:(\S+)$`)
)

// imageLine returns the text after `  image: ` in an action.yml: the
// value with its comment, which yaml drops.
func imageLine(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var found []string
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "  image: "); ok {
			found = append(found, strings.TrimSpace(v))
		}
	}
	if len(found) != 1 {
		return "", fmt.Errorf("%s: %d runs.image lines, want 1", path, len(found))
	}
	return found[0], nil
}

// checkActionImages reports whether action.yml, slim/action.yml and
// cmd/gradegate/VERSION under root agree: both build from source, or both
// run the images published as VERSION and VERSION-slim.
func checkActionImages(root string) error {
	full, err := imageLine(filepath.Join(root, "action.yml"))
	if err != nil {
		return err
	}
	slim, err := imageLine(filepath.Join(root, "slim", "action.yml"))
	if err != nil {
		return err
	}
	if full == sourceImages[0] && slim == sourceImages[1] {
		return nil
	}
	v, err := os.ReadFile(filepath.Join(root, "cmd", "gradegate", "VERSION"))
	if err != nil {
		return err
	}
	version := strings.TrimSpace(string(v))
	fm, sm := pinnedImage.FindStringSubmatch(full), pinnedImage.FindStringSubmatch(slim)
	switch {
	case fm == nil || sm == nil:
		return fmt.Errorf("images %q and %q: want %q and %q (source), or both %s@sha256:… # %s:<version>", full, slim, sourceImages[0], sourceImages[1], imageRepository, imageRepository)
	case fm[2] != version || sm[2] != version+"-slim":
		return fmt.Errorf("action.yml runs %s:%s and slim/action.yml %s:%s, but VERSION says %s", imageRepository, fm[2], imageRepository, sm[2], version)
	case fm[1] == sm[1]:
		return fmt.Errorf("action.yml and slim/action.yml run the same image %s", fm[1])
	}
	return nil
}

// TestActionImage holds action.yml, slim/action.yml and VERSION in step.
func TestActionImage(t *testing.T) {
	if err := checkActionImages(repoRoot); err != nil {
		t.Error(err)
	}
}

// TestSlimActionMatches checks that the slim action path takes and gives
// exactly what the full one does.
func TestSlimActionMatches(t *testing.T) {
	full := readActionMetadata(t)
	slim := readActionFile(t, filepath.Join(repoRoot, "slim", "action.yml"))
	if diff := cmp.Diff(full.Inputs, slim.Inputs); diff != "" {
		t.Errorf("slim/action.yml inputs (-action.yml +slim):\n%s", diff)
	}
	if diff := cmp.Diff(full.Outputs, slim.Outputs); diff != "" {
		t.Errorf("slim/action.yml outputs (-action.yml +slim):\n%s", diff)
	}
	if diff := cmp.Diff(full.Runs["using"], slim.Runs["using"]); diff != "" || full.Branding != slim.Branding {
		t.Errorf("slim/action.yml runs or branding differ: %v %v / %v %v", full.Runs, full.Branding, slim.Runs, slim.Branding)
	}
}

// TestReleasePinsTheActionImages is a dry run of the release step that
// writes the published digests into the action files: on copies of them,
// with made-up digests, the result must pass checkActionImages, and a
// VERSION that differs from the tag must not.
func TestReleasePinsTheActionImages(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	root := t.TempDir()
	for _, f := range []string{"action.yml", "slim/action.yml", "cmd/gradegate/VERSION"} {
		data, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	version := strings.TrimSpace(embeddedVersion)
	full, slim := "sha256:"+strings.Repeat("a", 64), "sha256:"+strings.Repeat("b", 64)
	script := filepath.Join(repoRoot, ".github", "release", "pin-action-image.sh")
	if out, err := exec.Command(bash, script, version, full, slim, root).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	if err := checkActionImages(root); err != nil {
		t.Errorf("after pinning: %v", err)
	}
	got, err := imageLine(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "docker://" + imageRepository + "@" + full + " # " + imageRepository + ":" + version; got != want {
		t.Errorf("action.yml image: %q, want %q", got, want)
	}
	m := readActionFile(t, filepath.Join(root, "action.yml"))
	if m.Runs["image"] != "docker://"+imageRepository+"@"+full {
		t.Errorf("action.yml runs.image as the runner reads it: %v", m.Runs["image"])
	}
	if err := os.WriteFile(filepath.Join(root, "cmd/gradegate/VERSION"), []byte("v9.9.9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkActionImages(root); err == nil {
		t.Error("checkActionImages accepted images tagged " + version + " with VERSION v9.9.9")
	}
	// A digest that is not one, and the same image twice, are refused.
	for _, args := range [][]string{{version, "sha256:abc", slim}, {version, full, full}, {"1.2.3", full, slim}} {
		if out, err := exec.Command(bash, append([]string{script}, append(args, root)...)...).CombinedOutput(); err == nil {
			t.Errorf("pin-action-image.sh %v succeeded:\n%s", args, out)
		}
	}
}

// TestReleaseBinaries is a dry run of the release step that builds the
// binaries, for this machine's target only: the binary says the release's
// version and commit, and SHA256SUMS holds its digest.
func TestReleaseBinaries(t *testing.T) {
	// A build of its own, into a folder of its own: it overlaps the other
	// parallel tests.
	t.Parallel()
	if testing.Short() {
		t.Skip("builds gradegate from scratch")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	if _, err := exec.LookPath("sha256sum"); err != nil {
		t.Skip("no sha256sum")
	}
	out := t.TempDir()
	const version, commit = "v9.8.7", "0123456789abcdef0123456789abcdef01234567"
	cmd := exec.Command(bash, filepath.Join(".github", "release", "build-binaries.sh"), version, commit, out)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "TARGETS="+runtime.GOOS+"/"+runtime.GOARCH)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build-binaries.sh: %v\n%s", err, b)
	}
	name := "gradegate-" + version + "-" + runtime.GOOS + "-" + runtime.GOARCH
	bin := filepath.Join(out, name)
	stdout, err := exec.Command(bin, "version", "--format", "json").Output()
	if err != nil {
		t.Fatalf("%s version: %v", bin, err)
	}
	var got buildinfo.Version
	if err := json.Unmarshal(stdout, &got); err != nil {
		t.Fatal(err)
	}
	if got.Version != version || got.Commit != commit || got.Source != "release" {
		t.Errorf("the release binary says %+v, want version %s, commit %s, source release", got, version, commit)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%x  %s\n", sha256.Sum256(data), name); string(sums) != want {
		t.Errorf("SHA256SUMS:\n%s\nwant:\n%s", sums, want)
	}
}

// publishedUse is a step that runs the published Action: gradegate/gradegate
// or gradegate/gradegate/slim, at a ref, with what follows on the line.
var publishedUse = regexp.MustCompile(`uses: gradegate/gradegate(/slim)?@(\S+)(.*)$`)

// TestWorkflowsUseWhatTheReleasePublishes checks every use of the published
// Action in the example workflows and the README against what the release
// workflow publishes for cmd/gradegate/VERSION: the moving major tag (v0
// for v0.1.0), or a release commit pinned by its full SHA with the version
// in a comment. Third-party actions are pinned by SHA too.
func TestWorkflowsUseWhatTheReleasePublishes(t *testing.T) {
	version := strings.TrimSpace(embeddedVersion)
	major, _, _ := strings.Cut(version, ".")
	sha := regexp.MustCompile(`^[0-9a-f]{40}$`)
	pinnedComment := regexp.MustCompile(`^ # v\d+\.\d+\.\d+`)
	thirdParty := regexp.MustCompile(`uses: ([\w.-]+/[\w./-]+)@(\S+)(.*)$`)
	uses := 0
	for _, wf := range workflowsToLint(t) {
		if strings.Contains(wf.name, ".github/workflows") {
			continue // the repository's own workflows use ./
		}
		for i, line := range strings.Split(string(wf.content), "\n") {
			if m := publishedUse.FindStringSubmatch(line); m != nil {
				uses++
				switch ref, rest := m[2], m[3]; {
				case ref == major:
				case sha.MatchString(ref) && pinnedComment.MatchString(rest):
				default:
					t.Errorf("%s:%d: uses gradegate/gradegate@%s: want @%s (the major tag the release of %s moves) or @<release commit SHA> # vX.Y.Z", wf.name, i+1, ref, major, version)
				}
				continue
			}
			if m := thirdParty.FindStringSubmatch(line); m != nil && !sha.MatchString(m[2]) {
				t.Errorf("%s:%d: %s@%s: pin third-party actions by commit SHA, the version in a comment", wf.name, i+1, m[1], m[2])
			}
		}
	}
	if uses == 0 {
		t.Error("no example uses the published Action")
	}
}
