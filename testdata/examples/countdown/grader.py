"""Countdown: reach the target with each given number used at most once.

Scores 0-5 in the hosted grader's shape: the model answers with JSON
({"expression": "..."}), which arrives as sample["output_json"]. Prose or
JSON without an expression raises, and on_exception: zero grades it 0 as
the hosted grader does.
"""

import ast
import re

ALLOWED = (ast.Expression, ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Constant, ast.UnaryOp, ast.USub)


def evaluate(expression):
    tree = ast.parse(expression, mode="eval")
    for node in ast.walk(tree):
        if not isinstance(node, ALLOWED):
            raise ValueError("not arithmetic: %s" % type(node).__name__)
    return eval(compile(tree, "<expression>", "eval"), {"__builtins__": {}})


def grade(sample, item):
    expression = sample["output_json"]["expression"]
    used = [int(n) for n in re.findall(r"\d+", expression)]
    pool = list(item["numbers"])
    for n in used:
        if n not in pool:
            return 0
        pool.remove(n)
    value = evaluate(expression)
    distance = abs(value - item["target"])
    if distance == 0:
        return 5
    if distance <= 2:
        return 3
    if distance <= 10:
        return 1
    return 0
