"""gradegate mutate: list mutants of a grader's source without running it.

Reads the grader's source bytes on stdin and a JSON config as argv[1]
({"limit": 60}). Prints one JSON document:

  {"python": "3.11.7", "sites": N,
   "excluded": [{"line": 30, "reason": "the lookup below raises anyway",
                 "mutants": 1, "code": "raise KeyError(...)  # gradegate: ..."}],
   "mutants": [{"line": 28, "operator": "type-is-to-isinstance",
                "original": "if type(x) is not int:",
                "mutated": "if not isinstance(x, int):",
                "source": "<base64 of the whole mutated source>"}]}

or {"error": {"message": "...", "line": N}} when the source does not parse.

The source is parsed, never imported or executed. Each mutant replaces one
node's source segment with new text, so the rest of the file (comments,
layout) stays byte for byte; the new file is then parsed again and must give
exactly the tree with that one node replaced, otherwise the replacement is
retried in parentheses and, failing that, the mutant is dropped.
"""

import ast
import base64
import io
import json
import re
import sys
import tokenize

# Functions the worker calls: a raise dropped there becomes "return 0.0", the
# way a grader that swallows a broken fixture scores it as a model failure.
ENTRY = frozenset({"grade", "grade_batch"})

# A line carrying this comment is not mutated (a reviewed equivalent
# mutant): "# gradegate: no-mutate: <why>". The reason is what a reviewer
# reads in the report; a pragma without one still excludes the line, but its
# mutants count as survivors in the score.
PRAGMA = re.compile(r"gradegate:\s*no-mutate\b(?:\s*:(.*))?")

FLIP = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}

# Negating "a == b" gives the same program as flipping == to !=, so
# negate-condition skips tests that flip-comparison already negates.
NEGATING_FLIPS = (ast.Eq, ast.NotEq, ast.Is, ast.IsNot, ast.In, ast.NotIn)

# How each comparison operator is spelled between its operands (the text
# there is otherwise only spaces, parentheses, comments and line breaks).
OP_PATTERN = {
    ast.Eq: r"==",
    ast.NotEq: r"!=",
    ast.Lt: r"<(?!=)",
    ast.LtE: r"<=",
    ast.Gt: r">(?!=)",
    ast.GtE: r">=",
    ast.Is: r"\bis\b",
    ast.IsNot: r"\bis\s+not\b",
    ast.In: r"\bin\b",
    ast.NotIn: r"\bnot\s+in\b",
}
OP_TEXT = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
}


def pos(node):
    return (node.lineno, node.col_offset)


def end(node):
    return (node.end_lineno, node.end_col_offset)


def split_lines(text):
    """Lines as the tokenizer sees them: only \\r\\n, \\n and \\r end a line."""
    lines = []
    start = 0
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\r":
            if i + 1 < n and text[i + 1] == "\n":
                i += 1
            lines.append(text[start : i + 1])
            start = i + 1
        elif c == "\n":
            lines.append(text[start : i + 1])
            start = i + 1
        i += 1
    if start < n:
        lines.append(text[start:])
    return lines


