"""Write a large copy of the order-summary suite for timing runs.

    python3 testdata/perf/suite.py OUT_DIR [CASES]

OUT_DIR gets cases.jsonl and samples.jsonl with CASES rows (default 100000;
one stored answer in ten is wrong), the example grader, and gradegate-200.yaml
and gradegate-0.yaml, the same manifest with gate.determinism.sample 200 and 0,
pinned. Every case is in one slice and carries human_score 1.
"""

import hashlib
import json
import os
import random
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "order-summary")
WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi "
         "omicron pi rho sigma tau upsilon phi chi psi omega").split()


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
    os.makedirs(out, exist_ok=True)
    rng = random.Random(1)
    with open(os.path.join(out, "cases.jsonl"), "w") as cases, open(os.path.join(out, "samples.jsonl"), "w") as samples:
        for i in range(n):
            cid = "case-%06d" % i
            total = rng.randint(1, 99999)
            item = {"case_id": cid, "slice": "main", "family": "f%d" % (i % 500), "human_score": 1,
                    "request": " ".join(rng.choice(WORDS) for _ in range(12)) + " %d" % i,
                    "expected_status": "approved", "expected_currency": "USD", "expected_total_cents": total}
            cases.write(json.dumps({"item": item}) + "\n")
            answer = {"status": "approved", "currency": "USD", "total_cents": total if i % 10 else total + 1}
            samples.write(json.dumps({"case_id": cid, "sample": {"output_text": json.dumps(answer)}}) + "\n")
    shutil.copy(os.path.join(EXAMPLE, "grader.py"), os.path.join(out, "grader.py"))
    with open(os.path.join(EXAMPLE, "gradegate.yaml")) as f:
        example = f.read()
    canaries = example[example.index("canaries:"):example.index("gate:")]
    grader = example[example.index("grader:"):example.index("# Each canary pins")]
    start = grader.index("sha256:")
    grader = grader[:start] + 'sha256: "%s"' % sha(os.path.join(out, "grader.py")) + grader[grader.index("\n", start):]
    for sample in (200, 0):
        manifest = ("version: 1\nname: order-summary-large\n\n"
                    "dataset:\n  path: cases.jsonl\n  sha256: \"%s\"\n  intended_cases: %d\n"
                    "  near_duplicates:\n    threshold: 0.99\n    fields: [request]\n\n"
                    "samples:\n  path: samples.jsonl\n  sha256: \"%s\"\n\n"
                    % (sha(os.path.join(out, "cases.jsonl")), n, sha(os.path.join(out, "samples.jsonl"))))
        manifest += grader + canaries + "gate:\n  min_pass_rate: 0.85\n  determinism: {sample: %d}\n" % sample
        with open(os.path.join(out, "gradegate-%d.yaml" % sample), "w") as f:
            f.write(manifest)


main()
