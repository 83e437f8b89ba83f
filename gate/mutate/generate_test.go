package mutate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gradegate/gradegate/gate/sandbox"
	"github.com/gradegate/gradegate/gate/sandbox/sandboxtest"
	"github.com/gradegate/gradegate/manifest"
)

// TestMain lets the test binary stand in for gradegate: re-executed as the
// sandbox launcher, package confine's init runs it as one, before
// TestMain.
func TestMain(m *testing.M) {
	// As main does: keep this process's environment from graders of the
	// same uid; and reap the orphans graders leave.
	if err := sandbox.Init(os.Args); err != nil {
		panic(err)
	}
	os.Exit(sandboxtest.ReapingM{M: m}.Run())
}

const exampleDir = "../../testdata/examples/order-summary"

// pythonPath resolves python3 once to the real interpreter: python3 on PATH
// may be a version-manager shim that costs tens of milliseconds a start.
var pythonPath = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
})

func python(t testing.TB) string {
	t.Helper()
	p, err := pythonPath()
	if err != nil {
		t.Skipf("no python3: %v", err)
	}
	return p
}

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func generate(t testing.TB, src string, limit int) *Generated {
	t.Helper()
	g, err := Generate(context.Background(), python(t), []byte(src), "grader.py", limit)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	return g
}

// compileAll checks with Python that every mutant's source compiles.
func compileAll(t *testing.T, ms []Mutant) {
	t.Helper()
	var sources [][]byte
	for _, m := range ms {
		sources = append(sources, m.Source)
	}
	in, err := json.Marshal(sources)
	if err != nil {
		t.Fatal(err)
	}
	const check = `import base64, json, sys
for i, s in enumerate(json.load(sys.stdin)):
    compile(base64.b64decode(s), "m%d" % (i + 1), "exec")
`
	cmd := exec.Command(python(t), "-I", "-B", "-c", check)
	cmd.Stdin = bytes.NewReader(in)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("a mutant does not compile: %v\n%s", err, out)
	}
}

