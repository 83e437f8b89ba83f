package main

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gradegate/gradegate/gate/lint"
)

// Paths the image build reads, relative to the repository root.
const (
	versionFile  = "cmd/gradegate/VERSION"
	requirements = "cmd/gradegate/image/requirements-2025-05-08.txt"
)

// sdistOnly are the image packages published only as source distributions,
// which the image must build itself: rouge-score 0.1.2 (pure Python).
var sdistOnly = []string{"rouge-score"}

// The Dockerfile stamps the version with -X main.version; this fails to
// compile if that variable goes away or stops being a string.
var _ string = version

// instruction is one Dockerfile instruction with continuation lines joined.
type instruction struct {
	stage int // 0-based index of the FROM it belongs to
	cmd   string
	args  string
}

func parseDockerfile(t *testing.T, path string) []instruction {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []instruction
	stage := -1
	var cur strings.Builder
	flush := func() {
		line := strings.TrimSpace(cur.String())
		cur.Reset()
		if line == "" {
			return
		}
		cmd, args, _ := strings.Cut(line, " ")
		cmd = strings.ToUpper(cmd)
		if cmd == "FROM" {
			stage++
		}
		out = append(out, instruction{stage: stage, cmd: cmd, args: strings.Join(strings.Fields(args), " ")})
	}
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") {
			continue
		}
		if strings.HasSuffix(trimmed, "\\") {
			cur.WriteString(strings.TrimSuffix(trimmed, "\\") + " ")
			continue
		}
		cur.WriteString(trimmed)
		flush()
	}
	flush()
	return out
}

// Base images are pinned by a sha256 digest beside the tag it was resolved
// from; the build stage runs on the builder's platform and cross-compiles.
var wantStages = []*regexp.Regexp{
	regexp.MustCompile(`^--platform=\$BUILDPLATFORM golang:1\.26@sha256:[0-9a-f]{64} AS build$`),
	regexp.MustCompile(`^python:3\.12-slim@sha256:[0-9a-f]{64} AS slim$`),
	regexp.MustCompile(`^slim AS full$`),
}

// Stages of the Dockerfile, by index.
const (
	stageBuild = iota
	stageSlim
	stageFull
)

