"""Broken on purpose: a grader that returns a constant and so can never fail.

Every negative canary catches it, and so does the corrupt fixture (it does
not raise).
"""


def grade(sample, item):
    return 1.0