func TestGenerateExample(t *testing.T) {
	src := readFile(t, filepath.Join(exampleDir, "grader.py"))
	g, err := Generate(context.Background(), python(t), src, "grader.py", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Mutants) == 0 || len(g.Mutants) > MaxMutants {
		t.Fatalf("got %d mutants, want 1..%d", len(g.Mutants), MaxMutants)
	}
	want := Mutant{
		Line:     totalTypeLine(t),
		Operator: "type-is-to-isinstance",
		Diff:     `- if type(candidate["total_cents"]) is not int: / + if not isinstance(candidate["total_cents"], int):`,
	}
	found := false
	for i, m := range g.Mutants {
		if id := fmt.Sprintf("m%02d", i+1); m.ID != id {
			t.Errorf("mutant %d has id %s, want %s", i, m.ID, id)
		}
		if bytes.Equal(m.Source, src) {
			t.Errorf("%s: source unchanged", m.ID)
		}
		if m.Line == want.Line && m.Operator == want.Operator && m.Diff == want.Diff {
			found = true
		}
	}
	if !found {
		for _, m := range g.Mutants {
			t.Logf("%s %d %s %s", m.ID, m.Line, m.Operator, m.Diff)
		}
		t.Errorf("no mutant %+v", want)
	}
	compileAll(t, g.Mutants)

	// Deterministic: a second run lists the same mutants.
	again, err := Generate(context.Background(), python(t), src, "grader.py", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(g.Mutants, again.Mutants, func(a, b Mutant) bool {
		return a.ID == b.ID && a.Diff == b.Diff && bytes.Equal(a.Source, b.Source)
	}) {
		t.Error("two runs of Generate differ")
	}
}

func TestGenerateOperators(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		operator string
		before   string
		after    string
	}{
		{
			name:     "type is not becomes not isinstance",
			src:      "def grade(sample, item):\n    x = sample['x']\n    if type(x) is not int:\n        return 0.0\n    return 1.0\n",
			operator: "type-is-to-isinstance",
			before:   "if type(x) is not int:", after: "if not isinstance(x, int):",
		},
		{
			name:     "type is becomes isinstance",
			src:      "def grade(sample, item):\n    return 1.0 if type(sample) is dict else 0.5\n",
			operator: "type-is-to-isinstance",
			before:   "return 1.0 if type(sample) is dict else 0.5", after: "return 1.0 if isinstance(sample, dict) else 0.5",
		},
		{
			name:     "equality flips",
			src:      "def grade(sample, item):\n    if sample['a'] == item['a']:\n        return 1.0\n    return 0.0\n",
			operator: "flip-comparison",
			before:   "if sample['a'] == item['a']:", after: "if sample['a'] != item['a']:",
		},
		{
			name:     "less than becomes at most",
			src:      "def grade(sample, item):\n    if len(sample) < 3:\n        return 0.0\n    return 1.0\n",
			operator: "flip-comparison",
			before:   "if len(sample) < 3:", after: "if len(sample) <= 3:",
		},
		{
			name:     "greater or equal becomes greater",
			src:      "def grade(sample, item):\n    return float(sample['n'] >= 2)\n",
			operator: "flip-comparison",
			before:   "return float(sample['n'] >= 2)", after: "return float(sample['n'] > 2)",
		},
		{
			name:     "return zero becomes one",
			src:      "def grade(sample, item):\n    if not sample:\n        return 0.0\n    return 0.5\n",
			operator: "return-constant-flip",
			before:   "return 0.0", after: "return 1.0",
		},
		{
			name:     "condition negated",
			src:      "def grade(sample, item):\n    if sample.get('ok'):\n        return 1.0\n    return 0.5\n",
			operator: "negate-condition",
			before:   "if sample.get('ok'):", after: "if not sample.get('ok'):",
		},
		{
			name:     "negated condition loses its not",
			src:      "def grade(sample, item):\n    if not (sample and item):\n        return 0.5\n    return 0.25\n",
			operator: "negate-condition",
			before:   "if not (sample and item):", after: "if sample and item:",
		},
		{
			name:     "and becomes or",
			src:      "def grade(sample, item):\n    return float(bool(sample) and bool(item))\n",
			operator: "and-to-or",
			before:   "return float(bool(sample) and bool(item))", after: "return float(bool(sample) or bool(item))",
		},
		{
			name:     "or becomes and",
			src:      "def grade(sample, item):\n    ok = sample.get('a') or item.get('b')\n    return 0.5\n",
			operator: "or-to-and",
			before:   "ok = sample.get('a') or item.get('b')", after: "ok = sample.get('a') and item.get('b')",
		},
		{
			name:     "raise in grade becomes return 0.0",
			src:      "def grade(sample, item):\n    if 'expected' not in item:\n        raise KeyError('corrupt fixture')\n    return 0.5\n",
			operator: "drop-raise",
			before:   "raise KeyError('corrupt fixture')", after: "return 0.0",
		},
		{
			name:     "raise in a helper becomes pass",
			src:      "def check(item):\n    if not item:\n        raise ValueError('empty')\n\ndef grade(sample, item):\n    check(item)\n    return 0.5\n",
			operator: "drop-raise",
			before:   "raise ValueError('empty')", after: "pass",
		},
		{
			name:     "specific except becomes except Exception returning full credit",
			src:      "import json\n\ndef grade(sample, item):\n    try:\n        v = json.loads(sample['output_text'])\n    except ValueError:\n        return 0.0\n    return 0.5\n",
			operator: "broaden-except",
			before:   "except ValueError: return 0.0", after: "except Exception: return 1.0",
		},
		{
			name:     "constant zero becomes one",
			src:      "def grade(sample, item):\n    return sample['xs'][0] * 0.5\n",
			operator: "constant-flip",
			before:   "return sample['xs'][0] * 0.5", after: "return sample['xs'][1] * 0.5",
		},
		{
			name:     "boolean constant flips",
			src:      "def grade(sample, item):\n    strict = True\n    return 0.5\n",
			operator: "constant-flip",
			before:   "strict = True", after: "strict = False",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := generate(t, tc.src, 0)
			var seen []string
			for _, m := range g.Mutants {
				if m.Operator == tc.operator && m.Original == tc.before && m.Mutated == tc.after {
					compileAll(t, []Mutant{m})
					return
				}
				seen = append(seen, m.Operator+": "+m.Diff)
			}
			t.Errorf("no %s mutant %q -> %q; got:\n%s", tc.operator, tc.before, tc.after, strings.Join(seen, "\n"))
		})
	}
}

