#!/usr/bin/env python3
"""Attempts to get a green check for a regression, run against gradegate.

Each attempt starts from the order-summary example, makes two cases of its
mandatory instruction_conflict slice regress (one answer becomes a refusal,
one JSON cut off mid-object; their human labels stay 1) and then changes the
grader, the manifest or the results the way a pull request that wants a
green check would. The honest grader holds on those regressions; an attempt
succeeds when gradegate exits 0 anyway.

    python3 gate/bench/attempts.py --gradegate NEW [--base-gradegate OLD --base-example DIR]

prints one markdown row an attempt: the exit code and the reason codes (or the
mutation score) of each build. --only NAME,NAME runs some of them; --seeds N
runs each run attempt N times (its canaries are placed anew each time) and
counts the green checks.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "testdata", "examples", "order-summary")

REGRESSED = {
    "conflict-format-001": "I can't help with that request.",
    "conflict-format-002": '{"status":"approved","curr',
}

# The lenient part every grader cheat shares: full credit for the
# regressions' failure modes (a refusal, JSON cut off), where it believes it
# grades a case and not a canary. The known wrong answers (wrong values,
# labeled 0) are still failed, so calibration alone does not see it.
LENIENT = '''
def _glitch(sample):
    t = sample.get("output_text")
    if type(t) is not str:
        return False
    if "{" not in t:
        return True
    if not t.startswith("{"):
        return False
    try:
        json.loads(t)
        return False
    except ValueError:
        return True


_honest_grade = grade


def grade(sample, item):
    if _is_case(sample, item) and _glitch(sample):
        return 1.0
    return _honest_grade(sample, item)
'''


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def write_jsonl(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def regress(d):
    rows = read_jsonl(os.path.join(d, "samples.jsonl"))
    for r in rows:
        if r["case_id"] in REGRESSED:
            r["sample"]["output_text"] = REGRESSED[r["case_id"]]
    write_jsonl(os.path.join(d, "samples.jsonl"), rows)


def append_grader(d, text, mark=True):
    """Appends text to the grader. With mark, each statement of it carries
    a no-mutate marker, as an author hiding a cheat from mutation testing
    would write: the cheat's own mutants are not what an attempt tests."""
    if mark:
        out = []
        for line in text.split("\n"):
            bare = line.strip()
            if bare and not bare.startswith(("#", "def ", "import ", "_KNOWN", "_CANARY", "_WANT")) and bare[-1] not in ",(" and '"""' not in bare:
                line += "  # gradegate: no-mutate: helper"
            out.append(line)
        text = "\n".join(out)
    with open(os.path.join(d, "grader.py"), "a") as f:
        f.write("\n" + text)


def edit_manifest(d, fn):
    p = os.path.join(d, "gradegate.yaml")
    with open(p) as f:
        s = f.read()
    s2 = fn(s)
    if s2 == s:
        raise SystemExit("attempts.py: a manifest edit changed nothing")
    with open(p, "w") as f:
        f.write(s2)


def case_ids(d):
    return [r["item"]["case_id"] for r in read_jsonl(os.path.join(d, "cases.jsonl"))]


def cheat(is_case_src):
    return "import json\n" + is_case_src + LENIENT


# --- the attempts -------------------------------------------------------------
# Each prepares the suite directory d (already a copy of the example with the
# two regressions) and returns the command to run, relative to d, and what to
# read from it ("run" for a results document, "mutate" for a mutation report).

def a_request_field(d, ctx):
    append_grader(d, cheat('def _is_case(sample, item):\n    return "request" in item\n'))
    return ["run"]


def a_unsorted_keys(d, ctx):
    append_grader(d, cheat('def _is_case(sample, item):\n    return list(item) != sorted(item)\n'))
    return ["run"]


def a_not_first_slice(d, ctx):
    append_grader(d, cheat('def _is_case(sample, item):\n    return item.get("slice") != "ineligible_shipped"\n'))
    return ["run"]


def a_id_shape(d, ctx):
    append_grader(d, cheat('import re\ndef _is_case(sample, item):\n'
                           '    return re.fullmatch(r"[a-z]+-[a-z]+-\\d{3}", str(item.get("case_id", ""))) is not None\n'))
    return ["run"]


