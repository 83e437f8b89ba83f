package multi

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/manifest"
)

// The sentences of nltk's bleu_score and gleu_score docstrings.
const (
	nltkRef1 = "It is a guide to action that ensures that the military will forever heed Party commands"
	nltkRef2 = "It is the guiding principle which guarantees the military forces always being under the command of the Party"
	nltkRef3 = "It is the practical guide for the army always to heed the directions of the party"
	nltkHyp1 = "It is a guide to action which ensures that the military always obeys the commands of the party"
	nltkHyp2 = "It is to insure the troops forever hearing the activity guidebook that party direct"
)

func fields(ss ...string) [][]string {
	out := make([][]string, len(ss))
	for i, s := range ss {
		out[i] = strings.Fields(s)
	}
	return out
}

// near compares to a relative 1e-9: the expected values are nltk's printed
// to 16 digits, or exact fractions worked out by hand.
func near(got, want float64) bool {
	if want == 0 {
		return got == 0
	}
	return math.Abs(got-want) <= 1e-9*math.Abs(want)
}

// TestBLEU: expected values are nltk 3.8's sentence_bleu with its defaults
// on the same token lists (the first two are its docstring's 0.5045... and
// the no-3-gram case its docstring rounds to 0.0), and BLEU worked by hand.
func TestBLEU(t *testing.T) {
	tests := []struct {
		name string
		refs []string
		hyp  string
		want float64
	}{
		{"nltk docstring, three references", []string{nltkRef1, nltkRef2, nltkRef3}, nltkHyp1, 0.5045666840058485},
		// No 3- or 4-gram match: nltk's unsmoothed score is practically 0, not 0.
		{"nltk docstring, no 3-gram match", []string{nltkRef1, nltkRef2, nltkRef3}, nltkHyp2, 5.92086005993801e-155},
		{"one reference", []string{nltkRef1}, nltkHyp1, 0.41180376356915777},
		{"identical", []string{"the cat sat on the mat"}, "the cat sat on the mat", 1},
		// p1 = p2 = p3 = 1, p4 = 0 counted as 2^-1022, brevity exp(1-6/3):
		// exp(-1) * 2^(-1022/4) = 4.493e-78.
		{"short prefix", []string{"the cat sat on the mat"}, "the cat sat", 4.493053873107152e-78},
		{"one word, identical", []string{"Paris"}, "Paris", 1.821831989445342e-231},
		{"no unigram match", []string{"the cat sat on the mat"}, "dog", 0},
		{"empty input", []string{"the cat"}, "", 0},
		{"case kept", []string{"Paris"}, "paris", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := BLEU(fields(tt.refs...), strings.Fields(tt.hyp)); !near(got, tt.want) {
				t.Errorf("BLEU = %.16g, want %.16g", got, tt.want)
			}
		})
	}
}

// TestGLEU: expected values are nltk 3.8's sentence_gleu (the first three
// are its docstring's 0.0909..., 0.4393..., 0.1206...), each also the exact
// fraction shown.
func TestGLEU(t *testing.T) {
	tests := []struct {
		name string
		refs []string
		hyp  string
		want float64
	}{
		{"nltk docstring, the the the", []string{"the cat is on the mat"}, "the the the the the the the", 2.0 / 22},
		{"nltk docstring, hyp1", []string{nltkRef1}, nltkHyp1, 29.0 / 66},
		{"nltk docstring, hyp2", []string{nltkRef1}, nltkHyp2, 7.0 / 58},
		{"best of three references", []string{nltkRef1, nltkRef2, nltkRef3}, nltkHyp1, 29.0 / 66},
		{"identical", []string{"a b c"}, "a b c", 1},
		{"both empty", []string{""}, "", 0},
		{"case kept", []string{"Paris"}, "paris", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := GLEU(fields(tt.refs...), strings.Fields(tt.hyp)); !near(got, tt.want) {
				t.Errorf("GLEU = %.16g, want %.16g", got, tt.want)
			}
		})
	}
}

// TestRouge: expected values worked by hand from rouge-score's algorithm
// (F-measure, default tokenizer, no stemmer). The first texts are the
// rouge-score README's example: rouge1 overlap 6 of 8 predicted and 9
// target tokens (F = 12/17); LCS "the quick brown jumps the" of 5 (F =
// 10/17); 2 of 7 and 8 bigrams (F = 4/15); 1 of 6 and 7 trigrams (F = 2/13).
func TestRouge(t *testing.T) {
	const (
		target = "The quick brown fox jumps over the lazy dog"
		pred   = "The quick brown dog jumps on the log."
	)
	tests := []struct {
		name, metric, target, pred string
		want                       float64
	}{
		{"readme rouge_1", "rouge_1", target, pred, 12.0 / 17},
		{"readme rouge_2", "rouge_2", target, pred, 4.0 / 15},
		{"readme rouge_3", "rouge_3", target, pred, 2.0 / 13},
		{"readme rouge_4", "rouge_4", target, pred, 0},
		{"readme rouge_l", "rouge_l", target, pred, 10.0 / 17},
		{"case and punctuation ignored", "rouge_1", "Paris, France!", "paris france", 1},
		{"rouge_5 identical", "rouge_5", "a b c d e f", "a b c d e f", 1},
		{"rouge_5 too short", "rouge_5", "a b c d", "a b c d", 0},
		// Letters outside ASCII separate tokens: "café" is "caf".
		{"non-ASCII letters dropped", "rouge_1", "café", "cafe", 0},
		{"rouge_l empty input", "rouge_l", "a b", "", 0},
		{"rouge_l order", "rouge_l", "a b c d", "d c b a", 0.25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Similarity(tt.metric, tt.pred, tt.target)
			if !ok || !near(got, tt.want) {
				t.Errorf("Similarity(%s) = %.16g, %v; want %.16g", tt.metric, got, ok, tt.want)
			}
		})
	}
}

// TestLocalSimilarity: a text_similarity sub-grader picks its metric from
// evaluation_metric, whitespace-tokenised for bleu and gleu; meteor and
// cosine are refused with a reason.
func TestLocalSimilarity(t *testing.T) {
	sample := json.RawMessage(`{"output_text":"the cat sat on the mat"}`)
	item := json.RawMessage(`{"answer":"the cat sat on a mat"}`)
	tests := []struct {
		metric  string
		want    float64
		wantErr string
	}{
		{metric: "fuzzy_match", want: FuzzyMatch("the cat sat on the mat", "the cat sat on a mat")},
		// Clipped precisions 5/6, 3/5, 2/4, 1/3; equal lengths, no penalty.
		{metric: "bleu", want: math.Pow(5.0/6*3.0/5*2.0/4*1.0/3, 0.25)},
		// 5+3+2+1 matching n-grams over 6+5+4+3 on either side.
		{metric: "gleu", want: 11.0 / 18},
		{metric: "rouge_1", want: 5.0 / 6},
		{metric: "rouge_l", want: 5.0 / 6},
		{metric: "meteor", wantErr: "WordNet"},
		{metric: "cosine", wantErr: `"cosine" is not computed`},
	}
	for _, tt := range tests {
		t.Run(tt.metric, func(t *testing.T) {
			sg := manifest.SubGrader{Name: "s", Type: manifest.SubTextSimilarity, Metric: tt.metric,
				Input: "{{sample.output_text}}", Reference: "{{item.answer}}"}
			got, err := Local(sg, sample, item)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !near(got, tt.want) {
				t.Errorf("Local = %.16g, %v; want %.16g", got, err, tt.want)
			}
		})
	}
}