func TestGenerateSkips(t *testing.T) {
	src := "def grade(sample, item):\n" +
		"    if sample == 1:  # gradegate: no-mutate\n" +
		"        return item\n" +
		"    return sample\n\n" +
		"if __name__ == '__main__':\n" +
		"    print(grade(1, 2) == 0.5)\n"
	g := generate(t, src, 0)
	if g.Sites != 0 || len(g.Mutants) != 0 {
		for _, m := range g.Mutants {
			t.Logf("%s %d %s", m.ID, m.Line, m.Diff)
		}
		t.Errorf("got %d sites, %d mutants; want none (pragma line and __main__ block)", g.Sites, len(g.Mutants))
	}
}

func TestGenerateExclusions(t *testing.T) {
	tests := []struct {
		name    string
		comment string
		want    []Exclusion
	}{
		{"reason", "# gradegate: no-mutate: JSON has no int subclass",
			[]Exclusion{{Line: 2, Reason: "JSON has no int subclass", Mutants: 2}}},
		{"no reason", "# gradegate: no-mutate",
			[]Exclusion{{Line: 2, Reason: "", Mutants: 2}}},
		{"empty reason", "# gradegate: no-mutate:   ",
			[]Exclusion{{Line: 2, Reason: "", Mutants: 2}}},
		{"spacing", "#gradegate:no-mutate:why not",
			[]Exclusion{{Line: 2, Reason: "why not", Mutants: 2}}},
		{"no pragma", "# a comment", []Exclusion{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := "def grade(sample, item):\n" +
				"    if type(sample) is int:  " + tc.comment + "\n" +
				"        return 0.5\n" +
				"    return 0.25\n"
			g := generate(t, src, 0)
			for i := range g.Excluded {
				if !strings.HasPrefix(g.Excluded[i].Code, "if type(sample) is int:") {
					t.Errorf("code %q, want the excluded line", g.Excluded[i].Code)
				}
				g.Excluded[i].Code = ""
			}
			if !slices.Equal(g.Excluded, tc.want) {
				t.Errorf("excluded %+v, want %+v", g.Excluded, tc.want)
			}
			for _, m := range g.Mutants {
				if m.Line == 2 && len(tc.want) > 0 {
					t.Errorf("%s mutates the excluded line: %s", m.ID, m.Diff)
				}
			}
		})
	}
}

func TestGenerateCap(t *testing.T) {
	src := string(readFile(t, filepath.Join(exampleDir, "grader.py")))
	all := generate(t, src, 1000)
	capped := generate(t, src, 5)
	if capped.Sites != all.Sites || len(capped.Mutants) != 5 {
		t.Fatalf("capped: %d sites, %d mutants; want %d sites, 5 mutants", capped.Sites, len(capped.Mutants), all.Sites)
	}
	// Spread over the file: the last capped mutant is in the file's last part.
	if last, end := capped.Mutants[4].Line, all.Mutants[len(all.Mutants)-1].Line; last < end*2/3 {
		t.Errorf("capped mutants stop at line %d of a file whose sites reach line %d", last, end)
	}
	if capped.Mutants[4].ID != "m05" {
		t.Errorf("ids not renumbered: %s", capped.Mutants[4].ID)
	}
}

func TestGenerateEncoding(t *testing.T) {
	// A latin-1 source must come back in latin-1, or its coding cookie lies.
	src := []byte("# -*- coding: latin-1 -*-\ndef grade(sample, item):\n    # caf\xe9\n    return 0.0\n")
	g, err := Generate(context.Background(), python(t), src, "grader.py", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Mutants) != 1 {
		t.Fatalf("got %d mutants, want 1", len(g.Mutants))
	}
	if !bytes.Contains(g.Mutants[0].Source, []byte("caf\xe9")) || !bytes.Contains(g.Mutants[0].Source, []byte("return 1.0")) {
		t.Errorf("mutant source = %q", g.Mutants[0].Source)
	}
	compileAll(t, g.Mutants)
}

func TestGenerateSyntaxError(t *testing.T) {
	_, err := Generate(context.Background(), python(t), []byte("def grade(sample, item):\n    return (\n"), "grader.py", 0)
	if !errors.Is(err, manifest.ErrInput) {
		t.Fatalf("err = %v, want an input error", err)
	}
	if !strings.Contains(err.Error(), "grader.py") {
		t.Errorf("err = %v, want the file named", err)
	}
}

