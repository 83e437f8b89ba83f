#!/usr/bin/env python3
"""Mutation scores of graders that fork, over repeated runs.

Builds two variants of the order-summary example's grader in a scratch
directory (each with the example's manifest, dataset and canaries, digests
re-pinned): one that runs a Python subprocess for every case
(subprocess.run of the grading interpreter) and one that computes a length
in a forked child (os.fork, a pipe, waitpid). Each is mutation-tested
--runs times with `gradegate mutate --format json`; for each it prints
every run's score, the counts (killed, survived, equivalent-suspect,
timeout-killed, not graded) and wall time, and whether every run gave the
same report mutant by mutant.

  go build -o /tmp/gradegate ./cmd/gradegate
  python3 gate/bench/mutate_fork.py --gradegate /tmp/gradegate --runs 10
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "testdata", "examples", "order-summary")
HEAD = "def grade(sample, item):\n    status, currency, total = _expectations(item)\n"

VARIANTS = {
    "subprocess": (
        "import subprocess\nimport sys\n",
        HEAD + '    subprocess.run([sys.executable, "-c", "pass"], check=True, capture_output=True)\n',
    ),
    "os.fork": (
        "import os\n",
        "def _forked_len(text):\n"
        "    r, w = os.pipe()\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        os.close(r)\n"
        "        os.write(w, str(len(text)).encode())\n"
        "        os._exit(0)\n"
        "    os.close(w)\n"
        "    data = os.read(r, 64)\n"
        "    os.close(r)\n"
        "    os.waitpid(pid, 0)\n"
        "    return int(data)\n\n\n"
        + HEAD
        + "    if _forked_len(str(sample)) < 0:\n        return 0.0\n",
    ),
}


def build(root, name, gradegate):
    d = os.path.join(root, name.replace(".", "_"))
    shutil.copytree(EXAMPLE, d)
    path = os.path.join(d, "grader.py")
    with open(path) as f:
        src = f.read()
    imports, body = VARIANTS[name]
    src = src.replace("import json\n", "import json\n" + imports, 1).replace(HEAD, body, 1)
    with open(path, "w") as f:
        f.write(src)
    subprocess.run([gradegate, "pin", os.path.join(d, "gradegate.yaml")], check=True, capture_output=True)
    return d


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gradegate", required=True)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--only", choices=sorted(VARIANTS), help="one variant only")
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="mutate-fork-")
    exact = True
    try:
        for name in sorted(VARIANTS):
            if args.only and name != args.only:
                continue
            d = build(root, name, args.gradegate)
            reports = []
            for i in range(args.runs):
                start = time.monotonic()
                p = subprocess.run([args.gradegate, "mutate", os.path.join(d, "gradegate.yaml"), "--format", "json"],
                                   capture_output=True, text=True)
                took = time.monotonic() - start
                r = json.loads(p.stdout)
                reports.append(r)
                print("%-10s run %2d  score %.4f  killed %2d survived %2d suspect %d timeout_killed %d not_graded %d  %6.1f s"
                      % (name, i + 1, r["score"], r["killed"], r["survived"], r["equivalent_suspect"],
                         r.get("timeout_killed", 0), r["not_graded"], took), flush=True)
            shape = [[(m["id"], m["status"], m.get("suspect", ""), tuple(m["killed_by"])) for m in r["mutants"]] for r in reports]
            same = all(s == shape[0] for s in shape)
            exact = exact and same
            print("%-10s scores %s; every run the same report: %s" % (name, sorted({r["score"] for r in reports}), same))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if exact else 1


if __name__ == "__main__":
    sys.exit(main())
