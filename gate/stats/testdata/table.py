#!/usr/bin/env python3
"""Writes table.json: expected values for gate/stats, computed independently.

Only the standard library, and none of the closed forms the Go code uses:

  z            solved from math.erfc by bisection (and checked against
               statistics.NormalDist().inv_cdf);
  Wilson       each bound is a root of n(k/n - p)^2 = z^2 p(1 - p), found by
               bisection on [0, k/n] and [k/n, 1];
  least n      the first n whose bisected lower bound of n/n is >= p;
  further      the first m > n whose bisected interval at k/n * m excludes p;
  McNemar      exact, in fractions.Fraction with math.comb;
  paired       Newcombe's method 10 (Altman's phi), from the bisected bounds.

Run from the repository root:

  /usr/bin/python3 gate/stats/testdata/table.py > gate/stats/testdata/table.json
"""

import json
import math
import statistics
from fractions import Fraction


def bisect(f, lo, hi, iters=200):
    flo = f(lo)
    for _ in range(iters):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        fm = f(mid)
        if (fm > 0) == (flo > 0):
            lo, flo = mid, fm
        else:
            hi = mid
    return (lo + hi) / 2


def z_of(level):
    alpha = 1 - level
    z = bisect(lambda x: math.erfc(x / math.sqrt(2)) - alpha, 0.0, 40.0)
    ref = statistics.NormalDist().inv_cdf(1 - alpha / 2)
    assert abs(z - ref) < 1e-12, (level, z, ref)
    return z


def wilson(k, n, z):
    if n == 0:
        return 0.0, 1.0
    r = k / n
    f = lambda p: n * (r - p) ** 2 - z * z * p * (1 - p)
    lo = 0.0 if k == 0 else bisect(f, 0.0, r)
    hi = 1.0 if k == n else bisect(f, r, 1.0)
    return lo, hi


def least(p, z):
    n = 1
    while wilson(n, n, z)[0] < p:
        n += 1
    return n


def further(k, n, p, z):
    r = k / n
    m = n
    while True:
        lo, hi = wilson(r * m, m, z)
        if lo >= p or hi < p:
            return m - n
        m += 1


def mcnemar(b, c):
    n = b + c
    if n == 0:
        return 1.0
    m = min(b, c)
    tail = Fraction(sum(math.comb(n, i) for i in range(m + 1)), 2 ** n)
    return float(min(Fraction(1), 2 * tail))


def paired(r, s, t, u, z):
    n = r + s + t + u
    p1, p2 = (r + t) / n, (r + s) / n
    l1, u1 = wilson(r + t, n, z)
    l2, u2 = wilson(r + s, n, z)
    den = (r + s) * (t + u) * (r + t) * (s + u)
    phi = 0.0
    if den > 0:
        a = r * u - s * t
        if a > n / 2:
            phi = (a - n / 2) / math.sqrt(den)
        elif a < 0:
            phi = a / math.sqrt(den)
    d = p1 - p2
    lo = d - math.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0))
    hi = d + math.sqrt(max((p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2, 0))
    return max(lo, -1.0), min(hi, 1.0)


def main():
    levels = [0.8, 0.9, 0.95, 0.99, 0.999]
    out = {"z": [], "wilson": [], "least": [], "further": [], "mcnemar": [], "paired": []}
    for level in levels:
        out["z"].append({"level": level, "z": z_of(level)})
    for level in (0.9, 0.95, 0.99):
        z = z_of(level)
        for n, k in [(1, 0), (1, 1), (5, 4), (5, 5), (5, 0), (10, 7), (12, 11), (20, 19),
                     (35, 35), (50, 25), (100, 86), (240, 230), (1000, 999), (10000, 9500),
                     (100000, 1), (1000000, 999999)]:
            lo, hi = wilson(k, n, z)
            out["wilson"].append({"level": level, "k": k, "n": n, "lo": lo, "hi": hi})
        for p in (0.5, 0.8, 0.9, 0.95, 0.99):
            out["least"].append({"level": level, "p": p, "n": least(p, z)})
    z = z_of(0.95)
    for k, n, p in [(4, 5, 0.95), (9, 10, 0.8), (43, 50, 0.9), (18, 20, 0.95), (95, 100, 0.9), (7, 10, 0.9), (1, 3, 0.5)]:
        out["further"].append({"level": 0.95, "k": k, "n": n, "p": p, "further": further(k, n, p, z)})
    for b, c in [(0, 0), (1, 0), (0, 1), (3, 0), (5, 0), (6, 0), (5, 1), (10, 2), (7, 7), (8, 3),
                 (12, 30), (20, 10), (100, 70), (300, 1), (500, 520), (1000, 900)]:
        out["mcnemar"].append({"b": b, "c": c, "p": mcnemar(b, c)})
    for r, s, t, u in [(36, 12, 2, 0), (50, 5, 1, 44), (8, 0, 0, 2), (0, 3, 0, 0), (90, 10, 0, 0),
                       (9000, 300, 1, 699), (20, 2, 8, 0)]:
        lo, hi = paired(r, s, t, u, z)
        out["paired"].append({"level": 0.95, "both_pass": r, "pass_fail": s, "fail_pass": t, "both_fail": u, "lo": lo, "hi": hi})
    json.dump(out, __import__("sys").stdout, indent=1)
    print()


main()
