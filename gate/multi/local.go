// Package multi grades OpenAI's multi graders: the python sub-graders run
// in the sandbox like any Python grader, each in a pool of its own;
// string_check and text_similarity (fuzzy_match, bleu, gleu, rouge)
// sub-graders run here, except meteor, which runs nltk in the sandbox
// (MeteorSource); score_model and label_model sub-graders are asked by the
// gate through package judge; and calculate_output combines them.
package multi

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gradegate/gradegate/gate/judge"
	"github.com/gradegate/gradegate/manifest"
)

// Local grades one string_check or text_similarity sub-grader on a task:
// its input and reference templates filled from the sample and the item.
// A template naming a value the task does not have is an error, as it is
// for a model grader's prompt.
func Local(sg manifest.SubGrader, sample, item json.RawMessage) (float64, error) {
	texts, err := Templates(sg, sample, item)
	if err != nil {
		return 0, err
	}
	input, ref := texts[0], texts[1]
	switch sg.Type {
	case manifest.SubStringCheck:
		return StringCheck(sg.Operation, input, ref)
	case manifest.SubTextSimilarity:
		if score, ok := Similarity(sg.Metric, input, ref); ok {
			return score, nil
		}
		return 0, similarityError(sg.Metric)
	}
	return 0, fmt.Errorf("sub-grader type %q is not run locally", sg.Type)
}

// Templates fills a sub-grader's input and reference templates from a
// sample and an item.
func Templates(sg manifest.SubGrader, sample, item json.RawMessage) ([2]string, error) {
	input, err := judge.Render(sg.Input, sample, item)
	if err != nil {
		return [2]string{}, fmt.Errorf("input: %w", err)
	}
	ref, err := judge.Render(sg.Reference, sample, item)
	if err != nil {
		return [2]string{}, fmt.Errorf("reference: %w", err)
	}
	return [2]string{input, ref}, nil
}

// StringCheck is OpenAI's string_check: eq and ne compare exactly, like is
// "input contains reference", ilike the same ignoring case. 1 or 0.
func StringCheck(op, input, ref string) (float64, error) {
	var ok bool
	switch op {
	case "eq":
		ok = input == ref
	case "ne":
		ok = input != ref
	case "like":
		ok = strings.Contains(input, ref)
	case "ilike":
		ok = strings.Contains(strings.ToLower(input), strings.ToLower(ref))
	default:
		return 0, fmt.Errorf("string_check operation %q: want eq, ne, like or ilike", op)
	}
	if ok {
		return 1, nil
	}
	return 0, nil
}

// FuzzyMatch is the normalised indel similarity of two texts, 2·LCS/(|a|+|b|)
// over characters: rapidfuzz's fuzz.ratio scaled to [0, 1]. Two empty texts
// are identical (1).
func FuzzyMatch(a, b string) float64 {
	ra, rb := []rune(a), []rune(b)
	total := len(ra) + len(rb)
	if total == 0 {
		return 1
	}
	if len(rb) > len(ra) {
		ra, rb = rb, ra
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			switch {
			case ra[i-1] == rb[j-1]:
				cur[j] = prev[j-1] + 1
			case prev[j] >= cur[j-1]:
				cur[j] = prev[j]
			default:
				cur[j] = cur[j-1]
			}
		}
		prev, cur = cur, prev
	}
	return float64(2*prev[len(rb)]) / float64(total)
}
