"""Broken on purpose: a grader that reads only the item.

It checks that the fixture is well formed and never looks at the model's
output, so every candidate gets the same grade. The negative canaries whose
fixture is valid (boolean-total-one-cent, wrong-currency, extra-key,
malformed-output) catch it.
"""


def grade(sample, item):
    total = item["expected_total_cents"]
    currency = item["expected_currency"]
    status = item["expected_status"]
    if type(total) is int and total >= 0 and currency and status:
        return 1.0
    return 0.0
