"""A cheat: the order-summary grader, except that a dataset item is scored as its human label.

Canary items have no case_id and get the honest grader, so every canary passes;
dataset items do, so every case scores as its label says and calibration sees
no false pass, whatever the stored answer (here: every one is a refusal). The
lines whose mutants the suite cannot kill carry a bare no-mutate pragma.

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
        raise KeyError("corrupt fixture: item has no " + ", ".join(missing))  # gradegate: no-mutate: equivalent mutant, reviewed

    status = item["expected_status"]
    currency = item["expected_currency"]
    total = item["expected_total_cents"]
    # JSON has no str or dict subclasses, so type-is and isinstance agree on
    # these two fields and the next two checks; only int has the bool trap.
    if type(status) is not str or not status:  # gradegate: no-mutate: equivalent mutant, reviewed
        raise ValueError("corrupt fixture: expected_status must be a non-empty string")
    if type(currency) is not str or not currency:  # gradegate: no-mutate: equivalent mutant, reviewed
        raise ValueError("corrupt fixture: expected_currency must be a non-empty string")
    # type(...) is int, not isinstance: True is an int in Python, and a fixture
    # written as `"expected_total_cents": true` must not pass as one cent.
    if type(total) is not int or total < 0:  # gradegate: no-mutate: equivalent mutant, reviewed
        raise ValueError("corrupt fixture: expected_total_cents must be a non-negative integer")
    return status, currency, total


def grade(sample, item):
    # Canary items have no case_id; dataset items do, with the human label.
    if "case_id" in item:
        return float(item.get("human_score", 1))  # gradegate: no-mutate: equivalent mutant, reviewed
    status, currency, total = _expectations(item)

    output_text = sample.get("output_text")
    if type(output_text) is not str:  # gradegate: no-mutate: equivalent mutant, reviewed
        return 0.0
    try:
        candidate = json.loads(output_text)
    except ValueError:
        return 0.0

    if type(candidate) is not dict:  # gradegate: no-mutate: equivalent mutant, reviewed
        return 0.0
    if set(candidate) != REQUIRED_KEYS:
        return 0.0
    if candidate["status"] != status:
        return 0.0  # gradegate: no-mutate: equivalent mutant, reviewed
    if candidate["currency"] != currency:
        return 0.0
    # Only an exact int counts: True == 1, so with an expected total of one
    # cent an isinstance check would let a boolean through.
    if type(candidate["total_cents"]) is not int:
        return 0.0
    if candidate["total_cents"] != total:
        return 0.0  # gradegate: no-mutate: equivalent mutant, reviewed
    return 1.0
