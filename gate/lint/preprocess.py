# gradegate preprocessor lint: reads a preprocessor's source (stdin) without
# running it and says whether it defines the function its contract calls,
# taking one positional parameter. Prints one JSON object.
import ast
import json
import sys

want = sys.argv[1]
source = sys.stdin.buffer.read()
out = {"defined": False, "line": 0, "parameters": "", "binds": False, "syntax_error": ""}
try:
    tree = ast.parse(source)
except SyntaxError as exc:
    out["syntax_error"] = "%s (line %s)" % (exc.msg, exc.lineno)
    out["line"] = exc.lineno or 0
    tree = None
if tree is not None:
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == want:
            a = node.args
            positional = a.posonlyargs + a.args
            required = len(positional) - len(a.defaults)
            kwonly_required = any(d is None for d in a.kw_defaults)
            names = [p.arg for p in positional]
            if a.vararg:
                names.append("*" + a.vararg.arg)
            names += [p.arg for p in a.kwonlyargs]
            if a.kwarg:
                names.append("**" + a.kwarg.arg)
            out.update(defined=True, line=node.lineno, parameters="(%s)" % ", ".join(names),
                       binds=required <= 1 and (len(positional) >= 1 or a.vararg is not None) and not kwonly_required
                       and not isinstance(node, ast.AsyncFunctionDef))
        elif isinstance(node, (ast.Assign, ast.ImportFrom, ast.Import)) and not out["defined"]:
            # transform = something, or imported: defined, its signature unknown.
            targets = []
            if isinstance(node, ast.Assign):
                targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
            else:
                targets = [(al.asname or al.name).split(".")[0] for al in node.names]
            if want in targets:
                out.update(defined=True, line=node.lineno, parameters="", binds=True)
print(json.dumps(out))
