#!/usr/bin/env python3
"""Three tools on the same suites: a plain Python loop, gradegate run, promptfoo.

For each size asked for, generates scale.py's plain suite (an id, a total
and a slice per item; the grader passes when the sample names the expected
total), then times, in turn within each round:

  loop       a plain in-process Python loop over the two files (scale.py's)
  gradegate  gradegate run --format json (default isolation, sandbox on)
  promptfoo  promptfoo eval, the echo provider returning each case's
             output_text as the model output, and a Python assertion that
             calls the same grade(sample, item)

and prints the wall time of each (the lowest over the rounds), the ratio to
the loop in the same round, and the cases each tool counted as passed (all
three must agree, or the row says so).

promptfoo is installed from npm into --npm-dir (created, reused) with the
npm client: nothing global, no telemetry, no cache of results.

Usage (from the repository root):

  go build -o /tmp/gradegate ./cmd/gradegate
  /usr/bin/python3 gate/bench/peers.py --gradegate /tmp/gradegate --sizes 100,1000
"""

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scale  # noqa: E402  (the suites and the loop)

ASSERT = '''\
import os, sys
ns = {}
exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "grader.py")).read(), ns)
grade = ns["grade"]


def get_assert(output, context):
    item = dict(context["vars"])
    item.pop("output_text", None)
    return grade({"output_text": output}, item) >= 1.0
'''