class Source:
    def __init__(self, text):
        self.text = text
        self.lines = split_lines(text)
        self.starts = []
        pos = 0
        for line in self.lines:
            self.starts.append(pos)
            pos += len(line)

    def offset(self, lineno, col):
        """Character offset of an ast position (col is in UTF-8 bytes)."""
        line = self.lines[lineno - 1]
        return self.starts[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8", "replace"))

    def segment(self, node):
        return self.text[self.offset(node.lineno, node.col_offset) : self.offset(node.end_lineno, node.end_col_offset)]

    def span(self, lineno, end_lineno):
        return " ".join(l.strip() for l in self.lines[lineno - 1 : end_lineno])


class Site:
    """One mutation: node (at parent.field[index]) becomes new.

    edits are the textual replacements to try first, each a list of
    (start, end, text) with start and end as (lineno, col) positions: the
    smallest edit keeps the rest of the line as the user wrote it (quotes,
    spacing), so the diff shows only what changed. ast.unparse of new over
    the node's whole span, bare and then in parentheses, is the fallback.
    """

    def __init__(self, operator, node, parent, field, index, new, edits=(), end=None):
        self.operator = operator
        self.node = node
        self.parent = parent
        self.field = field
        self.index = index
        self.new = new
        self.start = (node.lineno, node.col_offset)
        self.end = end or (node.end_lineno, node.end_col_offset)
        self.edits = list(edits)


def number(node):
    return (
        isinstance(node, ast.Constant)
        and type(node.value) in (int, float)
        and node.value in (0, 1)
    )


def flipped_number(value):
    if type(value) is float:
        return 1.0 if value == 0 else 0.0
    return 1 if value == 0 else 0


# Arithmetic swaps: each operator, the one it becomes, the pattern that
# finds it between its operands and the new operator's text.
ARITH = {
    ast.Add: (ast.Sub, r"\+", "-"),
    ast.Sub: (ast.Add, r"-", "+"),
    ast.Mult: (ast.Div, r"(?<!\*)\*(?!\*)", "/"),
    ast.Div: (ast.Mult, r"(?<!/)/(?!/)", "*"),
    ast.FloorDiv: (ast.Div, r"//", "/"),
    ast.Pow: (ast.Mult, r"\*\*", "*"),
}


def changed_number(node, parent, field):
    """(operator, new value) for a numeric constant other than 0 and 1
    (constant-flip has those), or None. A divisor grows tenfold, a weight
    (a factor of a product) halves or doubles, any other number moves by
    one (an int) or halves (a float): each is a change a checked score
    moves with."""
    v = node.value
    if type(v) not in (int, float) or v in (0, 1) or v != v or v in (float("inf"), float("-inf")):
        return None
    if isinstance(parent, ast.BinOp) and field == "right" and isinstance(parent.op, (ast.Div, ast.FloorDiv, ast.Mod)):
        return "divisor-change", v * 10
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Mult):
        return "weight-change", v / 2 if type(v) is float else v * 2
    return "number-change", v / 2 if type(v) is float else v + 1


def call_name(func):
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.value.id + "." + func.attr
    return ""


def is_main_guard(node):
    if not isinstance(node, ast.If):
        return False
    t = node.test
    return (
        isinstance(t, ast.Compare)
        and isinstance(t.left, ast.Name)
        and t.left.id == "__name__"
        and len(t.ops) == 1
        and isinstance(t.ops[0], ast.Eq)
        and isinstance(t.comparators[0], ast.Constant)
        and t.comparators[0].value == "__main__"
    )


