#!/usr/bin/env python3
"""CPU time of a command's process tree, split by program name.

Runs the command and reads /proc every 100 ms for the CPU time of every
gradegate and Python process (the last reading of each process counts, so a
process that exits loses at most 100 ms), then prints the wall time, the
tree's CPU time as the kernel accounts it to the waited-for children, and
the split. The reading itself takes a share of a core, so time the command
unobserved (scale.py) for its wall time, and use this for the shares.

Usage (from a suite's folder, e.g. one scale.py wrote):

  python3 gate/bench/cpusplit.py /tmp/gradegate run gradegate.yaml --results results.json
"""

import os
import resource
import subprocess
import sys
import time

from scale import proc_stats

NAMES = ("gradegate", "python3", "python3.11", "exe")


def main():
    cmd = sys.argv[1:]
    if not cmd:
        sys.exit(__doc__)
    hz = os.sysconf("SC_CLK_TCK")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen = {}
    while proc.poll() is None:
        for pid, comm, fields in proc_stats():
            if comm in NAMES:
                seen[(pid, comm)] = (int(fields[11]) + int(fields[12])) / hz
        time.sleep(0.1)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    tree = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    split = {}
    for (_, comm), cpu in seen.items():
        split[comm] = split.get(comm, 0.0) + cpu
    parts = ", ".join(f"{k} {v:.2f} s" for k, v in sorted(split.items(), key=lambda kv: -kv[1]))
    print(f"wall {wall:.2f} s, tree CPU {tree:.2f} s; by program: {parts}; exit {proc.returncode}")


if __name__ == "__main__":
    main()
