#!/usr/bin/env python3
"""The Python worker's own CPU per case, without gradegate, pipes or sandbox.

Loads a worker.py (the repository's by default) without running its main,
loads a one-line exact-match grader into a Worker as init would, and has
Worker.serve answer N request lines shaped as gradegate writes them (an
output_text and a 14-word item) from memory, its end markers and responses
going to /dev/null. It prints the process CPU time per case: what the
worker adds to the grader's own time on its common path (decode the
request, derive output_json, call grade, write the marker and the result),
which a run pays on every case. Compare two worker.py files in turn, in the
same session:

  git show main:gate/worker/worker.py > /tmp/worker_main.py
  for i in 1 2 3; do
    python3 gate/bench/serve.py /tmp/worker_main.py
    python3 gate/bench/serve.py gate/worker/worker.py
  done
"""

import base64
import io
import os
import sys
import time

GRADER = b'def grade(sample, item):\n    return 1.0 if sample["output_text"] == str(item["expected_total_cents"]) else 0.0\n'


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "worker", "worker.py")
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200000
    src = open(path).read().rstrip()
    if not src.endswith("main()"):
        sys.exit(f"{path}: does not end with main()")
    ns = {"__name__": "worker"}
    exec(compile(src[: -len("main()")], path, "exec"), ns)
    init = {"op": "init", "source": base64.b64encode(GRADER).decode(), "name": "grader.py", "contract": "sample",
            "metric": "score", "isolation": "worker", "memory_mb": 512, "output_limit": 65536, "grow_mb": 512,
            "cpu_seconds": 3000, "set_rlimit_as": False, "network_denied": False, "broker": False}
    worker = ns["Worker"](init)
    if worker.load(GRADER) is not None:
        sys.exit("the grader did not load")
    lines = b"".join(
        b'{"id":%d,"sample":{"output_text":"11574"},"item":{"case_id":"case-%07d","expected_total_cents":11574,'
        b'"slice":"refunds","currency":"USD","request":"missing shipped refund shipped warehouse package order '
        b'courier missing receipt shipped delayed ref %d"}}\n' % (i, i, i)
        for i in range(n))
    report = os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    # The worker writes end markers to fd 2 and responses to fd 4; what
    # the grader prints goes to the worker's capture, as in a run.
    os.dup2(null, 2)
    os.dup2(null, ns["RESP_FD"])
    out, err = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = worker.capture
    start = time.process_time()
    worker.serve(io.BufferedReader(io.BytesIO(lines), 1 << 16))
    took = time.process_time() - start
    sys.stdout, sys.stderr = out, err
    os.dup2(report, 2)
    if worker.cases != n:
        sys.exit(f"the worker answered {worker.cases} of {n} requests")
    print(f"{path}: {took / n * 1e6:.2f} µs of CPU a case over {n} cases")


if __name__ == "__main__":
    main()
