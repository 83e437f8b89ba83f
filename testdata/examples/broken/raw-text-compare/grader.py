"""Broken on purpose: compares the answer's raw text with the expected JSON.

The expected answer is written out compactly and compared byte for byte, so
an answer that means the same thing with its keys in another order, with
spaces, or with a trailing newline scores 0.0. Its two canaries (a right
answer written compactly, and a wrong one) both pass; only the derived
canaries' invariant variants (gate.metamorphic) show the defect.
"""

import json


def grade(sample, item):
    expected = json.dumps(item["expected"], separators=(",", ":"))
    return 1.0 if sample.get("output_text") == expected else 0.0
