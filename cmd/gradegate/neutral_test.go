package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/checkrun/checkruntest"
)

// runnerSpaces is every character .NET's Char.IsWhiteSpace accepts, which
// GitHub's runner trims from a log line before it looks for "::" (but the
// newline, which ends the line).
const runnerSpaces = "\t\v\f\r \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"

// hostile is text a pull request writes, for each place it can: a workflow
// command behind each whitespace character, a legacy one, and what GitHub
// would turn into a ping, a link or an emoji.
func hostile(tag string) string {
	var b strings.Builder
	b.WriteString(tag + " @octocat @acme/security-team #12 GH-7 acme/evals#3 https://evil.example www.evil.example :smile: :100:")
	for _, r := range runnerSpaces {
		b.WriteString("\n" + string(r) + "::warning::PWNED")
	}
	b.WriteString("\n##[add-mask]PWNED\n")
	return b.String()
}

// yamlString writes s as a double-quoted YAML (and Python) scalar, every
// character past ASCII escaped: YAML reads a raw U+0085 as a line break.
func yamlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r < 0x20 || r > 0x7e:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// hostileSuite writes a suite whose manifest name, slice, family, case ids,
// canary names and grader messages are all hostile, and pins it.
func hostileSuite(t *testing.T, grader string) string {
	t.Helper()
	dir := t.TempDir()
	slice := hostile("slice")
	manifest := `version: 1
name: ` + yamlString(hostile("name")) + `
dataset: {path: cases.jsonl, sha256: "PIN"}
grader: {type: python, source: grader.py, sha256: "PIN", image_tag: "2025-05-08"}
canaries:
  - {name: ` + yamlString(hostile("canary-pos")) + `, sample: {output_text: "yes"}, item: {expected: "yes"}, expect: 1.0}
  - {name: ` + yamlString(hostile("canary-neg")) + `, sample: {output_text: "no"}, item: {expected: "yes"}, expect: 0.0}
gate:
  slices:
    ` + yamlString(slice) + `: {mandatory: true}
`
	var cases strings.Builder
	for i, out := range []string{"yes", "no", "raise"} {
		item := map[string]any{"case_id": hostile("id" + string(rune('a'+i))), "slice": slice, "family": hostile("family"), "expected": "yes", "note": hostile("note")}
		line, _ := json.Marshal(map[string]any{"item": item, "sample": map[string]string{"output_text": out}})
		cases.Write(append(line, '\n'))
	}
	for name, data := range map[string]string{"gradegate.yaml": manifest, "cases.jsonl": cases.String(), "grader.py": grader} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "gradegate.yaml")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"pin", path}, os.Getenv, &out, &errb); code != exitPass {
		t.Fatalf("pin: exit %d: %s", code, errb.String())
	}
	return path
}

const hostileGrader = `MSG = ` + "%q" + `

def grade(sample, item):
    if sample["output_text"] == "raise":
        raise ValueError(MSG)
    return 1.0 if sample["output_text"] == item["expected"] else 0.0
`

// checkLog fails when a line of a log would be read by GitHub's runner as a
// command that the pull request wrote.
func checkLog(t *testing.T, where, log string) {
	t.Helper()
	for i, line := range strings.Split(log, "\n") {
		trimmed := strings.TrimLeft(line, runnerSpaces)
		if strings.HasPrefix(trimmed, "::") && (trimmed != line || strings.Contains(strings.SplitN(trimmed[2:], "::", 2)[0], "PWNED") || strings.HasPrefix(trimmed, "::warning::PWNED")) {
			t.Errorf("%s: line %d is a workflow command the pull request wrote: %.120q", where, i+1, line)
		}
		if strings.Contains(line, "##[") {
			t.Errorf("%s: line %d holds a legacy workflow command: %.120q", where, i+1, line)
		}
	}
}

// liveGitHub finds what GitHub would link or render in markdown or plain
// text as it reads it (backslash escapes undone): a mention, a team
// mention, an issue reference, a URL, a www. link, an emoji code.
var liveGitHub = regexp.MustCompile(`(?i)@[a-z0-9]|#[0-9]|\bgh-[0-9]|[a-z]://|\bwww\.|:[a-z0-9_+-]*[a-z_+-][a-z0-9_+-]*:|:100:`)

// ownLinks are the links gradegate itself writes (the workflow run, the
// check run): markdown link targets, which escaped text cannot open.
var ownLinks = regexp.MustCompile(`\]\(https://github\.(com|example)/[^)\s]*\)|https://github\.com/octo-org/evals/actions/runs/1234|https://github\.example/o/r/runs/\d+`)

