"""Broken on purpose: isinstance(x, int) where the contract needs type(x) is int.

This is the example grader with one line changed. True is an int in Python,
and True == 1, so a boolean total passes wherever the expected total is one
cent. Only the boolean-total-one-cent canary reaches the difference; every
other canary passes, and so does every case of the dataset.
"""

import json

REQUIRED_KEYS = frozenset({"status", "currency", "total_cents"})


def _expectations(item):
    """Return (status, currency, total_cents) from the item, or raise."""
    missing = [
        key
        for key in ("expected_status", "expected_currency", "expected_total_cents")
        if key not in item
    ]
    if missing:
        # Equivalent mutant: without this raise, the lookup below raises KeyError.
        raise KeyError("corrupt fixture: item has no " + ", ".join(missing))  # gradegate: no-mutate: the lookup below raises KeyError anyway

    status = item["expected_status"]
    currency = item["expected_currency"]
    total = item["expected_total_cents"]
    # JSON has no str or dict subclasses, so type-is and isinstance agree on
    # these two fields and the next two checks; only int has the bool trap.
    if type(status) is not str or not status:  # gradegate: no-mutate: JSON has no str subclass
        raise ValueError("corrupt fixture: expected_status must be a non-empty string")
    if type(currency) is not str or not currency:  # gradegate: no-mutate: JSON has no str subclass
        raise ValueError("corrupt fixture: expected_currency must be a non-empty string")
    # type(...) is int, not isinstance: True is an int in Python, and a fixture
    # written as `"expected_total_cents": true` must not pass as one cent.
    if type(total) is not int or total < 0:
        raise ValueError("corrupt fixture: expected_total_cents must be a non-negative integer")
    return status, currency, total


def grade(sample, item):
    status, currency, total = _expectations(item)

    output_text = sample.get("output_text")
    if type(output_text) is not str:  # gradegate: no-mutate: JSON has no str subclass
        return 0.0
    try:
        candidate = json.loads(output_text)
    except ValueError:
        return 0.0

    if type(candidate) is not dict:  # gradegate: no-mutate: JSON has no dict subclass
        return 0.0
    if set(candidate) != REQUIRED_KEYS:
        return 0.0
    if candidate["status"] != status:
        return 0.0
    if candidate["currency"] != currency:
        return 0.0
    if not isinstance(candidate["total_cents"], int):
        return 0.0
    if candidate["total_cents"] != total:
        return 0.0
    return 1.0
