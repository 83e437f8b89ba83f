// Package docs_test checks the guide: README.md and the pages in docs/.
//
// TestLinks checks that every relative link resolves: the file exists, and an
// #anchor names a heading of the page it points at (GitHub's heading ids).
//
// TestCommands runs the walkthroughs. A ```console block whose lines start
// with "$ " is one: each "$ " line runs under sh, with the gradegate built
// from this checkout first on PATH, in a temporary copy of testdata/ (and of
// docs/testdata/, at its top) that the blocks of one page share, in order. The
// lines up to the next "$ " line are the output shown, stdout and stderr as
// one stream as a terminal shows them; a last line "[exit N]" says the
// command exits N, and no such line that it exits 0. A "…" line stands for
// any number of lines. The sandbox line, seeds, durations and the list of
// packages the local interpreter lacks differ from machine to machine and are
// compared by their shape only. A "$ gradegate" line in any other block is
// an error: every command the guide shows as typed is checked.
//
// After an intended change to what the commands print, one command
// rewrites every shown output from the real one (a block that elides with
// "…" keeps as many lines before and after it):
//
//	go test ./docs/ -update
package docs_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
)

var update = flag.Bool("update", false, "rewrite the output shown in README.md and docs/*.md from what the commands print")

// repoRoot is the repository, one folder up from this package.
const repoRoot = ".."

// pages returns README.md and docs/*.md, as paths relative to repoRoot.
func pages(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, d := range docs {
		rel, err := filepath.Rel(repoRoot, d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

func readPage(t *testing.T, page string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(page)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// fence is a fenced code block: the info string after ``` and the lines
// between the fences, with the 0-based index of the first of them.
type fence struct {
	info  string
	first int
	lines []string
}

// fences returns the fenced blocks of a page (fences at the start of a line).
func fences(lines []string) []fence {
	var out []fence
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "```") {
			continue
		}
		f := fence{info: strings.TrimSpace(strings.TrimPrefix(lines[i], "```")), first: i + 1}
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			f.lines = append(f.lines, lines[i])
		}
		out = append(out, f)
	}
	return out
}

// prose returns the page's lines with fenced blocks blanked, so that
// headings and links are looked for in the text only.
func prose(lines []string) []string {
	out := make([]string, len(lines))
	in := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			in = !in
			continue
		}
		if !in {
			out[i] = l
		}
	}
	return out
}

var (
	headingRE    = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	codeSpanRE   = regexp.MustCompile("`[^`]*`")
	linkRE       = regexp.MustCompile(`\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	schemeRE     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	inlineLinkRE = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// anchors returns the ids GitHub gives a page's headings: lower case, the
// markup and every character but letters, digits, '-', '_' and spaces
// dropped, spaces as '-', and "-1", "-2", … after a repeated id.
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range prose(strings.Split(md, "\n")) {
		m := headingRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		text := inlineLinkRE.ReplaceAllString(m[1], "$1")
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		id := b.String()
		if n, dup := seen[id]; dup {
			seen[id] = n + 1
			id = id + "-" + strconv.Itoa(n+1)
		} else {
			seen[id] = 0
		}
		out[id] = true
	}
	return out
}

func TestLinks(t *testing.T) {
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range pages(t) {
		md := readPage(t, page)
		for i, l := range prose(strings.Split(md, "\n")) {
			for _, m := range linkRE.FindAllStringSubmatch(codeSpanRE.ReplaceAllString(l, ""), -1) {
				target := m[2]
				if schemeRE.MatchString(target) {
					continue
				}
				where := fmt.Sprintf("%s:%d: link %q", page, i+1, target)
				file, anchor, _ := strings.Cut(target, "#")
				resolved := page
				if file != "" {
					resolved = filepath.ToSlash(filepath.Join(filepath.Dir(page), file))
				}
				abs := filepath.Join(root, filepath.FromSlash(resolved))
				if rel, err := filepath.Rel(root, abs); err != nil || strings.HasPrefix(rel, "..") {
					t.Errorf("%s: leads out of the repository", where)
					continue
				}
				info, err := os.Stat(abs)
				if err != nil {
					t.Errorf("%s: %s does not exist", where, resolved)
					continue
				}
				if anchor == "" {
					continue
				}
				if info.IsDir() || !strings.HasSuffix(resolved, ".md") {
					t.Errorf("%s: an anchor into %s, which is not a page", where, resolved)
					continue
				}
				data, err := os.ReadFile(abs)
				if err != nil {
					t.Fatal(err)
				}
				if !anchors(string(data))[anchor] {
					t.Errorf("%s: %s has no heading #%s", where, resolved, anchor)
				}
			}
		}
	}
}

// step is one "$ " line of a walkthrough and the output shown under it.
type step struct {
	line    int      // 0-based line of the command in the page
	command string   // after "$ "
	shown   []string // the output lines, without the exit line
	exit    int
	end     int // 0-based line after the step's last shown line
}

var exitRE = regexp.MustCompile(`^\[exit (\d+)\]$`)

// walkthrough returns the steps of a ```console block, or nil when the block
// shows no command.
func walkthrough(f fence) []step {
	var steps []step
	for i, l := range f.lines {
		if cmd, ok := strings.CutPrefix(l, "$ "); ok {
			steps = append(steps, step{line: f.first + i, command: cmd, end: f.first + i + 1})
			continue
		}
		if len(steps) == 0 {
			return nil
		}
		s := &steps[len(steps)-1]
		s.shown = append(s.shown, l)
		s.end = f.first + i + 1
	}
	for i := range steps {
		s := &steps[i]
		if n := len(s.shown); n > 0 {
			if m := exitRE.FindStringSubmatch(s.shown[n-1]); m != nil {
				s.exit, _ = strconv.Atoi(m[1])
				s.shown = s.shown[:n-1]
			}
		}
	}
	return steps
}

// shapes are the parts of an output that differ between machines and runs,
// and what they are compared as.
var shapes = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile("sandbox: uid=[^` ]*( [a-z]+=[^` ]*)*"), "sandbox: <layers>"},
	{regexp.MustCompile(`image_packages_missing: .*`), "image_packages_missing: <packages>"},
	{regexp.MustCompile(`\b\d{6,}\b`), "<number>"},
	{regexp.MustCompile(`\b\d+(\.\d+)? ?(ms|s)\b`), "<duration>"},
}

