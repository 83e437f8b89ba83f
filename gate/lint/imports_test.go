package lint

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLintStartsWithoutASTModule: linting a grader that has no finding to
// word and no pragma imports neither the ast module nor json, re or
// tokenize (nor what they bring), which cost an interpreter more than the
// checks; a finding's message still gets ast.unparse.
func TestLintStartsWithoutASTModule(t *testing.T) {
	py := needPython(t)
	imported := func(source string) []string {
		t.Helper()
		// As scripts.Run starts it, with the import log on stderr.
		cmd := exec.Command(py, "-I", "-S", "-B", "-X", "importtime", "-c", script, `{"contract": "sample", "hosted": true}`)
		cmd.Stdin = strings.NewReader(source)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %s", err, stderr.Bytes())
		}
		if !bytes.HasPrefix(out, []byte(`{"python": `)) {
			t.Fatalf("lint printed %q", out)
		}
		var mods []string
		for line := range strings.Lines(stderr.String()) {
			if _, rest, ok := strings.Cut(line, "|"); ok {
				if _, name, ok := strings.Cut(rest, "|"); ok {
					mods = append(mods, strings.TrimSpace(name))
				}
			}
		}
		return mods
	}
	heavy := []string{"ast", "json", "re", "tokenize", "contextlib", "enum", "collections", "functools"}
	clean := imported("def grade(sample, item):\n    return 1.0 if sample['output_text'] == item['answer'] else 0.0\n")
	if !slices.Contains(clean, "_ast") {
		t.Fatalf("the import log lists no _ast: %v", clean)
	}
	for _, m := range heavy {
		if slices.Contains(clean, m) {
			t.Errorf("linting a clean grader imports %s", m)
		}
	}
	// A finding worded with ast.unparse, and a pragma, import what they need.
	worded := imported("def grade(sample, item):\n    try:\n        return float(sample['x'])\n    except Exception:\n        return 1.0  # gradegate: no-mutate\n")
	for _, m := range []string{"ast", "re", "tokenize"} {
		if !slices.Contains(worded, m) {
			t.Errorf("a grader with a finding and a pragma: %s was not imported: %v", m, worded)
		}
	}
}

// TestLintWalksAsAST: the lint's walk and iter_child_nodes visit the nodes
// ast.walk and ast.iter_child_nodes visit, in the same order, and its parse
// builds the tree ast.parse builds.
func TestLintWalksAsAST(t *testing.T) {
	py := needPython(t)
	lib, _, ok := strings.Cut(script, "\nif __name__ == \"__main__\":")
	if !ok {
		t.Fatal("lint.py has no __main__ block")
	}
	check := lib + `
import ast as real, sys
sources = [open(p, encoding="utf-8").read() for p in sys.argv[1:]]
sources.append("async def f():\n    async with a as b:\n        yield [x async for x in y if x]\nclass C(D, metaclass=M):\n    x: int = 1\n    def g(self, /, a, *b, c=1, **d): return lambda: (yield)\ntry:\n    pass\nexcept* E as e:\n    pass\nmatch p:\n    case [1, *r] | {'k': v} if v: pass\n")
for src in sources:
    tree, bad = parse(src.encode())
    assert bad is None, bad
    assert real.dump(tree, include_attributes=True) == real.dump(real.parse(src, filename="<grader>"), include_attributes=True)
    assert [id(n) for n in walk(tree)] == [id(n) for n in real.walk(tree)]
    for n in real.walk(tree):
        assert [id(c) for c in iter_child_nodes(n)] == [id(c) for c in real.iter_child_nodes(n)]
print("ok", len(sources))
`
	args := []string{"-I", "-S", "-B", "-c", check, "lint.py", "../worker/worker.py", "../mutate/mutate.py"}
	out, err := exec.Command(py, args...).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ok 4") {
		t.Fatalf("%v: %s", err, out)
	}
}