// totalTypeLine is the line of the example grader's total_cents type check,
// the line whose isinstance mutant only the one-cent canary can kill.
func totalTypeLine(t *testing.T) int {
	t.Helper()
	src := readFile(t, filepath.Join(exampleDir, "grader.py"))
	for i, line := range strings.Split(string(src), "\n") {
		if strings.Contains(line, `if type(candidate["total_cents"]) is not int:`) {
			return i + 1
		}
	}
	t.Fatal("the example grader has no total_cents type check")
	return 0
}

// TestSameTree holds mutate.py's tree comparison to ast.dump, which it
// replaced: two sources compare equal exactly when their dumps are equal
// (positions aside; constants by type and repr, so 1, 1.0 and True differ).
func TestSameTree(t *testing.T) {
	pairs := [][2]string{
		{"x = 1", "x  =  1"},
		{"x = 1", "x = 1.0"},
		{"x = 0.0", "x = -0.0"},
		{"x = 0.0", "x = 0.0"},
		{"x = 1.0", "x = 1.00"},
		{"x = 1e999", "x = 1e999"},
		{"x = 'a'", "x = \"a\""},
		{"x = 'a'", "x = u'a'"},
		{"x = True", "x = 1"},
		{"f(a, b)", "f(b, a)"},
		{"f(a, b)", "f(a, b,)"},
		{"if a:\n    pass\n", "if a:\n\n    pass\n"},
		{"def g(x=None): return x", "def g(x=None):\n    return x"},
		{"def g(x): return x", "def g(x=None): return x"},
		{"try:\n    a\nexcept E:\n    b\n", "try:\n    a\nexcept:\n    b\n"},
		{"a < b", "a <= b"},
		{"(a) + b", "a + b"},
		{"x[1:2]", "x[1:2:]"},
		{"lambda: 0", "lambda: 0.0"},
	}
	src := strings.TrimSuffix(strings.TrimSpace(script), "main()")
	check := src + `
import json
pairs = json.loads(sys.stdin.read())
print(json.dumps([[same_tree(ast.parse(a), ast.parse(b)), ast.dump(ast.parse(a)) == ast.dump(ast.parse(b))] for a, b in pairs]))
`
	in, err := json.Marshal(pairs)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python(t), "-I", "-B", "-c", check)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var got [][2]bool
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	equal, differ := 0, 0
	for i, g := range got {
		if g[0] != g[1] {
			t.Errorf("%q vs %q: same_tree %v, ast.dump equal %v", pairs[i][0], pairs[i][1], g[0], g[1])
		}
		if g[1] {
			equal++
		} else {
			differ++
		}
	}
	if equal == 0 || differ == 0 {
		t.Fatalf("the pairs must include equal (%d) and different (%d) trees", equal, differ)
	}
}

// TestGenerateCapByOperator: a hundred sites of one operator (a table of
// comparisons, killed alike) do not crowd the others out of the sample:
// every operator of the source is tested, and a line is tested twice only
// once every line of its operator was.
func TestGenerateCapByOperator(t *testing.T) {
	var b strings.Builder
	b.WriteString("def grade(sample, item):\n")
	for i := range 100 {
		fmt.Fprintf(&b, "    if item.get('k%d') == %d:\n        return 0.0\n", i, i)
	}
	b.WriteString("    if type(item.get('n')) is not int:\n        raise ValueError('n')\n")
	b.WriteString("    try:\n        n = int(sample.get('output_text'))\n    except ValueError:\n        return 0.0\n")
	b.WriteString("    return 1.0 if n > 3 else 0.0\n")
	src := b.String()
	all := generate(t, src, 1000)
	capped := generate(t, src, 20)
	if len(capped.Mutants) != 20 {
		t.Fatalf("%d mutants, want 20", len(capped.Mutants))
	}
	ops := map[string]bool{}
	for _, m := range capped.Mutants {
		ops[m.Operator] = true
	}
	for _, m := range all.Mutants {
		if !ops[m.Operator] {
			t.Errorf("operator %s (line %d) not in the capped sample", m.Operator, m.Line)
			ops[m.Operator] = true
		}
	}
}
