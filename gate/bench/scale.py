#!/usr/bin/env python3
"""Scale benchmark: gradegate run / validate against a plain Python loop.

Generates suites (plain, and templated: a shared short field such as
"currency": "USD" plus a long text field with planted near duplicates) of
the sizes asked for, then measures, for each, the wall time, the CPU time and
the peak memory of the whole process tree (the sum over gradegate and every
process it starts, sampled every 10 ms, as RSS and as PSS; in a second run,
so the sampling does not take CPU from the timed one) of:

  loop      a plain in-process Python loop that reads the same two files,
            decodes each line and calls grade (no isolation)
  run       gradegate run --format json --results FILE (default isolation,
            sandbox on); with --format human, stdout is the default
            human report and the results file alone holds every row
  validate  gradegate validate --format json

The text14 kind is the templated suite with a 14-word request (12 random
words and "ref N") under the screen's defaults (on, every text compared);
text14-noscreen is the same rows with dataset.near_duplicates.enabled: false.

The labeled kinds are the templated suite with every label field on every
row (human_score, a human_reason of 2 to 9 words, rubric_version with 1%
stale, label_status with 1.5% disputed or novel, and two reviewer labels on
a fifth of the rows, a twentieth of those disagreeing) and planted near
duplicates whose labels differ, without a reason: "labeled" names only keys every build
reads (so a build without the label checks runs it as well, reading the
label fields as plain item fields), "labeled-keys" adds
gate.calibration.current_labels_only, require_reasons and min_agreement.

With --rounds N every command is timed N times, the commands in turn, and
the table gives the lowest and the median wall time, the median CPU time,
and the spread of run's time over the loop's in the same round.

The floor column is what the machine allows a run, from its own CPU time:
the tree's CPU spread perfectly over every core this benchmark may use
(CPU ÷ cores), as a multiple of the loop's wall time in the same round,
and how far the run's wall time is above it. A run whose floor is above a
target cannot reach it on this machine however its work is scheduled; it
needs less CPU.

Before the table it says how each gradegate binary is linked. Build it
static, as releases and the Action's image are: a cgo build (the go
command's default where a C compiler is installed) is linked dynamically,
and each of the seven gradegate processes of a run then starts through the
dynamic loader and libc, about 1.5 ms of CPU more each.

Usage (from the repository root):

  CGO_ENABLED=0 go build -o /tmp/gradegate ./cmd/gradegate
  /usr/bin/python3 gate/bench/scale.py --gradegate /tmp/gradegate \\
      --sizes 100000,1000000 --kinds plain,templated --what loop,run,validate

The suites are written under --dir (default /tmp/gradegate-scale) and reused.
"""

import argparse
import json
import os
import random
import resource
import statistics
import struct
import subprocess
import sys
import time

GRADER = '''\
def grade(sample, item):
    """1.0 when the answer names the expected total."""
    return 1.0 if sample["output_text"] == str(item["expected_total_cents"]) else 0.0
'''

WORDS = ("order refund parcel invoice shipped delayed customer account billing "
         "address courier warehouse return label discount coupon payment card "
         "receipt tracking number package box damaged missing replacement").split()


def manifest(kind):
    # The templated suite's screen compares the long text; "currency": "USD"
    # is a category, not text.
    nd = "  near_duplicates:\n    fields: [request]\n"
    if kind == "text14":
        nd = ""  # the screen's defaults: on, every text compared
    elif kind in ("plain", "text14-noscreen"):
        nd = "  near_duplicates:\n    enabled: false\n" if kind != "plain" else ""
    rubric = "rubric:\n  version: r3\n" if kind.startswith("labeled") else ""
    cal = ""
    if kind == "labeled-keys":
        cal = "  calibration:\n    current_labels_only: true\n    require_reasons: true\n    min_agreement: 0.2\n"
    return f'''version: 1
name: scale
dataset:
  path: cases.jsonl
  sha256: "0"
  fields: {{id: case_id, slice: slice, family: family, label: human_score}}
{nd}samples:
  path: samples.jsonl
{rubric}grader:
  type: python
  source: grader.py
  sha256: "0"
  contract: sample
  image_tag: "2025-05-08"
  timeout_seconds: 60
  memory_mb: 512
  metric: score
  pass_threshold: 1.0
  isolation: worker
gate:
  min_pass_rate: 0.5
  aggregation: row
{cal}canaries:
  - name: right-total
    sample: {{output_text: "1200"}}
    item: {{expected_total_cents: 1200}}
    expect: 1.0
  - name: wrong-total
    sample: {{output_text: "1201"}}
    item: {{expected_total_cents: 1200}}
    expect: 0.0
'''


