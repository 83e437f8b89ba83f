"""Test helper: call grade(sample, item) of several graders and report each outcome.

Reads {"graders": {"name": "path/to/grader.py", ...},
       "calls": [{"grader": "name", "sample": {...}, "item": {...}}, ...]}
on stdin and writes one JSON line per call:
{"class": "ok" | "invalid_return" | "grader_exception", "score": float | null, "error": str | null}
classifying as gradegate's grader contract does: a bool, a non-number or a
non-finite number is invalid_return.
"""

import importlib.util
import json
import math
import sys

# Importing the graders must not leave __pycache__ folders in the repository.
sys.dont_write_bytecode = True


def load(name, path):
    spec = importlib.util.spec_from_file_location("grader_" + name.replace("-", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.grade


def main():
    request = json.load(sys.stdin)
    graders = {name: load(name, path) for name, path in request["graders"].items()}
    for call in request["calls"]:
        out = {"class": "ok", "score": None, "error": None}
        try:
            result = graders[call["grader"]](call["sample"], call["item"])
        except Exception as exc:  # the outcome under test, not an accident
            out.update({"class": "grader_exception", "error": type(exc).__name__ + ": " + str(exc)})
        else:
            if type(result) is bool or not isinstance(result, (int, float)) or not math.isfinite(result):
                out.update({"class": "invalid_return", "error": repr(result)})
            else:
                out["score"] = float(result)
        print(json.dumps(out))


if __name__ == "__main__":
    main()
