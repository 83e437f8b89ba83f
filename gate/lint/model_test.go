package lint

import (
	"slices"
	"testing"

	"github.com/gradegate/gradegate/manifest"
)

func TestModelGrader(t *testing.T) {
	tests := []struct {
		name  string
		model string
		input string
		want  []string // code/severity
	}{
		{"dated snapshot", "gpt-4o-2024-08-06", "{{sample.output_text}}", nil},
		{"older dated snapshot", "gpt-4-0613", "{{ sample.output_tools[0] }}", nil},
		{"fine-tuned model", "ft:gpt-4o-mini-2024-07-18:acme::abc123", "{{sample.output_text}}", nil},
		{"bare alias", "gpt-4o", "{{sample.output_text}}", []string{"model_not_pinned/hold"}},
		{"alias with a suffix that is no date", "o4-mini", "{{sample.output_text}}", []string{"model_not_pinned/hold"}},
		{"latest", "chatgpt-4o-latest", "{{sample.output_text}}", []string{"model_not_pinned/hold"}},
		{"a prompt that never reads the sample", "gpt-4o-2024-08-06", "{{item.reference}}", []string{"sample_unused/warn"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &manifest.Manifest{File: "g.yaml", Lines: map[string]int{"grader.model": 7, "grader.input": 8}, Grader: manifest.Grader{
				Type:  manifest.TypeScoreModel,
				Judge: &manifest.ModelGrader{Model: tt.model, Input: []manifest.Message{{Role: "user", Content: "Grade " + tt.input}}},
			}}
			var got []string
			for _, f := range ModelGrader(m) {
				got = append(got, f.Code+"/"+string(f.Severity))
				if f.File != "g.yaml" || f.Line == 0 {
					t.Errorf("finding %+v has no position", f)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("findings = %v, want %v", got, tt.want)
			}
		})
	}
}
