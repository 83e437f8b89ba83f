package multi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/manifest"
)

// A text_similarity with evaluation_metric cosine: the cosine of the
// embeddings of its input and its reference, both asked in one call of
// the embeddings API (embedding_model) through the run's broker, the one a
// Python grader's ctx.embeddings_create goes through, so the call is
// recorded in the judge cache and replays offline.

// Cosine reports whether sg is a cosine text_similarity.
func Cosine(sg manifest.SubGrader) bool {
	return sg.Type == manifest.SubTextSimilarity && sg.Metric == manifest.MetricCosine
}

// cosineSubs are mg's cosine sub-graders.
func cosineSubs(mg *manifest.MultiGrader) []manifest.SubGrader {
	var out []manifest.SubGrader
	for _, sg := range mg.Graders {
		if Cosine(sg) {
			out = append(out, sg)
		}
	}
	return out
}

// cosineScore asks for the embeddings of sg's input and reference on task
// t and returns their cosine. A template that cannot be filled or a call
// the grader's arguments caused to fail is the case's outcome (bad); err
// is the tool failing.
func cosineScore(ctx context.Context, b grading.ModelBroker, sg manifest.SubGrader, t grading.Task) (score float64, call grading.ModelCall, bad *grading.CaseError, err error) {
	texts, terr := Templates(sg, t.Sample, t.Item)
	if terr != nil {
		return 0, call, &grading.CaseError{Class: grading.ClassGraderException, Type: "TemplateError", Message: fmt.Sprintf("sub-grader %s: %v", sg.Name, terr)}, nil
	}
	if b == nil {
		return 0, call, nil, fmt.Errorf("sub-grader %s: cosine needs the gate's embeddings broker, and this run has none", sg.Name)
	}
	args, _ := json.Marshal(map[string]any{"model": manifest.AutoModel, "input": []string{texts[0], texts[1]}})
	body, call, err := b.Call(ctx, "embeddings", args)
	var mce *grading.ModelCallError
	if errors.As(err, &mce) {
		return 0, call, &grading.CaseError{Class: grading.ClassGraderException, Type: mce.Type, Message: fmt.Sprintf("sub-grader %s: %s", sg.Name, mce.Message)}, nil
	}
	if err != nil {
		return 0, call, nil, fmt.Errorf("sub-grader %s: %w", sg.Name, err)
	}
	var r struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil || len(r.Data) != 2 {
		return 0, call, nil, fmt.Errorf("sub-grader %s: the embeddings response does not hold two embeddings", sg.Name)
	}
	a, c := r.Data[0].Embedding, r.Data[1].Embedding
	if r.Data[0].Index == 1 && r.Data[1].Index == 0 {
		a, c = c, a
	}
	v, ok := CosineSimilarity(a, c)
	if !ok {
		return 0, call, &grading.CaseError{Class: grading.ClassInvalidReturn, Type: "InvalidReply", Message: fmt.Sprintf("sub-grader %s: the embeddings have different lengths (%d, %d) or none", sg.Name, len(a), len(c))}, nil
	}
	return v, call, nil, nil
}

// CosineSimilarity is a·b / (|a| |b|), 0 when either is all zeros; ok is
// false for vectors of different or zero length.
func CosineSimilarity(a, b []float64) (float64, bool) {
	if len(a) != len(b) || len(a) == 0 {
		return 0, false
	}
	var dot, na, nb float64
	for i := range a {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	if na == 0 || nb == 0 {
		return 0, true
	}
	v := dot / (math.Sqrt(na) * math.Sqrt(nb))
	return max(-1, min(1, v)), true
}