def generate(path, n, kind):
    os.makedirs(path, exist_ok=True)
    done = os.path.join(path, ".done")
    if os.path.exists(done):
        with open(os.path.join(path, "gradegate.yaml"), "w") as f:
            f.write(manifest(kind))
        return
    rng = random.Random(n)
    texts = []
    with open(os.path.join(path, "cases.jsonl"), "w") as cases, \
         open(os.path.join(path, "samples.jsonl"), "w") as samples:
        for i in range(n):
            cid = f"case-{i:07d}"
            total = rng.randrange(100, 100000)
            item = {"case_id": cid, "expected_total_cents": total,
                    "slice": ["refunds", "shipping", "billing"][i % 3]}
            if kind != "plain":
                item["currency"] = "USD"
                if texts and i % 1000 == 7:
                    # A planted near duplicate: an earlier text with one more
                    # word (Jaccard similarity of 5-word shingles about 0.97).
                    text = rng.choice(texts) + " please"
                else:
                    words = 12 if kind.startswith("text14") else 40
                    text = " ".join(rng.choice(WORDS) for _ in range(words)) + f" ref {i}"
                if len(texts) < 2000:
                    texts.append(text)
                item["request"] = text
            if kind.startswith("labeled"):
                label = rng.randrange(2)
                if text.endswith(" please"):
                    label = 1 - label  # a near duplicate that disagrees
                item["human_score"] = label
                item["human_reason"] = " ".join(rng.choice(WORDS) for _ in range(rng.choice((2, 6, 9))))
                if text.endswith(" please"):
                    del item["human_reason"]  # so nothing explains the other label
                item["rubric_version"] = "r2" if i % 100 == 3 else "r3"
                if i % 200 == 5:
                    item["label_status"] = "disputed" if i % 400 == 5 else "novel"
                if i % 5 == 1:
                    other = 1 - label if i % 100 == 1 else label
                    item["reviewer_labels"] = [
                        {"reviewer": "ana", "score": label, "reason": item["human_reason"]},
                        {"reviewer": "ben", "score": other, "reason": "reads the policy the same way here"}]
            elif i % 10 == 0:
                item["human_score"] = 1
            cases.write(json.dumps({"item": item}) + "\n")
            out = str(total) if rng.random() < 0.9 else str(total + 1)
            samples.write(json.dumps({"case_id": cid, "sample": {"output_text": out}}) + "\n")
    with open(os.path.join(path, "grader.py"), "w") as f:
        f.write(GRADER)
    with open(os.path.join(path, "gradegate.yaml"), "w") as f:
        f.write(manifest(kind))
    open(done, "w").close()


LOOP = '''\
import json, sys
ns = {}
exec(open(sys.argv[1] + "/grader.py").read(), ns)
grade = ns["grade"]
samples = {}
with open(sys.argv[1] + "/samples.jsonl", "rb") as f:
    for line in f:
        d = json.loads(line)
        samples[d["case_id"]] = d["sample"]
passed = 0
with open(sys.argv[1] + "/cases.jsonl", "rb") as f:
    for line in f:
        item = json.loads(line)["item"]
        passed += grade(samples[item["case_id"]], item) >= 1.0
print(passed)
'''