func shape(l string) string {
	l = strings.TrimRight(l, " \t")
	for _, s := range shapes {
		l = s.re.ReplaceAllString(l, s.with)
	}
	return l
}

const elision = "…"

// matches reports whether the output lines got match the shown lines, where
// an elision line stands for any number of lines.
func matches(shown, got []string) bool {
	if len(shown) == 0 {
		return len(got) == 0
	}
	if shown[0] == elision {
		for i := 0; i <= len(got); i++ {
			if matches(shown[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && shape(shown[0]) == shape(got[0]) && matches(shown[1:], got[1:])
}

// reshown is the output to show for got in place of shown: all of it, or, when
// shown elides, as many lines before and after the elision as shown has.
func reshown(shown, got []string) []string {
	first, last := -1, -1
	for i, l := range shown {
		if l == elision {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return got
	}
	head, tail := first, len(shown)-1-last
	if head+tail >= len(got) {
		return got
	}
	out := append([]string{}, got[:head]...)
	out = append(out, elision)
	return append(out, got[len(got)-tail:]...)
}

// outputLines splits a command's output into lines, without trailing blanks
// and without the blank lines at its end.
func outputLines(out []byte) []string {
	text := strings.TrimRight(string(out), "\n")
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return lines
}

// systemPythons are where gradegate looks for an interpreter the sandbox's
// uids can execute when python3 on PATH is out of their reach (a version
// manager under /root); putting it first keeps gradegate from saying so on
// every command.
var systemPythons = []string{"/usr/local/bin/python3", "/usr/bin/python3"}

// buildGradegate builds the command once, without version control stamps, so
// that `gradegate version` prints the version file's version wherever it runs.
func buildGradegate(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build gradegate: %v", err)
	}
	dir := t.TempDir()
	cmd := exec.Command(goTool, "build", "-buildvcs=false", "-o", filepath.Join(dir, "gradegate"), "./cmd/gradegate")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir
}

// copyTree copies the regular files and folders under src into dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
}

// workspace is a page's folder to run its walkthroughs in: testdata/ as
// testdata/, and what docs/testdata/ holds at its top. It is the top of a
// repository (it has a .git folder), as a user's clone is: the examples
// under testdata/examples/broken/ read files of their neighbours, inside
// the repository tree.
func workspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := copyTree(filepath.Join(repoRoot, "testdata"), filepath.Join(dir, "testdata")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("testdata"); err == nil {
		if err := copyTree("testdata", dir); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// environment is the scrubbed environment of every command: no GitHub
// Actions variables, no keys, a home of its own.
func environment(bin, home string) []string {
	path := bin
	for _, p := range systemPythons {
		if _, err := os.Stat(p); err == nil {
			path += string(os.PathListSeparator) + filepath.Dir(p)
			break
		}
	}
	path += string(os.PathListSeparator) + os.Getenv("PATH")
	return []string{"PATH=" + path, "HOME=" + home, "TMPDIR=" + os.TempDir(), "NO_COLOR=1", "LC_ALL=C.UTF-8"}
}

func TestCommands(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the walkthroughs are sh commands")
	}
	type pageSteps struct {
		page   string
		lines  []string
		blocks [][]step
	}
	var all []pageSteps
	for _, page := range pages(t) {
		lines := strings.Split(readPage(t, page), "\n")
		ps := pageSteps{page: page, lines: lines}
		for _, f := range fences(lines) {
			steps := walkthrough(f)
			if f.info == "console" && steps != nil {
				ps.blocks = append(ps.blocks, steps)
				continue
			}
			for i, l := range f.lines {
				if strings.HasPrefix(strings.TrimSpace(l), "$ gradegate") {
					t.Errorf("%s:%d: a gradegate command outside a ```console walkthrough is never checked", page, f.first+i+1)
				}
			}
		}
		if ps.blocks != nil {
			all = append(all, ps)
		}
	}
	if len(all) == 0 {
		t.Fatal("no walkthrough found")
	}
	bin := buildGradegate(t)
	for _, ps := range all {
		t.Run(ps.page, func(t *testing.T) {
			dir := workspace(t)
			env := environment(bin, dir)
			var edits []func(lines []string) []string
			for _, steps := range ps.blocks {
				for _, s := range steps {
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
					cmd := exec.CommandContext(ctx, "sh", "-c", s.command)
					cmd.Dir, cmd.Env = dir, env
					var out bytes.Buffer
					cmd.Stdout, cmd.Stderr = &out, &out
					err := cmd.Run()
					cancel()
					code := 0
					var ee *exec.ExitError
					switch {
					case errors.As(err, &ee):
						code = ee.ExitCode()
					case err != nil:
						t.Fatalf("%s:%d: %s: %v", ps.page, s.line+1, s.command, err)
					}
					got := outputLines(out.Bytes())
					if matches(s.shown, got) && code == s.exit {
						continue
					}
					if *update {
						s, got, code := s, got, code
						edits = append(edits, func(lines []string) []string {
							repl := reshown(s.shown, got)
							if code != 0 {
								repl = append(repl, fmt.Sprintf("[exit %d]", code))
							}
							return append(append(append([]string{}, lines[:s.line+1]...), repl...), lines[s.end:]...)
						})
						continue
					}
					t.Errorf("%s:%d: $ %s\nexit %d, shown %d; output:\n%s\nshown:\n%s\n(go test ./docs/ -update rewrites the shown output)",
						ps.page, s.line+1, s.command, code, s.exit, strings.Join(got, "\n"), strings.Join(s.shown, "\n"))
				}
			}
			if len(edits) == 0 {
				return
			}
			// From the last step up, so that earlier line numbers hold.
			lines := ps.lines
			for i := len(edits) - 1; i >= 0; i-- {
				lines = edits[i](lines)
			}
			if err := os.WriteFile(filepath.Join(repoRoot, filepath.FromSlash(ps.page)), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: rewrote the output of %d commands", ps.page, len(edits))
		})
	}
}

func TestMatches(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shown []string
		got   []string
		want  bool
	}{
		{"equal", []string{"a", "b"}, []string{"a", "b"}, true},
		{"a line differs", []string{"a", "b"}, []string{"a", "c"}, false},
		{"a line more", []string{"a"}, []string{"a", "b"}, false},
		{"elided tail", []string{"a", elision}, []string{"a", "b", "c"}, true},
		{"elided middle", []string{"a", elision, "c"}, []string{"a", "b", "b", "c"}, true},
		{"elided nothing", []string{"a", elision, "c"}, []string{"a", "c"}, true},
		{"anchor missing", []string{"a", elision, "d"}, []string{"a", "b", "c"}, false},
		{"sandbox line by shape", []string{"sandbox: uid=60000 seccomp=on landlock=abi7 rlimits=on"}, []string{"sandbox: uid=unchanged seccomp=on landlock=abi4 rlimits=on"}, true},
		{"seeds by shape", []string{"(seed 7956033405498672045, PYTHONHASHSEED 2381905328 then 2933170505)"}, []string{"(seed 17756758952911924421, PYTHONHASHSEED 2128728970 then 308198743)"}, true},
		{"durations by shape", []string{"tokens 0 in / 0 out, 0.0 s"}, []string{"tokens 0 in / 0 out, 1.3 s"}, true},
		{"counts are not shapes", []string{"│ 36 │ 31 │"}, []string{"│ 36 │ 30 │"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := matches(tc.shown, tc.got); got != tc.want {
				t.Errorf("matches(%q, %q) = %v, want %v", tc.shown, tc.got, got, tc.want)
			}
		})
	}
}

func TestReshown(t *testing.T) {
	for _, tc := range []struct {
		name       string
		shown, got []string
		want       []string
	}{
		{"whole", []string{"x"}, []string{"a", "b"}, []string{"a", "b"}},
		{"head and tail kept", []string{"x", elision, "y"}, []string{"a", "b", "c", "d"}, []string{"a", elision, "d"}},
		{"shorter than shown", []string{"x", "x", elision, "y"}, []string{"a", "b"}, []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := reshown(tc.shown, tc.got)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("reshown = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestAnchors(t *testing.T) {
	md := "# Title\n## Mutation testing and `no-mutate`\n## Against the base branch's results\n```\n## not a heading\n```\n## Title\n### `/proc`\n"
	got := anchors(md)
	for _, want := range []string{"title", "mutation-testing-and-no-mutate", "against-the-base-branchs-results", "title-1", "proc"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Error("a line in a fenced block counted as a heading")
	}
}
