"""Broken on purpose: a blanket exception handler that returns full credit.

Malformed model output and a corrupt fixture both raise inside the try block,
and both come out as 1.0, so the dashboard stays green. gradegate's
malformed-output and corrupt-fixture canaries catch it.
"""

import json

REQUIRED_KEYS = {"status", "currency", "total_cents"}


def grade(sample, item):
    try:
        candidate = json.loads(sample["output_text"])
        if type(candidate) is not dict or set(candidate) != REQUIRED_KEYS:
            return 0.0
        if candidate["status"] != item["expected_status"]:
            return 0.0
        if candidate["currency"] != item["expected_currency"]:
            return 0.0
        if type(candidate["total_cents"]) is not int:
            return 0.0
        if candidate["total_cents"] != item["expected_total_cents"]:
            return 0.0
        return 1.0
    except Exception:
        return 1.0