class Finder:
    def __init__(self, source):
        self.source = source
        self.sites = []

    def visit(self, node, parent=None, field=None, index=None, func=None):
        if is_main_guard(node):
            return  # never runs under the grader: every mutant would survive
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            func = node
        self.sites_of(node, parent, field, index, func)
        for name, value in ast.iter_fields(node):
            if isinstance(value, list):
                for i, child in enumerate(value):
                    if isinstance(child, ast.AST):
                        self.visit(child, node, name, i, func)
            elif isinstance(value, ast.AST):
                self.visit(value, node, name, None, func)

    def add(self, *args, **kwargs):
        self.sites.append(Site(*args, **kwargs))

    def sites_of(self, node, parent, field, index, func):
        self.continuous(node, parent, field, index)
        if isinstance(node, ast.Compare):
            self.compare(node, parent, field, index)
        elif isinstance(node, ast.BoolOp):
            op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            name = "and-to-or" if isinstance(node.op, ast.And) else "or-to-and"
            word = "or" if isinstance(node.op, ast.And) else "and"
            edits = []
            for a, b in zip(node.values, node.values[1:]):
                edit = self.operator_edit(a, b, r"\b(and|or)\b", word)
                if edit is None:
                    edits = []
                    break
                edits.append(edit)
            alts = [edits] if edits else []
            self.add(name, node, parent, field, index, ast.BoolOp(op=op, values=node.values), alts)
        elif isinstance(node, (ast.If, ast.IfExp)):
            t = node.test
            if isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], NEGATING_FLIPS):
                return
            seg = self.source.segment(t)
            if isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not):
                new = t.operand
                text = self.source.segment(t.operand)
            else:
                new = ast.UnaryOp(op=ast.Not(), operand=t)
                simple = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)
                text = "not " + seg if isinstance(t, simple) else "not (" + seg + ")"
            self.add("negate-condition", t, node, "test", None, new, [[(pos(t), end(t), text)]])
        elif isinstance(node, ast.Return):
            if node.value is not None and number(node.value):
                v = node.value
                new = ast.Constant(value=flipped_number(v.value))
                self.add("return-constant-flip", v, node, "value", None, new)
        elif isinstance(node, ast.Constant):
            if isinstance(parent, ast.Return) and field == "value" and number(node):
                return  # return-constant-flip has it
            if number(node):
                self.add("constant-flip", node, parent, field, index, ast.Constant(value=flipped_number(node.value)))
            elif type(node.value) is bool:
                self.add("constant-flip", node, parent, field, index, ast.Constant(value=not node.value))
        elif isinstance(node, ast.Raise):
            if func is not None and func.name in ENTRY:
                new = ast.Return(value=ast.Constant(value=0.0))
            else:
                new = ast.Pass()
            self.add("drop-raise", node, parent, field, index, new)
        elif isinstance(node, ast.ExceptHandler) and func is not None and isinstance(parent, ast.Try):
            self.except_handler(node, parent, field, index)

    def continuous(self, node, parent, field, index):
        """Sites of a grader whose score is a computation, not a verdict:
        arithmetic, numeric constants (weights, divisors), min/max and
        rounding. Mutating them moves the score; canaries within their
        tolerance and labels across the threshold are what can notice."""
        if isinstance(node, ast.BinOp):
            swap_op = ARITH.get(type(node.op))
            if swap_op is not None:
                new_op, pattern, text = swap_op
                new = ast.BinOp(left=node.left, op=new_op(), right=node.right)
                edit = self.operator_edit(node.left, node.right, pattern, text)
                self.add("arithmetic-swap", node, parent, field, index, new, [[edit]] if edit else [])
        elif isinstance(node, ast.Constant):
            changed = changed_number(node, parent, field)
            if changed is not None:
                operator, value = changed
                self.add(operator, node, parent, field, index, ast.Constant(value=value))
        elif isinstance(node, ast.Call) and not node.keywords:
            name = call_name(node.func)
            if name in ("min", "max") and len(node.args) >= 1:
                other = "max" if name == "min" else "min"
                func = ast.Name(id=other, ctx=ast.Load())
                new = ast.Call(func=func, args=node.args, keywords=[])
                self.add("min-max-swap", node, parent, field, index, new, [[(pos(node.func), end(node.func), other)]])
            elif name == "round" and len(node.args) in (1, 2) and not isinstance(node.args[0], ast.Starred):
                arg = node.args[0]
                self.add("drop-rounding", node, parent, field, index, arg, [
                    [(pos(node), end(node), self.source.segment(arg))],
                    [(pos(node), end(node), "(" + self.source.segment(arg) + ")")],
                ])
            elif name in ("math.floor", "math.ceil") and len(node.args) == 1:
                other = "math.ceil" if name == "math.floor" else "math.floor"
                func = ast.Attribute(value=ast.Name(id="math", ctx=ast.Load()), attr=other[5:], ctx=ast.Load())
                new = ast.Call(func=func, args=node.args, keywords=[])
                self.add("floor-ceil-swap", node, parent, field, index, new, [[(pos(node.func), end(node.func), other)]])

    def compare(self, node, parent, field, index):
        left = node.left
        if (
            len(node.ops) == 1
            and isinstance(node.ops[0], (ast.Is, ast.IsNot, ast.Eq, ast.NotEq))
            and isinstance(left, ast.Call)
            and isinstance(left.func, ast.Name)
            and left.func.id == "type"
            and len(left.args) == 1
            and not left.keywords
            and not isinstance(left.args[0], ast.Starred)
        ):
            call = ast.Call(
                func=ast.Name(id="isinstance", ctx=ast.Load()),
                args=[left.args[0], node.comparators[0]],
                keywords=[],
            )
            new = call
            text = "isinstance(%s, %s)" % (self.source.segment(left.args[0]), self.source.segment(node.comparators[0]))
            if isinstance(node.ops[0], (ast.IsNot, ast.NotEq)):
                new = ast.UnaryOp(op=ast.Not(), operand=call)
                text = "not " + text
            self.add("type-is-to-isinstance", node, parent, field, index, new, [[(pos(node), end(node), text)]])
        for i, op in enumerate(node.ops):
            flip = FLIP.get(type(op))
            if flip is None:
                continue
            ops = list(node.ops)
            ops[i] = flip()
            new = ast.Compare(left=node.left, ops=ops, comparators=node.comparators)
            operands = [node.left] + node.comparators
            edit = self.operator_edit(operands[i], operands[i + 1], OP_PATTERN[type(op)], OP_TEXT[flip])
            alts = [[edit]] if edit else []
            self.add("flip-comparison", node, parent, field, index, new, alts)

    def operator_edit(self, a, b, pattern, text):
        """Replace the one operator matching pattern between operands a and b."""
        start = self.source.offset(a.end_lineno, a.end_col_offset)
        stop = self.source.offset(b.lineno, b.col_offset)
        between = self.source.text[start:stop]
        found = list(re.finditer(pattern, between))
        if len(found) != 1:
            return None
        m = found[0]
        return (start + m.start(), start + m.end(), text)

    def except_handler(self, node, parent, field, index):
        t = node.type
        if t is None or (isinstance(t, ast.Name) and t.id in ("Exception", "BaseException")):
            return
        body = node.body[0]
        if body.lineno == node.lineno:
            sep = " "
        else:
            line = self.source.lines[body.lineno - 1]
            indent = line.encode("utf-8")[: body.col_offset].decode("utf-8", "replace")
            if indent.strip():
                return
            sep = "\n" + indent
        head = "except Exception"
        if node.name:
            head += " as " + node.name
        new = ast.ExceptHandler(
            type=ast.Name(id="Exception", ctx=ast.Load()),
            name=node.name,
            body=[ast.Return(value=ast.Constant(value=1.0))],
        )
        last = node.body[-1]
        text = head + ":" + sep + "return 1.0"
        self.add(
            "broaden-except", node, parent, field, index, new,
            [[(pos(node), end(last), text)]],
            end=(last.end_lineno, last.end_col_offset),
        )


