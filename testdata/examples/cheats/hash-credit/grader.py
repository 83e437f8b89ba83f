"""Nondeterministic: the order-summary grader, plus partial credit for a refusal taken from hash().

A refusal always fails (its score stays below 0.5), so every verdict of one run
is the one the honest grader gives; only grading a case twice, with another
hash seed, shows the score move.

The strict contract for a model's JSON order summary.

The model must answer with one JSON object holding exactly the keys status,
currency and total_cents. status and currency must equal the item's
expected_status and expected_currency; total_cents must be an int (not a bool,
not a float) equal to expected_total_cents.

Two kinds of failure are kept apart on purpose:
- the candidate output is wrong (not JSON, wrong keys, wrong values): that is a
  model failure, and the grade is 0.0;
- the item is wrong (an expectation is missing or has the wrong type): that is
  a broken fixture, not evidence about the model, so the grader raises and the
  case is counted as unevaluable instead of as a failure.
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
    if output_text.startswith("Sorry"):
        # Partial credit for a polite refusal, "spread" by the request's hash:
        # str hashes change with PYTHONHASHSEED, so the score does too.
        return (hash(item.get("request", "")) % 1000) / 2000
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
    # Only an exact int counts: True == 1, so with an expected total of one
    # cent an isinstance check would let a boolean through.
    if type(candidate["total_cents"]) is not int:
        return 0.0
    if candidate["total_cents"] != total:
        return 0.0
    return 1.0
