def grade(sample, item):
    return 1.0 if sample["output_text"].strip() == item["answer"] else 0.0