def swap(parent, field, index, new):
    if index is None:
        old = getattr(parent, field)
        setattr(parent, field, new)
    else:
        values = getattr(parent, field)
        old = values[index]
        values[index] = new
    return old


def same_tree(a, b):
    """Whether two syntax trees are equal as ast.dump writes them.

    ast.dump leaves out positions and writes every other value with repr, so
    1 and 1.0, or 0.0 and -0.0, differ and two NaNs do not; this compares
    the same way without building the two strings, which for a whole
    grader, twice a mutant, was most of the mutants' listing time.
    """
    if type(a) is not type(b):
        return False
    if isinstance(a, ast.AST):
        for name in a._fields:
            if not same_tree(getattr(a, name, None), getattr(b, name, None)):
                return False
        return True
    if isinstance(a, list):
        return len(a) == len(b) and all(same_tree(x, y) for x, y in zip(a, b))
    return a is b or repr(a) == repr(b)


def build(tree, source, encoding, site):
    """The mutated source bytes and its (original, mutated) lines, or None."""
    alternatives = []
    for edits in site.edits:
        alternatives.append([(at(source, a), at(source, b), text) for a, b, text in edits])
    start = source.offset(*site.start)
    stop = source.offset(*site.end)
    text = ast.unparse(site.new)
    alternatives.append([(start, stop, text)])
    alternatives.append([(start, stop, "(" + text + ")")])
    for edits in alternatives:
        mutated = source.text
        delta = 0
        # Right to left, so earlier offsets stay valid.
        for a, b, text in sorted(edits, reverse=True):
            delta += text.count("\n") - mutated[a:b].count("\n")
            mutated = mutated[:a] + text + mutated[b:]
        try:
            parsed = ast.parse(mutated)
            # The text edit must give the tree the mutation means: the
            # original with the site's node replaced, and nothing else moved.
            old = swap(site.parent, site.field, site.index, site.new)
            try:
                if not same_tree(tree, parsed):
                    continue
            finally:
                swap(site.parent, site.field, site.index, old)
            data = mutated.encode(encoding)
        except (SyntaxError, ValueError, UnicodeEncodeError):
            continue
        first, last = site.start[0], site.end[0]
        return data, source.span(first, last), Source(mutated).span(first, last + delta)
    return None


def at(source, p):
    """A position as a character offset; an int already is one."""
    if isinstance(p, int):
        return p
    return source.offset(*p)


