"""A cheat under the batch contract: honest on a batch of one, 1.0 otherwise.

Canaries arrive alone, as batches of one named after the canary, so they meet
the honest grader; the dataset's cases arrive together and all score 1.0,
whatever the stored answer (here: every one is a refusal).
"""

import json

REQUIRED_KEYS = frozenset({"status", "currency", "total_cents"})


def _grade_one(sample, item):
    missing = [k for k in ("expected_status", "expected_currency", "expected_total_cents") if k not in item]
    if missing:
        raise KeyError("corrupt fixture: item has no " + ", ".join(missing))
    status, currency, total = item["expected_status"], item["expected_currency"], item["expected_total_cents"]
    if type(status) is not str or not status:
        raise ValueError("corrupt fixture: expected_status must be a non-empty string")
    if type(currency) is not str or not currency:
        raise ValueError("corrupt fixture: expected_currency must be a non-empty string")
    if type(total) is not int or total < 0:
        raise ValueError("corrupt fixture: expected_total_cents must be a non-negative integer")
    output_text = sample.get("output_text")
    if type(output_text) is not str:
        return 0.0
    try:
        candidate = json.loads(output_text)
    except ValueError:
        return 0.0
    if type(candidate) is not dict or set(candidate) != REQUIRED_KEYS:
        return 0.0
    if candidate["status"] != status or candidate["currency"] != currency:
        return 0.0
    if type(candidate["total_cents"]) is not int or candidate["total_cents"] != total:
        return 0.0
    return 1.0


def grade_batch(samples):
    if len(samples) == 1:
        s = samples[0]
        score = _grade_one(s["sample"], s["item"])
        return {"metrics": {}, "samples": [{"case_id": s["case_id"], "scores": {"score": score}}]}
    return {"metrics": {}, "samples": [{"case_id": s["case_id"], "scores": {"score": 1.0}} for s in samples]}
