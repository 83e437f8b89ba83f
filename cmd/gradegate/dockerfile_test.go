package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// imageTag20250508 is the Python package set of grader image tag 2025-05-08
// (SPEC section 10), which the action's image must install exactly.
var imageTag20250508 = map[string]string{
	"numpy":        "2.2.4",
	"scipy":        "1.15.2",
	"sympy":        "1.13.3",
	"pandas":       "2.2.3",
	"rapidfuzz":    "3.10.1",
	"scikit-learn": "1.6.1",
	"rouge-score":  "0.1.2",
	"deepdiff":     "8.4.2",
	"jsonschema":   "4.23.0",
	"pydantic":     "2.10.6",
	"pyyaml":       "6.0.2",
	"nltk":         "3.9.1",
	"sqlparse":     "0.5.3",
	"rdkit":        "2024.9.6",
	"scikit-bio":   "0.6.3",
	"ast-grep-py":  "0.36.2",
}

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

func TestDockerfile(t *testing.T) {
	ins := parseDockerfile(t, "../../Dockerfile")
	var froms []string
	last := 0
	for _, in := range ins {
		if in.cmd == "FROM" {
			froms = append(froms, in.args)
			last = in.stage
		}
		if in.cmd == "USER" {
			// Container actions run as root; the sandbox drops graders to
			// their own uid, which needs root to begin with.
			t.Errorf("USER %s: the image must run gradegate as root", in.args)
		}
	}
	if diff := cmp.Diff([]string{"golang:1.26 AS build", "python:3.12-slim"}, froms); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}

	var build, entrypoint, pip, nltk, copyBinary string
	for _, in := range ins {
		switch {
		case in.cmd == "RUN" && strings.Contains(in.args, "go build"):
			build = in.args
		case in.cmd == "ENTRYPOINT" && in.stage == last:
			entrypoint = in.args
		case in.cmd == "RUN" && strings.HasPrefix(in.args, "pip install"):
			if pip != "" {
				t.Error("more than one pip install: keep the image tag's set in one place")
			}
			pip = in.args
		case in.cmd == "RUN" && strings.Contains(in.args, "nltk.downloader"):
			nltk = in.args
		case in.cmd == "COPY" && in.stage == last && strings.HasPrefix(in.args, "--from=build"):
			copyBinary = in.args
		}
	}

	for _, want := range []string{"CGO_ENABLED=0 go build", "-trimpath", `-ldflags "-s -w -X main.version=${VERSION}"`, "./cmd/gradegate"} {
		if !strings.Contains(build, want) {
			t.Errorf("build step %q lacks %q", build, want)
		}
	}
	if entrypoint != `["/usr/local/bin/gradegate"]` {
		t.Errorf("ENTRYPOINT %s, want the gradegate binary in exec form", entrypoint)
	}
	if !strings.HasSuffix(copyBinary, " /usr/local/bin/gradegate") {
		t.Errorf("COPY %q does not install the binary at /usr/local/bin/gradegate", copyBinary)
	}

	if !strings.Contains(pip, "--no-cache-dir") {
		t.Error("pip install without --no-cache-dir")
	}
	got := map[string]string{}
	for _, arg := range strings.Fields(strings.TrimPrefix(pip, "pip install")) {
		if strings.HasPrefix(arg, "-") {
			continue
		}
		name, ver, ok := strings.Cut(arg, "==")
		if !ok || !regexp.MustCompile(`^\d+(\.\d+)*$`).MatchString(ver) {
			t.Errorf("package %q is not pinned exactly (name==version)", arg)
			continue
		}
		got[strings.ToLower(name)] = ver
	}
	if diff := cmp.Diff(imageTag20250508, got); diff != "" {
		t.Errorf("pip packages differ from image tag 2025-05-08 (-want +got):\n%s", diff)
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