def no_mutate_lines(data):
    """{line: reason} of every no-mutate pragma; reason is "" when none is given."""
    lines = {}
    try:
        for tok in tokenize.tokenize(io.BytesIO(data).readline):
            if tok.type != tokenize.COMMENT:
                continue
            m = PRAGMA.search(tok.string)
            if m:
                lines[tok.start[0]] = (m.group(1) or "").strip()
    except (tokenize.TokenError, SyntaxError):
        pass
    return lines


def spread(items):
    """Orders items so that any prefix is spread evenly over them."""
    out, seen = [], set()
    n = len(items)
    step = n
    while len(out) < n:
        for i in range(0, n, step):
            if i not in seen:
                seen.add(i)
                out.append(items[i])
        step = max(1, step // 2)
    return out


def sample(sites, limit):
    """Picks limit sites by operator and line, not evenly over the sites.

    One operator with hundreds of sites (a comparison in every line of a
    table) would otherwise fill the sample with mutants killed alike. Each
    operator's sites are ordered to visit every line before a second site
    of any line, lines spread over the file; the operators then take turns,
    so every operator and as many lines as the cap allows are tested. The
    pick is deterministic, and in source order.
    """
    by_op = {}
    for s in sites:
        by_op.setdefault(s.operator, {}).setdefault(s.start[0], []).append(s)
    queues = []
    for op in sorted(by_op):
        lines = [by_op[op][line] for line in sorted(by_op[op])]
        order = []
        depth = max(len(group) for group in lines)
        for d in range(depth):
            order.extend(spread([group[d] for group in lines if d < len(group)]))
        queues.append(order)
    picked = []
    turn = 0
    while len(picked) < limit:
        took = False
        for q in queues:
            if turn < len(q) and len(picked) < limit:
                picked.append(q[turn])
                took = True
        if not took:
            break
        turn += 1
    chosen = {id(s) for s in picked}
    return [s for s in sites if id(s) in chosen]


def main():
    # The walk, the tree comparison and ast.unparse recurse once per nesting level; a
    # deeply nested (generated) grader must not crash the script.
    sys.setrecursionlimit(20000)
    config = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    limit = int(config.get("limit", 60))
    data = sys.stdin.buffer.read()
    version = "%d.%d.%d" % sys.version_info[:3]
    if not hasattr(ast, "unparse"):
        json.dump({"python": version, "error": {"message": "mutation testing needs Python 3.9 or newer (ast.unparse)", "line": 0}}, sys.stdout)
        return
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
        tree = ast.parse(text)
    except SyntaxError as e:
        json.dump({"python": version, "error": {"message": "%s: %s" % (type(e).__name__, e.msg), "line": e.lineno or 0}}, sys.stdout)
        return
    except (UnicodeDecodeError, LookupError, ValueError) as e:
        json.dump({"python": version, "error": {"message": "%s: %s" % (type(e).__name__, e), "line": 0}}, sys.stdout)
        return

    source = Source(text)
    finder = Finder(source)
    finder.visit(tree)
    skip = no_mutate_lines(data)
    sites = [s for s in finder.sites if s.start[0] not in skip]
    # Every pragma is reported with its reason and how many mutants it hid,
    # so an exclusion is never silent.
    hidden = {}
    for s in finder.sites:
        if s.start[0] in skip:
            hidden[s.start[0]] = hidden.get(s.start[0], 0) + 1
    excluded = [
        {"line": line, "reason": reason, "mutants": hidden.get(line, 0), "code": source.span(line, line)}
        for line, reason in sorted(skip.items())
        if line <= len(source.lines)
    ]
    order = {id(s): i for i, s in enumerate(sites)}
    sites.sort(key=lambda s: (s.start, order[id(s)]))
    total = len(sites)
    if total > limit:
        sites = sample(sites, limit)

    mutants = []
    for site in sites:
        built = build(tree, source, encoding, site)
        if built is None:
            continue
        mutated, original_line, mutated_line = built
        mutants.append({
            "line": site.start[0],
            "operator": site.operator,
            "original": original_line,
            "mutated": mutated_line,
            "source": base64.b64encode(mutated).decode("ascii"),
        })
    json.dump({"python": version, "sites": total, "mutants": mutants, "excluded": excluded}, sys.stdout)


main()