def proc_stats():
    """(pid, program name, the fields after it) of every process's
    /proc/PID/stat; a process that ends while it is read is left out."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        yield int(pid), stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()


def tree_memory(root):
    """(RSS, PSS) in kB summed over root and its descendants.

    RSS counts a page shared by two processes twice; PSS splits it among
    its sharers. A child that gradegate has cloned to start a worker shares
    gradegate's whole address space until it execs (neither RSS nor PSS can
    tell): such a child still has its parent's command line, and is
    skipped. gradegate's own child (the run under its keeper process) has
    the root's command line too, and is counted.
    """
    parent = {}
    cmdline = {}
    for pid, _, fields in proc_stats():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline[pid] = f.read()
            parent[pid] = int(fields[1])
        except (OSError, ValueError, IndexError):
            continue
    rss = pss = 0
    for pid in parent:
        p = pid
        while p in parent and p != root and p > 1:
            p = parent[p]
        if p != root:
            continue
        if pid != root and parent[pid] != root and cmdline.get(pid) == cmdline.get(parent[pid]):
            continue  # cloned, not yet exec'd: its parent's own pages
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
        except OSError:
            continue
    return rss, pss


def timed(cmd, env):
    """(wall, CPU of the whole tree, exit code, stderr) of one run, unobserved."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU of the whole tree (every process waited for): on a shared machine
    # the wall time says more about the neighbours than about gradegate.
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.returncode, proc.stderr.decode(errors="replace")


