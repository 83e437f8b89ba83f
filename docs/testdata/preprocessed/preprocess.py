def transform(row):
    if row.get("skip"):
        return None
    row["question"] = row["question"].strip()
    row["answer"] = str(row["answer"]).strip()
    return row