def install_promptfoo(npm_dir, version):
    exe = os.path.join(npm_dir, "node_modules", ".bin", "promptfoo")
    try:
        with open(os.path.join(npm_dir, "node_modules", "promptfoo", "package.json")) as f:
            if json.load(f)["version"] == version and os.path.exists(exe):
                return exe
    except (OSError, ValueError, KeyError):
        pass
    os.makedirs(npm_dir, exist_ok=True)
    # A dependency's install script downloads a browser, which an eval of
    # the echo provider never starts.
    env = dict(os.environ, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1", PUPPETEER_SKIP_DOWNLOAD="1")
    subprocess.run(["npm", "install", "--prefix", npm_dir, "--no-audit", "--no-fund",
                    f"promptfoo@{version}"], check=True, stdout=subprocess.DEVNULL, env=env)
    return exe


def promptfoo_suite(path):
    """Writes promptfooconfig.yaml beside the suite: one test per case."""
    samples = {}
    with open(os.path.join(path, "samples.jsonl")) as f:
        for line in f:
            d = json.loads(line)
            samples[d["case_id"]] = d["sample"]["output_text"]
    tests = []
    with open(os.path.join(path, "cases.jsonl")) as f:
        for line in f:
            item = json.loads(line)["item"]
            tests.append({"vars": dict(item, output_text=samples[item["case_id"]])})
    with open(os.path.join(path, "pf_assert.py"), "w") as f:
        f.write(ASSERT)
    config = {
        "description": "gradegate peers benchmark",
        "prompts": ["{{output_text}}"],
        "providers": ["echo"],
        "defaultTest": {"assert": [{"type": "python", "value": "file://pf_assert.py"}]},
        "tests": tests,
    }
    # JSON is YAML: no YAML library needed.
    conf = os.path.join(path, "promptfooconfig.yaml")
    with open(conf, "w") as f:
        json.dump(config, f)
    return conf


def run(cmd, env, cwd=None):
    start = time.monotonic()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    return time.monotonic() - start, proc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gradegate", required=True)
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--dir", default="/tmp/gradegate-peers")
    ap.add_argument("--npm-dir", default="/tmp/gradegate-peers/npm")
    ap.add_argument("--promptfoo-version", default="0.118.17",
                    help="the last release line that runs on Node.js 20 (0.123 needs 22)")
    ap.add_argument("--sizes", default="100,1000")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--tools", default="loop,gradegate,promptfoo",
                    help="which of loop, gradegate, promptfoo to time (loop always runs: the ratios are over it)")
    ap.add_argument("--base-gradegate", default="",
                    help="another gradegate build, timed in the same rounds as gradegate@base")
    args = ap.parse_args()
    tools = set(args.tools.split(",")) | {"loop"}

    pf = install_promptfoo(args.npm_dir, args.promptfoo_version) if "promptfoo" in tools else None
    env = dict(os.environ, GRADEGATE_PYTHON=args.python, PROMPTFOO_DISABLE_TELEMETRY="1",
               PROMPTFOO_DISABLE_UPDATE="1", PROMPTFOO_PYTHON=args.python, NO_COLOR="1",
               PROMPTFOO_CONFIG_DIR=os.path.join(args.dir, "promptfoo-home"))
    heads = {"loop": "plain Python loop", "gradegate": "gradegate `run`", "gradegate@base": "gradegate `run` (base)",
             "promptfoo": f"promptfoo {args.promptfoo_version} (Python assertion, echo provider)"}
    order = [k for k in ("loop", "gradegate", "gradegate@base", "promptfoo")
             if k in tools or (k == "gradegate@base" and args.base_gradegate)]
    print("| cases | " + " | ".join(heads[k] for k in order) + " | passed (" + " / ".join(order) + ") |")
    print("|---:|" + "---:|" * len(order) + "---|")
    for n in [int(s) for s in args.sizes.split(",")]:
        path = os.path.join(args.dir, f"plain-{n}")
        scale.generate(path, n, "plain")
        man = os.path.join(path, "gradegate.yaml")
        subprocess.run([args.gradegate, "pin", man], check=True, stdout=subprocess.DEVNULL)
        out = os.path.join(path, "promptfoo-out.json")
        cmds = {"loop": ([args.python, "-c", scale.LOOP, path], None)}
        if "gradegate" in tools:
            cmds["gradegate"] = ([args.gradegate, "run", man, "--format", "json"], None)
        if args.base_gradegate:
            cmds["gradegate@base"] = ([args.base_gradegate, "run", man, "--format", "json"], None)
        if "promptfoo" in tools:
            conf = promptfoo_suite(path)
            cmds["promptfoo"] = ([pf, "eval", "-c", conf, "--no-cache", "--no-table", "--no-write",
                                  "--no-progress-bar", "-o", out], path)
        walls = {k: [] for k in cmds}
        ratios = {k: [] for k in cmds}
        passed = {}
        for _ in range(args.rounds):
            this = {}
            for what, (cmd, cwd) in cmds.items():
                wall, proc = run(cmd, env, cwd)
                this[what] = wall
                walls[what].append(wall)
                if what == "loop":
                    passed[what] = int(proc.stdout.decode().strip() or -1)
                elif what.startswith("gradegate"):
                    if proc.returncode not in (0, 1):
                        sys.exit(f"gradegate run failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
                    passed[what] = json.loads(proc.stdout)["counts"]["passed"]
                else:
                    try:
                        with open(out) as f:
                            stats = json.load(f)["results"]["stats"]
                        passed[what] = stats["successes"]
                    except (OSError, KeyError, ValueError):
                        sys.exit(f"promptfoo failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
            for what in cmds:
                ratios[what].append(this[what] / this["loop"])
        cells = []
        for what in cmds:
            w = min(walls[what])
            cell = f"{w:.3f} s" if w < 10 else f"{w:.1f} s"
            if what != "loop":
                r = sorted(ratios[what])
                cell += f" ({r[0]:.1f}×)" if len(r) == 1 or r[0] == r[-1] else f" ({r[0]:.1f}× to {r[-1]:.1f}×)"
            cells.append(cell)
        same = len(set(passed.values())) == 1
        counts = " / ".join(str(passed[k]) for k in cmds) + ("" if same else " (DIFFER)")
        print(f"| {n:,} | " + " | ".join(cells) + f" | {counts} |", flush=True)


if __name__ == "__main__":
    main()