def peak_memory(cmd, env):
    """Peak (RSS, PSS) of the whole tree in MB, sampled every 10 ms."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    peak_rss = peak_pss = 0
    while proc.poll() is None:
        rss, pss = tree_memory(proc.pid)
        peak_rss, peak_pss = max(peak_rss, rss), max(peak_pss, pss)
        time.sleep(0.01)
    return peak_rss / 1024, peak_pss / 1024


def floor_text(walls, cpus, loops, cores):
    """The floor column: the medians, over the rounds, of the run's CPU ÷
    cores over the loop's wall time of the same round, and of the run's
    wall time over that floor."""
    floors = [cpu / cores for cpu in cpus]
    over_loop = statistics.median(f / loop for f, loop in zip(floors, loops))
    above = statistics.median(w / f for w, f in zip(walls, floors) if f > 0)
    return f"{over_loop:.2f}× ({above:.2f}×)"


def linkage(path):
    """How the ELF binary at path is linked: "static", or "dynamic"
    when it names a program interpreter (PT_INTERP, the dynamic loader)."""
    with open(path, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2:
            return "not a 64-bit ELF binary"
        order = "<" if head[5] == 1 else ">"
        phoff, = struct.unpack_from(order + "Q", head, 32)
        phentsize, phnum = struct.unpack_from(order + "HH", head, 54)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    for i in range(phnum):
        kind, = struct.unpack_from(order + "I", table, i * phentsize)
        if kind == 3:  # PT_INTERP
            return "dynamic (cgo; releases are static: CGO_ENABLED=0)"
    return "static"


def secs(x):
    """Seconds as the tables print them: to the millisecond under a second,
    where a small suite's differences are, else to the hundredth."""
    return f"{x:.3f}" if x < 1 else f"{x:.2f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gradegate", required=True)
    ap.add_argument("--base-gradegate", default="",
                    help="another build (main's) whose run and validate are timed in the same rounds, as 'run@base' and 'validate@base' (not on the labeled-keys kind, whose keys it may not read)")
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--dir", default="/tmp/gradegate-scale")
    ap.add_argument("--sizes", default="100000")
    ap.add_argument("--kinds", default="plain")
    ap.add_argument("--what", default="loop,run")
    ap.add_argument("--rounds", type=int, default=1,
                    help="time every command this many times, in turn, and give the lowest and the median")
    ap.add_argument("--workers", default="")
    ap.add_argument("--format", default="json", choices=("json", "human"),
                    help="run's stdout: json (the whole document, as in the earlier tables) or human (the default report; the results file still holds every row)")
    ap.add_argument("--run-args", default="", help="more arguments for run, e.g. '--shard 1/10' to read every row and grade a tenth")
    args = ap.parse_args()
    for name, path in (("gradegate", args.gradegate), ("base", args.base_gradegate)):
        if path:
            print(f"{name}: {path}, {linkage(path)}")
    print()
    cores = len(os.sched_getaffinity(0))
    print(f"cores: {cores} (the floor is the tree's CPU over {cores})")
    print()
    print("| suite | cases | what | wall s | CPU s (tree) | peak tree RSS MB | peak tree PSS MB | run ÷ loop | floor ÷ loop (run ÷ floor) | exit |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for kind in args.kinds.split(","):
        for n in [int(s) for s in args.sizes.split(",")]:
            path = os.path.join(args.dir, f"{kind}-{n}")
            generate(path, n, kind)
            man = os.path.join(path, "gradegate.yaml")
            subprocess.run([args.gradegate, "pin", man], check=True, stdout=subprocess.DEVNULL)
            env = dict(os.environ, GRADEGATE_PYTHON=args.python)
            cmds = {}
            for what in args.what.split(","):
                if what == "loop":
                    cmd = [args.python, "-c", LOOP, path]
                elif what == "run":
                    cmd = [args.gradegate, "run", man, "--format", args.format, "--results", os.path.join(path, "results.json")]
                    if args.workers:
                        cmd += ["--workers", args.workers]
                    cmd += args.run_args.split()
                    if args.base_gradegate:
                        cmds["run@base"] = [args.base_gradegate] + cmd[1:]
                elif what == "validate":
                    cmd = [args.gradegate, "validate", man, "--format", "json"]
                else:
                    sys.exit(f"unknown --what {what}")
                cmds[what] = cmd
                if args.base_gradegate and what != "loop" and kind != "labeled-keys":
                    cmds[what + "@base"] = [args.base_gradegate] + cmd[1:]
            # Every command once a round, in turn, so that each sees the
            # same load; the time is taken with nothing watching, because
            # sampling /proc every 20 ms costs a share of a core, which a
            # single-threaded loop never misses and a run that keeps both
            # cores busy does. The memory is sampled in one more run.
            walls = {what: [] for what in cmds}
            cpus = {what: [] for what in cmds}
            codes = {}
            for _ in range(args.rounds):
                for what, cmd in cmds.items():
                    wall, cpu, code, err = timed(cmd, env)
                    walls[what].append(wall)
                    cpus[what].append(cpu)
                    codes[what] = code
                    if code not in (0, 1):
                        print(err[-2000:], file=sys.stderr)
            for what, cmd in cmds.items():
                peak, pss = peak_memory(cmd, env)
                w = sorted(walls[what])
                wall = secs(w[0]) if len(w) == 1 else f"{secs(w[0])} / {secs(statistics.median(w))}"
                ratio = ""
                over = "loop" if "loop" in cmds else ""
                if what == "run@base":
                    over = "run"
                if (what == "run" and over) or what == "run@base":
                    r = sorted(a / b for a, b in zip(walls[what], walls[over]))
                    ratio = f"{r[0]:.2f}×" if len(r) == 1 else f"{r[0]:.2f}× to {r[-1]:.2f}×, median {statistics.median(r):.2f}×"
                    if what == "run@base":
                        ratio = "base ÷ run " + ratio
                floor = ""
                if what.startswith("run") and "loop" in cmds:
                    floor = floor_text(walls[what], cpus[what], walls["loop"], cores)
                label = what + (" " + args.run_args if what == "run" and args.run_args else "")
                print(f"| {kind} | {n} | {label} | {wall} | {secs(statistics.median(cpus[what]))} | {peak:.0f} | {pss:.0f} | {ratio} | {floor} | {codes[what]} |", flush=True)


if __name__ == "__main__":
    main()
