"""Broken on purpose: isinstance(x, int) where the contract needs type(x) is int.

True is an int in Python, and True == 1, so a boolean total passes wherever the
expected total is one cent. Only the boolean-total-one-cent canary reaches the
difference; every other canary passes.
"""

import json

REQUIRED_KEYS = frozenset({"status", "currency", "total_cents"})


def grade(sample, item):
    status = item["expected_status"]
    currency = item["expected_currency"]
    total = item["expected_total_cents"]

    try:
        candidate = json.loads(sample["output_text"])
    except ValueError:
        return 0.0
    if not isinstance(candidate, dict) or set(candidate) != REQUIRED_KEYS:
        return 0.0
    if candidate["status"] != status or candidate["currency"] != currency:
        return 0.0
    if not isinstance(candidate["total_cents"], int):
        return 0.0
    if candidate["total_cents"] != total:
        return 0.0
    return 1.0