func TestDockerfile(t *testing.T) {
	ins := parseDockerfile(t, "../../Dockerfile")
	var froms []string
	for _, in := range ins {
		if in.cmd == "FROM" {
			froms = append(froms, in.args)
		}
		if in.cmd == "USER" {
			// Container actions run as root; the sandbox drops graders to
			// their own uid, which needs root to begin with.
			t.Errorf("USER %s: the image must run gradegate as root", in.args)
		}
	}
	if len(froms) != len(wantStages) {
		t.Fatalf("stages %q, want %d: build, slim and full (the last, which action.yml builds)", froms, len(wantStages))
	}
	for i, re := range wantStages {
		if !re.MatchString(froms[i]) {
			t.Errorf("stage %d is FROM %s, want it to match %s", i, froms[i], re)
		}
	}

	var build, pip, nltk, copyBinary string
	entrypoints := map[int]string{}
	images := map[int]string{}
	for _, in := range ins {
		switch {
		case in.cmd == "RUN" && strings.Contains(in.args, "go build"):
			build = in.args
		case in.cmd == "ENTRYPOINT":
			entrypoints[in.stage] = in.args
		case in.cmd == "ENV" && strings.Contains(in.args, imageEnv+"="):
			for _, kv := range strings.Fields(in.args) {
				if v, ok := strings.CutPrefix(kv, imageEnv+"="); ok {
					images[in.stage] = v
				}
			}
		case in.cmd == "RUN" && strings.HasPrefix(in.args, "pip install"):
			if pip != "" || in.stage != stageFull {
				t.Error("one pip install, in the full stage: keep the image tag's set in one place, and the slim image bare")
			}
			pip = in.args
		case in.cmd == "RUN" && strings.Contains(in.args, "nltk.downloader"):
			nltk = in.args
			if in.stage != stageFull {
				t.Error("the NLTK data belongs to the full image only")
			}
		case in.cmd == "COPY" && strings.HasPrefix(in.args, "--from=build"):
			if in.stage != stageSlim {
				t.Errorf("COPY %s in stage %d: the binary goes into the slim stage, which full builds on", in.args, in.stage)
			}
			copyBinary = in.args
		}
	}

	// The images say which they are, with the names lint checks imports
	// against.
	if diff := cmp.Diff(map[int]string{stageSlim: string(lint.ImageSlim), stageFull: string(lint.ImageFull)}, images); diff != "" {
		t.Errorf("ENV %s per stage (-want +got):\n%s", imageEnv, diff)
	}

	// The version is read from a file in the build context: `image:
	// Dockerfile` cannot pass a build argument, so ARG VERSION would leave
	// every action result without the release's version.
	for _, want := range []string{"CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build", "-trimpath", `-ldflags "-s -w -X main.version=$(cat ` + versionFile + `)"`, "./cmd/gradegate"} {
		if !strings.Contains(build, want) {
			t.Errorf("build step %q lacks %q", build, want)
		}
	}
	for _, in := range ins {
		// Only the platform arguments BuildKit sets itself.
		if in.cmd == "ARG" && in.args != "TARGETOS" && in.args != "TARGETARCH" {
			t.Errorf("ARG %s: the action cannot pass build arguments (runs.image: Dockerfile)", in.args)
		}
	}
	for _, stage := range []int{stageSlim, stageFull} {
		if entrypoints[stage] != `["/usr/local/bin/gradegate"]` {
			t.Errorf("stage %d: ENTRYPOINT %s, want the gradegate binary in exec form", stage, entrypoints[stage])
		}
	}
	if !strings.HasSuffix(copyBinary, " /usr/local/bin/gradegate") {
		t.Errorf("COPY %q does not install the binary at /usr/local/bin/gradegate", copyBinary)
	}
	last := stageFull

	// pip installs the requirements file and nothing else, from wheels
	// only but for the packages that have none.
	pipCmd, _, _ := strings.Cut(strings.TrimPrefix(pip, "pip install"), "&&")
	flags := strings.Fields(pipCmd)
	for _, want := range []string{"--no-cache-dir", "--only-binary=:all:", "--no-binary=" + strings.Join(sdistOnly, ",")} {
		if !slices.Contains(flags, want) {
			t.Errorf("pip install %q lacks %s", pip, want)
		}
	}
	reqIndex := slices.Index(flags, "-r")
	if reqIndex < 0 || reqIndex+1 == len(flags) {
		t.Fatalf("pip install %q does not install a requirements file (-r FILE)", pip)
	}
	reqInImage := flags[reqIndex+1]
	for i, f := range flags {
		if !strings.HasPrefix(f, "-") && i != reqIndex+1 {
			t.Errorf("pip install names %q on the command line; the requirements file is the one list", f)
		}
	}
	copied := false
	for _, in := range ins {
		if in.cmd == "COPY" && in.stage == last && in.args == requirements+" "+reqInImage {
			copied = true
		}
	}
	if !copied {
		t.Errorf("no COPY %s %s in the runtime stage", requirements, reqInImage)
	}

	corpora := strings.Fields(nltk)
	if !slices.Contains(corpora, "/usr/local/share/nltk_data") {
		t.Errorf("NLTK data not in /usr/local/share/nltk_data: %q", nltk)
	}
	for _, c := range []string{"punkt", "stopwords", "wordnet", "omw-1.4", "names"} {
		if !slices.Contains(corpora, c) {
			t.Errorf("NLTK corpus %s is not downloaded at build time", c)
		}
	}
}

func TestDockerignoreKeepsTheBuildInputs(t *testing.T) {
	data, err := os.ReadFile("../../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch line {
		case "go.mod", "go.sum", "cmd", "gate", "manifest", "canary", "*", "**/*.go", "**/*.py", "*.py":
			t.Errorf(".dockerignore drops %q, which the build needs", line)
		}
	}
}

func TestImageRequirementsMatchTheImageTag(t *testing.T) {
	data, err := os.ReadFile("../../" + requirements)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, ver, ok := strings.Cut(line, "==")
		if !ok || !regexp.MustCompile(`^\d+(\.\d+)*$`).MatchString(ver) {
			t.Errorf("%s:%d: %q is not pinned exactly (name==version)", requirements, i+1, line)
			continue
		}
		if _, dup := got[strings.ToLower(name)]; dup {
			t.Errorf("%s:%d: %s listed twice", requirements, i+1, name)
		}
		got[strings.ToLower(name)] = ver
	}
	pkgs, ok := lint.ImagePackages("2025-05-08")
	if !ok {
		t.Fatal("lint does not know image tag 2025-05-08")
	}
	want := map[string]string{}
	for _, p := range pkgs {
		want[strings.ToLower(p.Dist)] = p.Version
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s differs from image tag 2025-05-08 (-want +got):\n%s", requirements, diff)
	}
	for _, name := range sdistOnly {
		if _, ok := want[name]; !ok {
			t.Errorf("%s may be built from source but is not an image package", name)
		}
	}
}