func checkInert(t *testing.T, where, text string) {
	t.Helper()
	plain := ownLinks.ReplaceAllString(text, "")
	if !strings.Contains(where, "title") && !strings.Contains(where, "name") && !strings.Contains(where, "annotation") {
		// Markdown: as GitHub reads it, the backslash escapes undone.
		plain = regexp.MustCompile(`\\(.)`).ReplaceAllString(plain, "$1")
	}
	if m := liveGitHub.FindStringIndex(plain); m != nil {
		t.Errorf("%s: GitHub would link or render %q: …%.100q", where, plain[m[0]:m[1]], plain[max(0, m[0]-40):])
	}
}

// As the Action, on a pull request with a token and the comment input, a
// suite whose every string is hostile puts no workflow command in the log
// and no mention, reference, link or emoji in the step summary, the check
// run (name, title, summary, annotations) or the pull request comment.
func TestActionNeutralisesHostileSuite(t *testing.T) {
	manifest := hostileSuite(t, strings.Replace(hostileGrader, "%q", yamlString(hostile("grader-message")), 1))
	api := checkruntest.New(t)
	e := newActionEnv(t, api, map[string]string{"MANIFEST": manifest, "GITHUB-TOKEN": testToken, "COMMENT": "true"})
	// The suite is the repository: annotations point into it.
	e.vars["GITHUB_WORKSPACE"] = filepath.Dir(manifest)
	code, stdout, stderr := e.run(t)
	if code != exitHold {
		t.Fatalf("exit %d, want a hold", code)
	}
	checkLog(t, "stdout", stdout)
	checkLog(t, "stderr", stderr)
	checkInert(t, "step summary", e.stepSummary(t))
	reqs := api.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d Checks API requests", len(reqs))
	}
	checkInert(t, "check run name", reqs[0].Body.Name)
	annotations := 0
	for _, r := range reqs {
		out := r.Body.Output
		if out == nil {
			continue
		}
		checkInert(t, "check run title", out.GetTitle())
		checkInert(t, "check run summary", out.GetSummary())
		checkInert(t, "check run text", out.GetText())
		for _, a := range out.Annotations {
			annotations++
			checkInert(t, "annotation title", a.GetTitle())
			checkInert(t, "annotation message", a.GetMessage())
		}
	}
	if annotations == 0 {
		t.Error("no annotations to check")
	}
	cs := api.Comments()
	if len(cs) != 1 {
		t.Fatalf("%d comments, want 1", len(cs))
	}
	checkInert(t, "pull request comment", cs[0].Body)
	// The --format json of a `run:` step: the same value, no command.
	var out, errb bytes.Buffer
	run(context.Background(), []string{"run", manifest, "--format", "json", "--workers", "1"}, e.getenv, &out, &errb)
	checkLog(t, "json stdout", out.String())
	var doc map[string]any
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc["manifest"].(map[string]any)["name"] != hostile("name") {
		t.Errorf("the JSON on stdout does not hold the manifest's name as written: %v", err)
	}
}

// A grader whose load fails with hostile text, and a manifest path value
// with hostile lines, reach the log only neutralised, in the Action and as
// a `run:` step.
func TestLogNeutralisesLoadFailureAndPaths(t *testing.T) {
	loadFails := hostileSuite(t, "raise RuntimeError("+yamlString(hostile("load-time"))+")\n")
	e := newActionEnv(t, nil, map[string]string{"MANIFEST": loadFails})
	_, stdout, stderr := e.run(t)
	checkLog(t, "action stdout", stdout)
	checkLog(t, "action stderr", stderr)
	if !strings.Contains(stdout+stderr, "load-time") {
		t.Error("the load failure is not reported")
	}

	badPath := hostileSuite(t, "def grade(sample, item):\n    return 1.0\n")
	data, err := os.ReadFile(badPath)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte("path: cases.jsonl"), []byte("path: "+yamlString("missing"+hostile("path"))), 1)
	if err := os.WriteFile(badPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"validate", "run"} {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{cmd, badPath}, e.getenv, &out, &errb)
		if code != exitInput {
			t.Errorf("%s: exit %d, want %d", cmd, code, exitInput)
		}
		checkLog(t, cmd+" stdout", out.String())
		checkLog(t, cmd+" stderr", errb.String())
		if !strings.Contains(errb.String(), "missingpath") {
			t.Errorf("%s: stderr does not name the path: %s", cmd, errb.String())
		}
	}
}
