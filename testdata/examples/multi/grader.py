"""The Python part of a multi grader: how close the answer is to the
reference, after normalising case, punctuation and spacing (0-1)."""

import difflib
import re


def normalise(text):
    return " ".join(re.sub(r"[^a-z0-9 ]", " ", text.lower()).split())


def grade(sample, item):
    answer = normalise(sample["output_text"])
    reference = normalise(item["reference_answer"])
    if not answer:
        return 0.0
    return difflib.SequenceMatcher(None, answer, reference).ratio()
