#!/usr/bin/env python3
"""How many cores the machine keeps busy while a command runs.

Runs the command and reads /proc/stat every 250 ms, then prints the wall
time and, for each interval, the busy cores (every core's time but idle
and iowait, as a count of cores): a run that keeps both cores of a 2-core
machine busy reads near 2.0, and a stage that runs on one core alone near
1.0. It counts the whole machine, so run it on a quiet one.

Usage (from a suite's folder, e.g. one scale.py wrote):

  python3 gate/bench/busy.py /tmp/gradegate run gradegate.yaml --results results.json
"""

import subprocess
import sys
import time


def stat():
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return sum(fields), fields[3] + fields[4]


def main():
    cmd = sys.argv[1:]
    if not cmd:
        sys.exit(__doc__)
    with open("/proc/stat") as f:
        cores = sum(1 for line in f if line.startswith("cpu") and line[3:4].isdigit())
    start = time.monotonic()
    last = stat()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    busy = []
    while proc.poll() is None:
        time.sleep(0.25)
        now = stat()
        total, idle = now[0] - last[0], now[1] - last[1]
        last = now
        busy.append(cores * (total - idle) / max(total, 1))
    print(f"wall {time.monotonic() - start:.2f} s, exit {proc.returncode}, {cores} cores")
    print("busy cores every 250 ms: " + " ".join(f"{b:.1f}" for b in busy))


if __name__ == "__main__":
    main()
