"""Starter grader: exact match against the item's reference answer.

gradegate calls grade(sample, item) once per case, as OpenAI's hosted Python
grader does:
- sample is the model's stored output; sample["output_text"] is its text;
- item is the case's row in cases.jsonl ("item").

Return a float: 1.0 for a right answer, 0.0 for a wrong one (a model
failure). Raise when the item itself is broken (no reference answer): the
case then counts as unevaluable instead of as a model failure.
"""


def _normalize(text):
    """Lower case, outer blanks and a final full stop removed, inner blanks collapsed."""
    return " ".join(text.strip().lower().rstrip(".").split())


def grade(sample, item) -> float:
    reference = item["reference_answer"]
    if not isinstance(reference, str) or not reference.strip():
        raise ValueError("broken fixture: reference_answer must be a non-empty string")
    answer = sample.get("output_text")
    if not isinstance(answer, str):
        return 0.0
    return 1.0 if _normalize(answer) == _normalize(reference) else 0.0