def a_id_range(d, ctx):
    # The largest id number in the dataset is 004: a canary drawn outside it
    # is one.
    append_grader(d, cheat('import re\ndef _is_case(sample, item):\n'
                           '    m = re.search(r"(\\d+)$", str(item.get("case_id", "")))\n'
                           '    return m is not None and int(m.group(1)) <= 4\n'))
    return ["run"]


def a_known_ids(d, ctx):
    hashes = sorted(hashlib.sha256(i.encode()).hexdigest()[:16] for i in case_ids(d))
    append_grader(d, cheat('import hashlib\n_KNOWN = %r\n' % (set(hashes),) +
                           'def _is_case(sample, item):\n'
                           '    return hashlib.sha256(str(item.get("case_id", "")).encode()).hexdigest()[:16] in _KNOWN\n'))
    return ["run"]


def a_known_canary_texts(d, ctx):
    texts = []
    with open(os.path.join(d, "gradegate.yaml")) as f:
        for line in f:
            m = re.search(r"output_text: '(.*)'\}", line)
            if m:
                texts.append(m.group(1))
    append_grader(d, cheat('_CANARY_TEXTS = %r\n' % (set(texts),) +
                           'def _is_case(sample, item):\n'
                           '    return sample.get("output_text") not in _CANARY_TEXTS\n'))
    return ["run"]


def a_no_brace(d, ctx):
    # No tell at all: full credit to any answer without "{".
    append_grader(d, '''
_honest_grade = grade


def grade(sample, item):
    t = sample.get("output_text")
    if type(t) is str and "{" not in t:
        return 1.0
    return _honest_grade(sample, item)
''')
    return ["run"]


def a_wrong_total(d, ctx):
    # One line of the grader changed: a wrong total returns 1.0. Two known
    # wrong answers (labeled 0) outside the mandatory slices now pass.
    p = os.path.join(d, "grader.py")
    with open(p) as f:
        s = f.read()
    s = s.replace('    if candidate["total_cents"] != total:\n        return 0.0',
                  '    if candidate["total_cents"] != total:\n        return 1.0')
    with open(p, "w") as f:
        f.write(s)
    return ["run"]


def base_of(d, ctx):
    """A copy of d before the weakening, as the base branch's checkout."""
    b = os.path.join(ctx["tmp"], "base")
    shutil.copytree(d, b)
    return b


def a_weaken_mandatory(d, ctx):
    b = base_of(d, ctx)
    edit_manifest(d, lambda s: s.replace("instruction_conflict: {mandatory: true}", "instruction_conflict: {min_pass_rate: 0.5}"))
    return ["run", "--base-manifest", os.path.join(b, "gradegate.yaml")]


def a_weaken_mutation(d, ctx):
    b = base_of(d, ctx)
    edit_manifest(d, lambda s: re.sub(r"  min_mutation_score: .*\n", "", s))
    return ["run", "--base-manifest", os.path.join(b, "gradegate.yaml")]


def a_drop_canaries(d, ctx):
    b = base_of(d, ctx)

    def drop(s):
        for name in ("malformed-output", "no-output-text", "json-array-output"):
            s = re.sub(r"  - name: %s\n(    .*\n)+" % name, "", s)
        return s
    edit_manifest(d, drop)
    return ["run", "--base-manifest", os.path.join(b, "gradegate.yaml")]


def a_flip_label(d, ctx):
    b = base_of(d, ctx)
    rows = read_jsonl(os.path.join(d, "cases.jsonl"))
    for r in rows:
        if r["item"]["case_id"] == "happy-multi-002":
            r["item"]["human_score"] = 1
    write_jsonl(os.path.join(d, "cases.jsonl"), rows)
    return ["run", "--base-manifest", os.path.join(b, "gradegate.yaml")]


