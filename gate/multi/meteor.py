# text_similarity with evaluation_metric meteor, as a grader gradegate runs
# in the sandbox like any Python grader. The Go side fills the sub-grader's
# input and reference templates and sends them as the item:
# {"input": "...", "reference": "..."}.
#
# The score is nltk's meteor_score with its defaults (lower case, Porter
# stemmer, WordNet synonyms, alpha 0.9, beta 3, gamma 0.5) of the input's
# whitespace tokens against the reference's, the tokenisation bleu and gleu
# use. Loading fails, and gradegate refuses to grade, when nltk or its
# WordNet data cannot be imported: a METEOR without synonyms would score
# paraphrases lower than the hosted grader.

try:
    from nltk.corpus import wordnet
    from nltk.translate.meteor_score import meteor_score

    wordnet.ensure_loaded()
except LookupError:
    raise ImportError("nltk is installed but its WordNet data is not (python -m nltk.downloader wordnet)") from None


def grade(sample, item):
    return float(meteor_score([item["reference"].split()], item["input"].split(), wordnet=wordnet))