func TestVersionFile(t *testing.T) {
	data, err := os.ReadFile("../../" + versionFile)
	if err != nil {
		t.Fatal(err)
	}
	// One line, as $(cat FILE) in -ldflags needs: no spaces or quotes.
	v := strings.TrimSuffix(string(data), "\n")
	if !regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?$`).MatchString(v) {
		t.Errorf("%s holds %q, want one line with a version like v1.2.3", versionFile, data)
	}
}

// dockerignored reports whether .dockerignore's patterns leave file (a path
// relative to the build context) out, as Docker reads them: patterns are
// anchored at the context root, "**/" matches any number of directories, a
// pattern that matches a directory leaves out everything under it, "!"
// takes a path back, and the last matching pattern wins.
func dockerignored(patterns []string, file string) bool {
	ignored := false
	for _, p := range patterns {
		keep := strings.HasPrefix(p, "!")
		p = strings.Trim(strings.TrimPrefix(p, "!"), "/")
		if matchesDockerPattern(p, file) {
			ignored = !keep
		}
	}
	return ignored
}

func matchesDockerPattern(pattern, file string) bool {
	parts := strings.Split(file, "/")
	// file itself or any directory above it.
	for n := len(parts); n > 0; n-- {
		name := strings.Join(parts[:n], "/")
		if rest, ok := strings.CutPrefix(pattern, "**/"); ok {
			segs := strings.Split(name, "/")
			for i := range segs {
				if m, _ := path.Match(rest, strings.Join(segs[i:], "/")); m {
					return true
				}
			}
			continue
		}
		if m, _ := path.Match(pattern, name); m {
			return true
		}
	}
	return false
}

func TestDockerignoreLeavesOutBuildOutputs(t *testing.T) {
	data, err := os.ReadFile("../../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			patterns = append(patterns, line)
		}
	}
	for _, f := range []string{"gradegate", "gradegate.test", ".git/HEAD", "cmd/gradegate/testdata/script/usage.txtar", "gate/run_test.go", "README.md", "Dockerfile", "slim.Dockerfile"} {
		if !dockerignored(patterns, f) {
			t.Errorf(".dockerignore keeps %s in the build context", f)
		}
	}
	for _, f := range []string{"go.mod", "go.sum", "cmd/gradegate/main.go", versionFile, requirements, "gate/worker/worker.py", "gate/lint/lint.py", "gate/mutate/mutate.py"} {
		if dockerignored(patterns, f) {
			t.Errorf(".dockerignore leaves out %s, which the build needs", f)
		}
	}
}

// TestDockerfileBuildStampsTheVersion runs the Dockerfile's build command
// as the build stage does (from the context root, with sh) and checks that
// the binary reports the version file's version rather than "dev".
func TestDockerfileBuildStampsTheVersion(t *testing.T) {
	// A build of its own, into a folder of its own: it overlaps the other
	// parallel tests.
	t.Parallel()
	if testing.Short() {
		t.Skip("builds gradegate from scratch (CGO_ENABLED=0, -trimpath)")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	var build string
	for _, in := range parseDockerfile(t, "../../Dockerfile") {
		if in.cmd == "RUN" && strings.Contains(in.args, "go build") {
			build = in.args
		}
	}
	bin := filepath.Join(t.TempDir(), "gradegate")
	if !strings.Contains(build, "-o /out/gradegate") {
		t.Fatalf("build step %q does not write /out/gradegate", build)
	}
	cmd := exec.Command(sh, "-c", strings.Replace(build, "-o /out/gradegate", "-o "+bin, 1))
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", build, err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../" + versionFile)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != "gradegate "+strings.TrimSpace(string(want)) {
		t.Errorf("gradegate version printed %q, want the version file's %q", got, want)
	}
}

// TestDockerfileSlim checks that slim.Dockerfile, which the slim action path
// builds on a source checkout, is the build and slim stages of Dockerfile.
func TestDockerfileSlim(t *testing.T) {
	var want []instruction
	for _, in := range parseDockerfile(t, "../../Dockerfile") {
		if in.stage <= stageSlim {
			want = append(want, in)
		}
	}
	got := parseDockerfile(t, "../../slim.Dockerfile")
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(instruction{})); diff != "" {
		t.Errorf("slim.Dockerfile is not the first two stages of Dockerfile (-Dockerfile +slim.Dockerfile):\n%s", diff)
	}
}
