package manifest

import (
	"strings"
	"testing"
)

// TestParseMultiMetrics: every text_similarity metric gradegate computes
// is accepted as a sub-grader's evaluation_metric (meteor too: whether nltk
// and WordNet can be imported is checked when grading starts); cosine
// needs embedding_model, and is refused with the reason without it.
func TestParseMultiMetrics(t *testing.T) {
	tests := []struct {
		metric, wantErr string
	}{
		{metric: "fuzzy_match"},
		{metric: "bleu"},
		{metric: "gleu"},
		{metric: "rouge_1"},
		{metric: "rouge_2"},
		{metric: "rouge_3"},
		{metric: "rouge_4"},
		{metric: "rouge_5"},
		{metric: "rouge_l"},
		{metric: "meteor"},
		{metric: "cosine", wantErr: "embedding_model"},
		{metric: "rouge_6", wantErr: `"rouge_6" is not built`},
	}
	for _, tt := range tests {
		t.Run(tt.metric, func(t *testing.T) {
			text := strings.Replace(multiManifest, "type: string_check\n      input",
				"type: text_similarity\n      evaluation_metric: "+tt.metric+"\n      input", 1)
			text = strings.Replace(text, "\n      operation: ilike", "", 1)
			if text == multiManifest {
				t.Fatal("replacement did not apply")
			}
			m, err := Parse([]byte(text), "gradegate.yaml")
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if got := m.Grader.Multi.Graders[1].Metric; got != tt.metric {
					t.Errorf("metric %q, want %q", got, tt.metric)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}
