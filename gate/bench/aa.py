#!/usr/bin/env python3
"""A/A benchmark: how often the verdict flips when nothing changed.

The same suite is graded --runs times by a score_model grader whose judge is
a noisy fake (an HTTP server on 127.0.0.1 speaking OpenAI's chat completions
and responses shapes): each case carries its probability p of being judged
a pass, and every call draws afresh. Nothing about the suite, the candidate
outputs or the grader changes between runs, so every difference between two
verdicts is the judge's noise reaching the gate.

Scenarios (each graded --runs times):

  borderline/point        a mandatory slice whose expected pass rate sits at
  borderline/lower_bound  its min_pass_rate (0.9): 100 cases at p=0.99 and
                          20 at p=0.5 (expected 0.908)
  clear/point             the same slice with every case at p=0.99
  clear/lower_bound       (expected 0.99)
  baseline/old            the borderline cases in a slice that cannot hold;
  baseline/new            each run set beside the previous run's results
                          with --baseline, gate.baseline.max_drop 0.02:
                          alpha 1 (the drop alone holds) against alpha 0.05
                          (the drop must also pass the McNemar test). The
                          base moves with the runs: against one fixed base a
                          lucky base makes every later run look worse, and
                          that is the base's noise, not the head's.

For each it prints the share of runs that held, the flip rate (the chance
that two gradings of the same suite disagree, 2·p·(1−p) for a hold share p),
the share of runs that disagree with the majority verdict, and the hold
reasons seen.

Usage (from the repository root):

  go build -o /tmp/gradegate ./cmd/gradegate
  /usr/bin/python3 gate/bench/aa.py --gradegate /tmp/gradegate --runs 200

Suites are written under --dir (default /tmp/gradegate-aa).
"""

import argparse
import collections
import json
import os
import random
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KEY = "sk-aa-benchmark"

MANIFEST = """version: 1
name: aa-{name}
dataset:
  path: cases.jsonl
  sha256: "0"
grader:
  type: score_model
  name: noisy_judge
  model: gpt-4o-mini-2024-07-18
  input:
    - role: system
      content: Score 5 when the answer is right, 1 otherwise.
    - role: user
      content: "Case {{{{item.case_id}}}} p={{{{item.p}}}} Answer: {{{{sample.output_text}}}}"
  range: [1, 5]
  pass_threshold: 4
  max_calls: 1000000
canaries:
  - name: right
    sample: {{output_text: "right"}}
    item: {{case_id: canary-right, p: 1}}
    expect: 5
  - name: wrong
    sample: {{output_text: "wrong"}}
    item: {{case_id: canary-wrong, p: 0}}
    expect: 1
gate:
  min_pass_rate: 0
  determinism: {{sample: 0}}
{gate}"""


class Judge(BaseHTTPRequestHandler):
    rng = random.Random(1)
    lock = threading.Lock()

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        msgs = body.get("messages") or body.get("input") or []
        prompt = "\n".join(m.get("content", "") if isinstance(m.get("content"), str) else json.dumps(m.get("content")) for m in msgs)
        m = re.search(r"p=([0-9.]+)", prompt)
        p = float(m.group(1)) if m else 0.0
        with Judge.lock:
            draw = Judge.rng.random()
        text = json.dumps(json.dumps({"steps": [], "result": 5 if draw < p else 1}))
        if self.path.endswith("/responses"):
            out = ('{"id":"resp_1","object":"response","model":"%s","output":[{"type":"message","role":"assistant",'
                   '"content":[{"type":"output_text","text":%s,"annotations":[]}]}],'
                   '"usage":{"input_tokens":40,"output_tokens":7,"total_tokens":47}}') % (body.get("model"), text)
        else:
            out = ('{"id":"chatcmpl-1","object":"chat.completion","model":"%s","choices":[{"index":0,'
                   '"message":{"role":"assistant","content":%s,"refusal":null},"finish_reason":"stop"}],'
                   '"usage":{"prompt_tokens":40,"completion_tokens":7,"total_tokens":47}}') % (body.get("model"), text)
        data = out.encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def suite(root, name, borderline_p, gate):
    path = os.path.join(root, name)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "cases.jsonl"), "w") as f:
        for i in range(120):
            p = 0.99 if i < 100 else borderline_p
            item = {"case_id": f"case-{i:03d}", "slice": "core", "p": p}
            f.write(json.dumps({"item": item, "sample": {"output_text": f"answer {i}"}}) + "\n")
    man = os.path.join(path, "gradegate.yaml")
    with open(man, "w") as f:
        f.write(MANIFEST.format(name=name, gate=gate))
    return man


def run(args, env, man, extra):
    cmd = [args.gradegate, "run", man, "--workers", str(args.workers)] + extra
    p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr}")
    return p.returncode


def reasons_of(results):
    with open(results) as f:
        doc = json.load(f)
    return sorted({r["code"] for r in doc["reasons"]})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gradegate", required=True)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--dir", default="/tmp/gradegate-aa")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default="", help="comma-separated scenario names to run (default: all)")
    args = ap.parse_args()
    Judge.rng = random.Random(args.seed)
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Judge)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    env = dict(os.environ, OPENAI_API_KEY=KEY, OPENAI_BASE_URL=f"http://127.0.0.1:{srv.server_port}/v1")

    core = "  slices:\n    core: {{mandatory: true, min_pass_rate: 0.9}}\n"
    rule = "  confidence: {{rule: {rule}}}\n"
    scenarios = []
    for name, bp in (("borderline", 0.5), ("clear", 0.99)):
        for r in ("point", "lower_bound"):
            scenarios.append((f"{name}/{r}", bp, core.format() + rule.format(rule=r), False))
    free = "  slices:\n    core: {min_pass_rate: 0}\n  baseline: {max_drop: 0.02, alpha: %s}\n"
    scenarios.append(("baseline/old (alpha 1)", 0.5, free % "1", True))
    scenarios.append(("baseline/new (alpha 0.05)", 0.5, free % "0.05", True))
    only = set(filter(None, args.only.split(",")))

    print(f"| scenario | runs | held | flip rate 2p(1−p) | off the majority | hold reasons |")
    print("|---|---:|---:|---:|---:|---|")
    for name, bp, gate, baseline in scenarios:
        if only and name.split(" ")[0] not in only:
            continue
        man = suite(args.dir, name.split(" ")[0].replace("/", "-"), bp, gate)
        subprocess.run([args.gradegate, "pin", man], check=True, stdout=subprocess.DEVNULL)
        base = os.path.join(os.path.dirname(man), "base.json")
        extra = []
        if baseline:
            run(args, env, man, ["--results", base])
            extra = ["--baseline", base]
        held, seen = 0, collections.Counter()
        out = os.path.join(os.path.dirname(man), "head.json")
        for _ in range(args.runs):
            if run(args, env, man, extra + ["--results", out]) == 1:
                held += 1
                for code in reasons_of(out):
                    seen[code] += 1
            if baseline:
                os.replace(out, base)
        p = held / args.runs
        codes = ", ".join(f"{c} ×{n}" for c, n in seen.most_common()) or "—"
        print(f"| {name} | {args.runs} | {held} ({p:.0%}) | {2 * p * (1 - p):.1%} | {min(p, 1 - p):.1%} | {codes} |", flush=True)
    srv.shutdown()


if __name__ == "__main__":
    main()
