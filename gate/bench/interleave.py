#!/usr/bin/env python3
"""Wall time of gradegate commands on small suites, binaries interleaved.

Runs each gradegate binary given, in turn, N times on one manifest, and
prints the lowest and the median wall time of each. Interleaving puts every
binary under the same load, which on a shared machine moves from minute to
minute more than a small suite's run takes.

Usage (from the repository root):

  go build -o /tmp/gradegate ./cmd/gradegate
  git worktree add /tmp/old <rev> && (cd /tmp/old && go build -o /tmp/gg-old ./cmd/gradegate)
  /usr/bin/python3 gate/bench/interleave.py --binaries /tmp/gg-old,/tmp/gradegate \\
      --command run testdata/examples/order-summary/gradegate.yaml
"""

import argparse
import os
import statistics
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binaries", required=True, help="comma-separated gradegate binaries")
    ap.add_argument("--python", default="/usr/bin/python3", help="GRADEGATE_PYTHON for the commands")
    ap.add_argument("-n", type=int, default=10, help="runs of each binary")
    ap.add_argument("--command", required=True, choices=["run", "validate"])
    ap.add_argument("manifest")
    args = ap.parse_args()
    env = dict(os.environ, GRADEGATE_PYTHON=args.python)
    binaries = args.binaries.split(",")
    times = {b: [] for b in binaries}
    for _ in range(args.n):
        for b in binaries:
            start = time.monotonic()
            proc = subprocess.run([b, args.command, args.manifest, "--format", "json"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
            times[b].append(time.monotonic() - start)
            if proc.returncode not in (0, 1):
                sys.exit(f"{b} {args.command}: exit {proc.returncode}\n{proc.stderr.decode(errors='replace')[-2000:]}")
    print(f"| binary | {args.command} lowest ms | median ms |")
    print("|---|---:|---:|")
    for b in binaries:
        print(f"| {b} | {min(times[b]) * 1000:.0f} | {statistics.median(times[b]) * 1000:.0f} |")


if __name__ == "__main__":
    main()