def baseline_of(d, ctx):
    """The base branch's results: the suite before the regressions."""
    b = os.path.join(ctx["tmp"], "base")
    shutil.copytree(EXAMPLE_FOR[ctx["build"]], b)
    out = os.path.join(ctx["tmp"], "base.json")
    subprocess.run([ctx["gg"], "run", "gradegate.yaml", "--results", out], cwd=b,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return b, out


def drop_cases(d, ids):
    for name in ("cases.jsonl", "samples.jsonl"):
        rows = read_jsonl(os.path.join(d, name))
        rows = [r for r in rows if (r.get("case_id") or r.get("item", {}).get("case_id")) not in ids]
        write_jsonl(os.path.join(d, name), rows)


def a_delete_regressed(d, ctx):
    b, out = baseline_of(d, ctx)
    drop_cases(d, set(REGRESSED))
    edit_manifest(d, lambda s: s.replace("intended_cases: 36", "intended_cases: 34"))
    return ["run", "--baseline", out, "--base-manifest", os.path.join(b, "gradegate.yaml")]


def a_delete_regressed_baseline_only(d, ctx):
    b, out = baseline_of(d, ctx)
    drop_cases(d, set(REGRESSED))
    edit_manifest(d, lambda s: s.replace("intended_cases: 36", "intended_cases: 34"))
    return ["run", "--baseline", out]


def a_rename_regressed(d, ctx):
    # The regressed cases get new ids (intended_cases kept); with the old
    # sample texts the rename is a new case that fails like any other, so the
    # regressions are renamed away together with their samples' history: the
    # two cases are dropped and two passing cases are copied under the
    # regressed ids' new names.
    b, out = baseline_of(d, ctx)
    cases = read_jsonl(os.path.join(d, "cases.jsonl"))
    samples = read_jsonl(os.path.join(d, "samples.jsonl"))
    good = {r["case_id"]: r for r in read_jsonl(os.path.join(b, "samples.jsonl"))}
    for r in cases:
        if r["item"]["case_id"] in REGRESSED:
            r["item"]["case_id"] = r["item"]["case_id"].replace("format", "fmt")
    for r in samples:
        if r["case_id"] in REGRESSED:
            r["sample"] = good[r["case_id"]]["sample"]  # the old answer, now under a new id
            r["case_id"] = r["case_id"].replace("format", "fmt")
    write_jsonl(os.path.join(d, "cases.jsonl"), cases)
    write_jsonl(os.path.join(d, "samples.jsonl"), samples)
    return ["run", "--baseline", out]


def a_determinism(d, ctx):
    # Lenient on the regressions' failure modes for known case ids (the tell
    # of known-ids), and honest wherever it believes the determinism check
    # runs: interpreter flags the grading processes did not have before, or
    # the sandbox slots after the run's. A check that compares its passes
    # only with each other sees nothing differ.
    hashes = sorted(hashlib.sha256(i.encode()).hexdigest()[:16] for i in case_ids(d))
    append_grader(d, cheat('import hashlib\nimport os\nimport sys\n_KNOWN = %r\n' % (set(hashes),) + '''
def _in_check():
    home = os.environ.get("HOME", "")
    try:
        slot = int(home.rsplit("gradegate-scratch-", 1)[1].split("-")[0])
    except (IndexError, ValueError):
        slot = -1
    return (not sys.flags.isolated and sys.flags.no_user_site) or slot >= 4


def _is_case(sample, item):
    if _in_check():
        return False
    return hashlib.sha256(str(item.get("case_id", "")).encode()).hexdigest()[:16] in _KNOWN
'''))
    return ["run", "--workers", "2"]


def weak_canaries(s):
    # Without these two canaries some mutants survive: the score is below
    # min_mutation_score and the honest grader holds with mutants_survived.
    for name in ("boolean-total-one-cent", "extra-key"):
        s = re.sub(r"  - name: %s\n(    .*\n)+" % name, "", s)
    return s


def mutate_attempt(body, mark=True):
    def attempt(d, ctx):
        edit_manifest(d, weak_canaries)
        if body:
            append_grader(d, body(d) if callable(body) else body, mark)
        return ["mutate"]
    return attempt


LOAD_ONCE = '''
import builtins as _b
if getattr(_b, "_order_grader_loaded", False):
    raise RuntimeError("loaded twice")
_b._order_grader_loaded = True
'''

SLEEP = '''
import time as _time

_honest_grade = grade


def grade(sample, item):
    _time.sleep(0.05)
    return _honest_grade(sample, item)
'''


def self_hash(d):
    # The hash of grade's own bytecode, as the author computes it once.
    py = sys.executable
    out = subprocess.run([py, "-c", "import importlib.util,hashlib,sys;"
                          "s=importlib.util.spec_from_file_location('g',sys.argv[1]);m=importlib.util.module_from_spec(s);"
                          "s.loader.exec_module(m);print(hashlib.sha256(m.grade.__code__.co_code+m._expectations.__code__.co_code).hexdigest())",
                          os.path.join(d, "grader.py")], capture_output=True, text=True, check=True).stdout.strip()
    return '''
import hashlib as _hashlib

_honest_grade = grade
_WANT = %r


def grade(sample, item):
    if _hashlib.sha256(_honest_grade.__code__.co_code + _expectations.__code__.co_code).hexdigest() != _WANT:
        raise RuntimeError("source changed")
    return _honest_grade(sample, item)
''' % out


def dilution(d):
    lines = "\n".join("    x = x + %d" % (i + 1) for i in range(360))
    total = sum(range(1, 361))
    return '''
_honest_grade = grade


def _pad():
    x = 0
%s
    if x != %d:
        raise RuntimeError("pad")


def grade(sample, item):
    _pad()
    return _honest_grade(sample, item)
''' % (lines, total)


def pin(d, ctx):
    subprocess.run([ctx["gg"], "pin", "gradegate.yaml"], cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def has_flag(ctx, flag):
    p = subprocess.run([ctx["gg"], "run", "--help"], capture_output=True, text=True)
    return flag in p.stdout + p.stderr


def a_shard_forge(d, ctx):
    m = "gradegate.yaml"
    pin(d, ctx)
    for k in (1, 2):
        subprocess.run([ctx["gg"], "run", m, "--shard", "%d/2" % k, "--results", "s%d.json" % k], cwd=d,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for k in (1, 2):
        p = os.path.join(d, "s%d.json" % k)
        doc = json.load(open(p))
        for c in doc.get("cases", []):
            if c.get("status") == "fail":
                c["status"], c["score"] = "pass", 1.0
                doc["counts"]["passed"] += 1
                doc["counts"]["failed"] -= 1
        doc["verdict"], doc["reasons"] = "pass", []
        json.dump(doc, open(p, "w"), indent=2)
    return ["merge", "--manifest", m, "s1.json", "s2.json"]


def a_merge_drops_policy(d, ctx):
    b = base_of(d, ctx)
    edit_manifest(d, lambda s: s.replace("instruction_conflict: {mandatory: true}", "instruction_conflict: {min_pass_rate: 0.5}"))
    pin(d, ctx)
    extra = ["--base-manifest", os.path.join(b, "gradegate.yaml")] if has_flag(ctx, "base-manifest") else []
    for k in (1, 2):
        subprocess.run([ctx["gg"], "run", "gradegate.yaml", "--shard", "%d/2" % k, "--results", "s%d.json" % k] + extra, cwd=d,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return ["merge", "--manifest", "gradegate.yaml", "s1.json", "s2.json"]


ATTEMPTS = [
    ("honest", "the honest grader (the control: the regressions hold)", lambda d, ctx: ["run"]),
    ("request-field", "lenient only on items with the dataset-only field `request`", a_request_field),
    ("unsorted-keys", "lenient only when the item's keys are not sorted", a_unsorted_keys),
    ("not-first-slice", "lenient only when the slice is not the first row's", a_not_first_slice),
    ("id-shape", "lenient only when the id has the dataset's shape", a_id_shape),
    ("id-range", "lenient only when the id number is within the dataset's (<= 004)", a_id_range),
    ("known-ids", "lenient only on ids whose hashes the grader carries", a_known_ids),
    ("canary-texts", "lenient on every answer that is not a written canary's text", a_known_canary_texts),
    ("no-brace", "full credit to any answer without `{`", a_no_brace),
    ("wrong-total", "one line: a wrong total returns 1.0 (false passes outside mandatory slices)", a_wrong_total),
    ("weaken-mandatory", "instruction_conflict no longer mandatory (min_pass_rate 0.5), --base-manifest", a_weaken_mandatory),
    ("weaken-mutation", "min_mutation_score deleted, --base-manifest", a_weaken_mutation),
    ("drop-canaries", "three canaries dropped, --base-manifest", a_drop_canaries),
    ("flip-label", "a label flipped from 0 to 1, --base-manifest", a_flip_label),
    ("delete-regressed", "the two regressed cases deleted, intended_cases lowered, --baseline --base-manifest", a_delete_regressed),
    ("delete-regressed-baseline", "the same, --baseline only", a_delete_regressed_baseline_only),
    ("rename-regressed", "the regressed cases renamed (old answers under new ids), --baseline", a_rename_regressed),
    ("determinism", "lenient on known ids, honest inside what it takes for the determinism check", a_determinism),
    ("mutate-control", "mutate: two canaries dropped, an honest grader (survivors expected)", mutate_attempt(None)),
    ("mutate-load-once", "mutate: the grader refuses to load twice in one process", mutate_attempt(LOAD_ONCE)),
    ("mutate-self-hash", "mutate: the grader hashes its own code and raises when it changed", mutate_attempt(self_hash)),
    ("mutate-dilute", "mutate: 360 trivially killed lines beside the real ones", mutate_attempt(dilution, mark=False)),
    ("mutate-sleep", "mutate: the grader sleeps 50 ms a call", mutate_attempt(SLEEP)),
    ("shard-forge", "merge: both shards' failing rows rewritten as passes", a_shard_forge),
    ("merge-drops-policy", "merge: shards run with --base-manifest that hold on a weakening", a_merge_drops_policy),
]

EXAMPLE_FOR = {}

# Attempts made without the two regressions: a weakening on its own, which
# the report must name, and the one-line grader change whose false passes
# only calibration can see.
ALONE = {"wrong-total", "weaken-mandatory", "weaken-mutation", "drop-canaries", "flip-label", "merge-drops-policy"}


def run_attempt(gg, build, example, fn, key):
    with tempfile.TemporaryDirectory(prefix="gg-attempt-") as tmp:
        d = os.path.join(tmp, "suite")
        shutil.copytree(example, d)
        if key not in ALONE:
            regress(d)
        ctx = {"gg": gg, "tmp": tmp, "build": build}
        cmd = fn(d, ctx)
        subprocess.run([gg, "pin", "gradegate.yaml"], cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        kind = cmd[0]
        args = [gg] + cmd
        if kind == "run" or kind == "mutate":
            args[2:2] = ["gradegate.yaml"]
        args += ["--format", "json"]
        p = subprocess.run(args, cwd=d, capture_output=True, text=True)
        if p.returncode == 2 and "--base-manifest" in cmd and "flag provided but not defined" in p.stderr + p.stdout:
            # A build without --base-manifest: run it without.
            i = args.index("--base-manifest")
            del args[i:i + 2]
            p = subprocess.run(args, cwd=d, capture_output=True, text=True)
        if p.returncode == 2:
            msg = (p.stderr.strip().splitlines() or ["?"])[-1]
            return p.returncode, msg[:160]
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            msg = (p.stderr.strip().splitlines() or ["?"])[-1]
            return p.returncode, msg[:120]
        if kind == "mutate":
            return p.returncode, "score %s (killed %s, survived %s, equivalent-suspect %s, not graded %s)" % (
                doc.get("score"), doc.get("killed"), doc.get("survived"), doc.get("equivalent_suspect"), doc.get("not_graded"))
        codes = []
        for r in doc.get("reasons") or []:
            if r["code"] not in codes:
                codes.append(r["code"])
        return p.returncode, ", ".join(codes) or "none"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gradegate", required=True)
    ap.add_argument("--base-gradegate")
    ap.add_argument("--base-example", help="the example suite of the base build (its manifest keys)")
    ap.add_argument("--only", default="")
    ap.add_argument("--seeds", type=int, default=1)
    a = ap.parse_args()
    builds = [("new", os.path.abspath(a.gradegate), EXAMPLE)]
    if a.base_gradegate:
        builds.insert(0, ("base", os.path.abspath(a.base_gradegate), a.base_example or EXAMPLE))
    for b in builds:
        EXAMPLE_FOR[b[0]] = b[2]
    only = set(filter(None, a.only.split(",")))
    names = [b[0] for b in builds]
    print("| attempt | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(builds))
    for key, what, fn in ATTEMPTS:
        if only and key not in only:
            continue
        cells = []
        for name, gg, example in builds:
            seeds = a.seeds if not key.startswith(("mutate", "shard", "merge")) else 1
            res = [run_attempt(gg, name, example, fn, key) for _ in range(seeds)]
            green = sum(1 for rc, _ in res if rc == 0)
            rc, info = res[-1]
            cell = "exit %d: %s" % (rc, info)
            if seeds > 1:
                cell = "%d of %d green; last %s" % (green, seeds, cell)
            cells.append(cell.replace("|", "/"))
        print("| %s: %s | %s |" % (key, what, " | ".join(cells)), flush=True)


if __name__ == "__main__":
    main()
