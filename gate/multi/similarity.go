package multi

import (
	"fmt"
	"math"
	"strings"
)

// OpenAI names its text_similarity metrics but does not publish how it
// tokenises or smooths them. gradegate computes each one as its reference
// implementation does when called with its defaults on one reference:
//
//   - bleu: nltk's sentence_bleu (nltk 3.8) on whitespace tokens
//     (str.split), case kept, weights 0.25 for 1- to 4-grams, no smoothing
//     (nltk's method0: an n-gram order with no match counts as the smallest
//     positive float, so the score is then practically 0; no unigram match
//     is exactly 0).
//   - gleu: nltk's sentence_gleu on whitespace tokens, case kept, 1- to
//     4-grams: matching n-grams / max(input n-grams, reference n-grams).
//   - rouge_1..rouge_5, rouge_l: the F-measure of Google's rouge-score
//     RougeScorer with its default tokenizer and use_stemmer=False: lower
//     case, every run of characters other than ASCII a-z and 0-9 is a
//     separator, no stemming; rouge_l is the sentence-level LCS (rougeL,
//     not rougeLsum).
//
// meteor is not computed here: nltk's meteor_score matches WordNet
// synonyms, so it runs with nltk and its WordNet data in the sandbox
// (MeteorSource), and a METEOR without them, which would score paraphrases
// differently from the hosted grader, is never substituted.

// Similarity computes a text_similarity metric of input against
// reference. ok is false for a metric it does not compute (meteor, cosine).
func Similarity(metric, input, ref string) (score float64, ok bool) {
	switch metric {
	case "fuzzy_match":
		return FuzzyMatch(input, ref), true
	case "bleu":
		return BLEU([][]string{strings.Fields(ref)}, strings.Fields(input)), true
	case "gleu":
		return GLEU([][]string{strings.Fields(ref)}, strings.Fields(input)), true
	case "rouge_1", "rouge_2", "rouge_3", "rouge_4", "rouge_5":
		n := int(metric[len(metric)-1] - '0')
		return RougeN(RougeTokens(ref), RougeTokens(input), n), true
	case "rouge_l":
		return RougeL(RougeTokens(ref), RougeTokens(input)), true
	}
	return 0, false
}

// similarityError is the error for a metric Similarity does not compute.
func similarityError(metric string) error {
	if metric == "meteor" {
		return fmt.Errorf("evaluation_metric %q is not computed by gradegate: METEOR's synonym matching needs WordNet", metric)
	}
	return fmt.Errorf("evaluation_metric %q is not computed by gradegate", metric)
}

// ngramCounts counts the n-grams of tokens, keyed by the tokens joined
// with a separator no token from strings.Fields or RougeTokens contains.
func ngramCounts(tokens []string, n int) map[string]int {
	c := map[string]int{}
	for i := 0; i+n <= len(tokens); i++ {
		c[strings.Join(tokens[i:i+n], "\x00")]++
	}
	return c
}

// BLEU is nltk's sentence_bleu(refs, hyp) with its defaults: modified
// n-gram precision for n = 1..4 (each hypothesis n-gram clipped to its
// largest count in any one reference), geometric mean with weights 0.25,
// the brevity penalty against the reference length closest to the
// hypothesis (the shorter on a tie), and no smoothing.
func BLEU(refs [][]string, hyp []string) float64 {
	const maxN = 4
	var logSum float64
	for n := 1; n <= maxN; n++ {
		hc := ngramCounts(hyp, n)
		maxRef := map[string]int{}
		for _, r := range refs {
			for g, k := range ngramCounts(r, n) {
				maxRef[g] = max(maxRef[g], k)
			}
		}
		num, den := 0, 0
		for g, k := range hc {
			num += min(k, maxRef[g])
			den += k
		}
		den = max(den, 1)
		if num == 0 {
			if n == 1 {
				return 0
			}
			// nltk's method0 stands sys.float_info.min in for a zero
			// precision so that its logarithm is finite.
			logSum += math.Log(0x1p-1022) / maxN
			continue
		}
		logSum += math.Log(float64(num)/float64(den)) / maxN
	}
	return brevityPenalty(refs, len(hyp)) * math.Exp(logSum)
}

// brevityPenalty is BLEU's: 1 when the hypothesis is longer than the
// closest reference, 0 when it is empty, exp(1 - r/c) otherwise.
func brevityPenalty(refs [][]string, c int) float64 {
	r := -1
	for _, ref := range refs {
		l := len(ref)
		if r < 0 || abs(l-c) < abs(r-c) || (abs(l-c) == abs(r-c) && l < r) {
			r = l
		}
	}
	switch {
	case c > r:
		return 1
	case c == 0:
		return 0
	}
	return math.Exp(1 - float64(r)/float64(c))
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// GLEU is nltk's sentence_gleu(refs, hyp): over all 1- to 4-grams, the
// matching count over the larger of the hypothesis's and the reference's
// n-gram counts, for the reference that scores best; 0 when both are
// empty.
func GLEU(refs [][]string, hyp []string) float64 {
	hc := everygrams(hyp)
	tpfp := 0
	for _, k := range hc {
		tpfp += k
	}
	best, found := 0.0, false
	for _, r := range refs {
		rc := everygrams(r)
		tpfn, tp := 0, 0
		for g, k := range rc {
			tpfn += k
			tp += min(k, hc[g])
		}
		all := max(tpfp, tpfn)
		if all == 0 {
			continue
		}
		if s := float64(tp) / float64(all); !found || s > best {
			best, found = s, true
		}
	}
	return best
}

// everygrams counts every 1- to 4-gram of tokens together.
func everygrams(tokens []string) map[string]int {
	c := map[string]int{}
	for n := 1; n <= 4; n++ {
		for g, k := range ngramCounts(tokens, n) {
			c[g] += k
		}
	}
	return c
}

// RougeTokens is rouge-score's default tokenizer without stemming: lower
// case, every run of characters other than ASCII letters and digits
// separates tokens (so letters outside ASCII are dropped, as there).
func RougeTokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9')
	})
}

// RougeN is rouge-score's rougeN F-measure of a prediction against a
// target: the clipped n-gram overlap over the prediction's n-grams
// (precision) and the target's (recall), 2PR/(P+R), 0 when both are 0.
func RougeN(target, prediction []string, n int) float64 {
	tc, pc := ngramCounts(target, n), ngramCounts(prediction, n)
	overlap, tn, pn := 0, 0, 0
	for g, k := range tc {
		overlap += min(k, pc[g])
		tn += k
	}
	for _, k := range pc {
		pn += k
	}
	return fmeasure(float64(overlap)/float64(max(pn, 1)), float64(overlap)/float64(max(tn, 1)))
}

// RougeL is rouge-score's rougeL F-measure: the longest common token
// subsequence over the prediction's length (precision) and the target's
// (recall); 0 when either is empty.
func RougeL(target, prediction []string) float64 {
	if len(target) == 0 || len(prediction) == 0 {
		return 0
	}
	prev := make([]int, len(prediction)+1)
	cur := make([]int, len(prediction)+1)
	for i := 1; i <= len(target); i++ {
		for j := 1; j <= len(prediction); j++ {
			if target[i-1] == prediction[j-1] {
				cur[j] = prev[j-1] + 1
			} else {
				cur[j] = max(prev[j], cur[j-1])
			}
		}
		prev, cur = cur, prev
	}
	lcs := float64(prev[len(prediction)])
	return fmeasure(lcs/float64(len(prediction)), lcs/float64(len(target)))
}

func fmeasure(p, r float64) float64 {
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}
