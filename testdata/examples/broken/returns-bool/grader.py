"""Broken on purpose: the checks are right but the grade is a bool.

The grader contract asks for a number, not a bool, so every grade this returns
is an invalid_return: the positive canary errors instead of passing, and the
negatives error instead of scoring 0.0.
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
        return False
    return (
        type(candidate) is dict
        and set(candidate) == REQUIRED_KEYS
        and candidate["status"] == status
        and candidate["currency"] == currency
        and type(candidate["total_cents"]) is int
        and candidate["total_cents"] == total
    )
