//go:build linux

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/shard"
)

// badSuite is a copy of the example suite that a bad-input case may spoil.
type badSuite struct {
	t   *testing.T
	dir string
}

func newBadSuite(t *testing.T) *badSuite {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "suite")
	if err := os.CopyFS(dir, os.DirFS("../../testdata/examples/order-summary")); err != nil {
		t.Fatal(err)
	}
	return &badSuite{t: t, dir: dir}
}

func (s *badSuite) path(name string) string { return filepath.Join(s.dir, name) }

func (s *badSuite) read(name string) string {
	b, err := os.ReadFile(s.path(name))
	if err != nil {
		s.t.Fatal(err)
	}
	return string(b)
}

func (s *badSuite) write(name, data string) {
	if err := os.WriteFile(s.path(name), []byte(data), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// edit rewrites the manifest.
func (s *badSuite) edit(old, new string) {
	m := s.read("gradegate.yaml")
	if !strings.Contains(m, old) {
		s.t.Fatalf("the manifest has no %q", old)
	}
	s.write("gradegate.yaml", strings.Replace(m, old, new, 1))
}

// devZero replaces a file of the suite with a symlink to /dev/zero.
func (s *badSuite) devZero(name string) {
	os.Remove(s.path(name))
	if err := os.Symlink("/dev/zero", s.path(name)); err != nil {
		s.t.Fatal(err)
	}
}

// fifo replaces a file of the suite with a FIFO no one writes to.
func (s *badSuite) fifo(name string) {
	os.Remove(s.path(name))
	if err := syscall.Mkfifo(s.path(name), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// canariesToFile moves the inline canaries to canaries.jsonl, with
// canaries: {path: canaries.jsonl} in the manifest.
func (s *badSuite) canariesToFile() {
	m := s.read("gradegate.yaml")
	var doc struct {
		Canaries []map[string]any `yaml:"canaries"`
	}
	if err := yaml.Unmarshal([]byte(m), &doc); err != nil {
		s.t.Fatal(err)
	}
	var lines []string
	for _, c := range doc.Canaries {
		b, err := json.Marshal(c)
		if err != nil {
			s.t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	s.write("canaries.jsonl", strings.Join(lines, "\n")+"\n")
	start, end := strings.Index(m, "\ncanaries:\n"), strings.Index(m, "\ngate:\n")
	s.write("gradegate.yaml", m[:start]+"\ncanaries: {path: canaries.jsonl}\n"+m[end:])
}

// shard writes a results file of one shard of 1 for the suite: 36 intended
// cases, the given rows, every other case omitted as not in the dataset.
func (s *badSuite) shard(name string, rows ...results.CaseResult) string {
	res := results.Results{
		Schema: results.ResultsSchema, Verdict: results.VerdictHold,
		Manifest: results.ManifestRef{Name: "order-summary"},
		Shard:    shard.Shard{Index: 1, Count: 1},
		Cases:    rows,
		Counts:   results.Counts{Intended: 36, Omitted: 36},
	}
	for _, r := range rows {
		switch r.Status {
		case results.StatusPass:
			res.Counts.Passed++
			res.Counts.Graded++
			res.Counts.Omitted--
		case results.StatusFail:
			res.Counts.Failed++
			res.Counts.Graded++
			res.Counts.Omitted--
		}
	}
	b, err := json.Marshal(res)
	if err != nil {
		s.t.Fatal(err)
	}
	s.write(name, string(b))
	return s.path(name)
}

// sha256 pins a file of the suite at its current digest.
func (s *badSuite) pin(key, file string) {
	sum := sha256.Sum256([]byte(s.read(file)))
	re := regexp.MustCompile(`(?m)^(` + key + `:\n(?:  .*\n)*?  sha256: )"[0-9a-f]{64}"`)
	m := s.read("gradegate.yaml")
	if !re.MatchString(m) {
		s.t.Fatalf("no %s.sha256 in the manifest", key)
	}
	s.write("gradegate.yaml", re.ReplaceAllString(m, `${1}"`+hex.EncodeToString(sum[:])+`"`))
}

func bomb(levels int) string {
	var b strings.Builder
	b.WriteString("  - name: bomb\n    expect: 1.0\n    item: {expected_total_cents: 1}\n    sample:\n")
	b.WriteString("      l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < levels; i++ {
		fmt.Fprintf(&b, "      l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 9), ", "))
	}
	return b.String()
}

// TestBadInput is the bad-input suite: each row is an input a pull request
// can commit, and what gradegate must do with it: the exit code, and a part
// of what it says (on stderr for input errors, and on stdout or stderr
// otherwise). No row may hang, grow without bound, or read as a pass.
func TestBadInput(t *testing.T) {
	long := strings.Repeat("x", 900_000)
	tests := []struct {
		name string
		// setup spoils the suite and returns the command line; "{}" in
		// it stands for the suite's folder.
		setup func(s *badSuite) []string
		code  int
		want  string
		// check, when set, looks at stdout and stderr further.
		check func(t *testing.T, stdout, stderr string)
	}{
		{
			name: "alias bomb in a canary sample",
			setup: func(s *badSuite) []string {
				s.edit("\ngate:\n", "\n"+bomb(9)+"gate:\n")
				return []string{"validate", "{}/gradegate.yaml"}
			},
			code: exitInput,
			want: "aliases expand the document past",
		},
		{
			name: "manifest is a symlink to the zero device",
			setup: func(s *badSuite) []string {
				s.devZero("gradegate.yaml")
				return []string{"validate", "{}/gradegate.yaml"}
			},
			code: exitInput,
			want: "is a character device, not a regular file",
		},
		{
			name:  "manifest is a FIFO",
			setup: func(s *badSuite) []string { s.fifo("gradegate.yaml"); return []string{"validate", "{}/gradegate.yaml"} },
			code:  exitInput,
			want:  "is a FIFO (named pipe), not a regular file",
		},
		{
			name: "manifest over its size limit",
			setup: func(s *badSuite) []string {
				s.write("gradegate.yaml", s.read("gradegate.yaml")+"# "+strings.Repeat("x", 2<<20)+"\n")
				return []string{"validate", "{}/gradegate.yaml"}
			},
			code: exitInput,
			want: "input_too_large",
		},
		{
			name:  "dataset is a symlink to the zero device",
			setup: func(s *badSuite) []string { s.devZero("cases.jsonl"); return []string{"validate", "{}/gradegate.yaml"} },
			code:  exitInput,
			want:  "is a character device, not a regular file",
		},
		{
			name: "dataset over a lowered limit",
			setup: func(s *badSuite) []string {
				return []string{"validate", "{}/gradegate.yaml", "--max-input", "dataset=1KiB"}
			},
			code: exitInput,
			want: "over the 1KiB limit of a dataset file (raise it with --max-input dataset=SIZE)",
		},
		{
			name:  "samples is a FIFO",
			setup: func(s *badSuite) []string { s.fifo("samples.jsonl"); return []string{"validate", "{}/gradegate.yaml"} },
			code:  exitInput,
			want:  "is a FIFO (named pipe), not a regular file",
		},
		{
			name: "schema is a FIFO",
			setup: func(s *badSuite) []string {
				s.fifo("item.schema.json")
				return []string{"validate", "{}/gradegate.yaml"}
			},
			code: exitInput,
			want: "is a FIFO (named pipe), not a regular file",
		},
		{
			name:  "grader is a symlink to the zero device",
			setup: func(s *badSuite) []string { s.devZero("grader.py"); return []string{"validate", "{}/gradegate.yaml"} },
			code:  exitInput,
			want:  "is a character device, not a regular file",
		},
		{
			name: "rubric is a directory",
			setup: func(s *badSuite) []string {
				os.Remove(s.path("rubric.md"))
				os.Mkdir(s.path("rubric.md"), 0o755)
				return []string{"validate", "{}/gradegate.yaml"}
			},
			code: exitInput,
			want: "is a directory, not a regular file",
		},
		{
			name: "canaries file is a FIFO",
			setup: func(s *badSuite) []string {
				s.canariesToFile()
				s.fifo("canaries.jsonl")
				return []string{"validate", "{}/gradegate.yaml"}
			},
			code: exitInput,
			want: "is a FIFO (named pipe), not a regular file",
		},
		{
			name: "shard is a symlink to the zero device",
			setup: func(s *badSuite) []string {
				s.devZero("shard-1.json")
				return []string{"merge", "--manifest", "{}/gradegate.yaml", "{}/shard-1.json"}
			},
			code: exitInput,
			want: "is a character device, not a regular file",
		},
		{
			name: "canaries file with the manifest named by an absolute path",
			setup: func(s *badSuite) []string {
				s.canariesToFile()
				return []string{"validate", "{}/gradegate.yaml", "--format", "json"}
			},
			code: exitPass,
		},
		{
			name: "canaries file with the manifest named by a dot-dot path",
			setup: func(s *badSuite) []string {
				s.canariesToFile()
				s.t.Chdir(s.dir)
				return []string{"validate", "../suite/gradegate.yaml", "--format", "json"}
			},
			code: exitPass,
		},
		{
			name:  "--workers 65",
			setup: func(s *badSuite) []string { return []string{"run", "{}/gradegate.yaml", "--workers", "65"} },
			code:  exitInput,
			want:  "want a whole number between 1 and 64, got \"65\"",
		},
		{
			name: "a 900 KB grader.contract value",
			setup: func(s *badSuite) []string {
				s.edit("  contract: sample\n", "  contract: "+long+"\n")
				return []string{"validate", "{}/gradegate.yaml"}
			},
			code: exitInput,
			want: "grader.contract: must be one of sample | batch | model_backed, got \"xxx",
			check: func(t *testing.T, stdout, stderr string) {
				if len(stderr) > 4096 || !strings.Contains(stderr, "(900000 characters)") {
					t.Errorf("stderr is %d bytes and should say the value's length: %.400s", len(stderr), stderr)
				}
			},
		},
		{
			name: "a manifest key holding a newline and workflow commands",
			setup: func(s *badSuite) []string {
				s.edit("\ngate:\n", "\n\"x\\n::error file=a.py::owned\\n##[error]legacy\": 1\ngate:\n")
				return []string{"validate", "{}/gradegate.yaml"}
			},
			code: exitInput,
			want: "unknown key",
			check: func(t *testing.T, stdout, stderr string) {
				checkNoCommands(t, "stderr", stderr)
			},
		},
		{
			name: "merge: a row with status weird",
			setup: func(s *badSuite) []string {
				p := s.shard("shard-1.json", results.CaseResult{CaseID: "ship-cancel-001", Status: "weird", Line: 1})
				return []string{"merge", "--manifest", "{}/gradegate.yaml", p}
			},
			code: exitInput,
			want: "shard-1.json: cases[0].status: must be pass, fail, error or omitted, got \"weird\"",
		},
		{
			name: "merge: a pass without a score",
			setup: func(s *badSuite) []string {
				p := s.shard("shard-1.json", results.CaseResult{CaseID: "ship-cancel-001", Status: results.StatusPass, Class: grading.ClassOK, Line: 1})
				return []string{"merge", "--manifest", "{}/gradegate.yaml", p}
			},
			code: exitInput,
			want: "shard-1.json: cases[0].score: a pass row has a score, got null",
		},
		{
			name: "merge: counts that do not add up",
			setup: func(s *badSuite) []string {
				one := 1.0
				p := s.shard("shard-1.json", results.CaseResult{CaseID: "ship-cancel-001", Status: results.StatusPass, Class: grading.ClassOK, Score: &one, Line: 1})
				b := strings.Replace(s.read("shard-1.json"), `"passed":1`, `"passed":7`, 1)
				s.write("shard-1.json", b)
				return []string{"merge", "--manifest", "{}/gradegate.yaml", p}
			},
			code: exitInput,
			want: "counts.passed: is 7, but the rows with status pass make 1",
		},
		{
			name: "results file is a planted symlink",
			setup: func(s *badSuite) []string {
				s.write("event.json", "victim")
				os.Symlink("event.json", s.path("shard-1.json"))
				return []string{"run", "{}/gradegate.yaml", "--results", "{}/shard-1.json"}
			},
			code: exitInput,
			want: "is a symbolic link",
			check: func(t *testing.T, stdout, stderr string) {
				if strings.Contains(stderr, "grading") || strings.Contains(stdout, "gradegate:") {
					t.Errorf("work was done before the results path was refused:\n%s%s", stdout, stderr)
				}
			},
		},
		{
			name:  "grader raising workflow commands at import, human",
			setup: func(s *badSuite) []string { s.hostileGrader(); return []string{"canary", "{}/gradegate.yaml"} },
			code:  exitHold,
			check: checkLoadFailure,
		},
		{
			name: "grader raising workflow commands at import, markdown",
			setup: func(s *badSuite) []string {
				s.hostileGrader()
				return []string{"canary", "{}/gradegate.yaml", "--format", "markdown"}
			},
			code:  exitHold,
			check: checkLoadFailure,
		},
		{
			name: "grader raising workflow commands at import, json",
			setup: func(s *badSuite) []string {
				s.hostileGrader()
				return []string{"canary", "{}/gradegate.yaml", "--format", "json"}
			},
			code: exitHold,
			check: func(t *testing.T, stdout, stderr string) {
				checkNoCommands(t, "stderr", stderr)
				if !strings.Contains(stderr, "boom") {
					t.Errorf("stderr does not report the load failure:\n%s", stderr)
				}
			},
		},
		{
			name: "pin through a symlinked manifest",
			setup: func(s *badSuite) []string {
				os.Rename(s.path("gradegate.yaml"), s.path("real.yaml"))
				os.Symlink("real.yaml", s.path("gradegate.yaml"))
				s.write("grader.py", s.read("grader.py")+"\n# changed\n")
				return []string{"pin", "{}/gradegate.yaml"}
			},
			code: exitInput,
			want: "is a symbolic link",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newBadSuite(t)
			args := tc.setup(s)
			for i := range args {
				args[i] = strings.ReplaceAll(args[i], "{}", s.dir)
			}
			var stdout, stderr bytes.Buffer
			getenv := func(k string) string {
				return map[string]string{"NO_COLOR": "1", "GRADEGATE_PYTHON": "/usr/bin/python3", "PATH": os.Getenv("PATH")}[k]
			}
			code := run(context.Background(), args, getenv, &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstderr: %.2000s", code, tc.code, stderr.String())
			}
			if tc.want != "" && !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr does not say %q:\n%.2000s", tc.want, stderr.String())
			}
			if tc.check != nil {
				tc.check(t, stdout.String(), stderr.String())
			}
		})
	}
}

// checkNoCommands fails when out holds a line GitHub's runner would read as
// a workflow command.
func checkNoCommands(t *testing.T, where, out string) {
	t.Helper()
	for i, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " \t"), "::") || strings.Contains(line, "##[") {
			t.Errorf("%s line %d is a workflow command: %.200q", where, i+1, line)
		}
	}
}

// hostileLoad is what the hostile grader raises while its module loads.
const hostileLoad = "boom\\n::add-mask::x\\n::stop-commands::tok\\n::error file=a.py,line=1::owned\\n##[error]legacy\\n\\u202eevil\\x1b[31m"

// hostileGrader replaces the grader with one that raises workflow commands,
// a bidi control and a terminal escape while it loads, and pins it.
func (s *badSuite) hostileGrader() {
	s.write("grader.py", "raise RuntimeError(\""+hostileLoad+"\")\n\ndef grade(sample, item):\n    return 1.0\n")
	s.pin("grader", "grader.py")
}

// checkLoadFailure: the load failure is reported, and neither stream holds
// a workflow command, a bidi control or a terminal escape from the grader.
func checkLoadFailure(t *testing.T, stdout, stderr string) {
	t.Helper()
	checkNoCommands(t, "stderr", stderr)
	checkNoCommands(t, "stdout", stdout)
	if !strings.Contains(stderr, "boom") {
		t.Errorf("stderr does not report the load failure:\n%s", stderr)
	}
	if strings.ContainsAny(stdout+stderr, "\u202e\x1b") {
		t.Errorf("a bidi control or terminal escape reached the output")
	}
}

// runnerCommands replays out as GitHub's runner reads it and returns the
// workflow commands it would act on: "::name::" at the start of a line, or
// "##[" anywhere, except while ::stop-commands::TOKEN is in force (until a
// line ::TOKEN::).
func runnerCommands(out string) []string {
	var cmds []string
	token := ""
	for _, line := range strings.Split(out, "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if token != "" {
			if trimmed == "::"+token+"::" {
				token = ""
			}
			continue
		}
		if rest, ok := strings.CutPrefix(trimmed, "::stop-commands::"); ok {
			token = rest
			continue
		}
		if strings.HasPrefix(trimmed, "::") || strings.Contains(line, "##[") {
			cmds = append(cmds, line)
		}
	}
	return cmds
}

// TestActionStopsWorkflowCommands runs the Action on a grader that raises
// workflow commands at import: everything it prints runs with commands
// stopped, and only gradegate's own commands (the notice and annotations of
// a run without a token) reach the runner.
func TestActionStopsWorkflowCommands(t *testing.T) {
	s := newBadSuite(t)
	s.hostileGrader()
	e := newActionEnv(t, nil, map[string]string{"MANIFEST": s.path("gradegate.yaml"), "COMMAND": "canary"})
	code, stdout, stderr := e.run(t)
	if code != exitHold {
		t.Errorf("exit %d, want %d", code, exitHold)
	}
	if !strings.HasPrefix(stdout, "::stop-commands::") {
		t.Errorf("stdout does not start by stopping commands: %.200q", stdout)
	}
	cmds := runnerCommands(stdout)
	notice := false
	for _, c := range cmds {
		if strings.Contains(c, "owned") || strings.Contains(c, "legacy") || strings.Contains(c, "::add-mask::x") || strings.HasPrefix(c, "::stop-commands::tok") {
			t.Errorf("the runner would act on the grader's command: %q", c)
		}
		notice = notice || strings.HasPrefix(c, "::notice::gradegate did not create a check run")
	}
	if !notice {
		t.Errorf("gradegate's own notice did not reach the runner; commands: %q", cmds)
	}
	checkNoCommands(t, "stderr", stderr)
}
