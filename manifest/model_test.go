package manifest

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// scoreModel is a minimal score_model manifest.
const scoreModel = `version: 1
name: judged
dataset:
  path: cases.jsonl
  sha256: "` + hexA + `"
grader:
  type: score_model
  model: gpt-4o-2024-08-06
  input:
    - role: system
      content: Grade the answer from 1 to 7.
    - role: user
      content: "Reference: {{ item.reference }}. Answer: {{sample.output_text}} Tools: {{sample.output_tools[0].function.name}}"
  range: [1, 7]
  pass_threshold: 5
  sampling_params: {temperature: 0, seed: 3, max_completions_tokens: 256, top_p: 1}
  max_calls: 500
canaries:
  - name: pos
    sample: {output_text: "ok"}
    item: {reference: ok}
    expect: 7
  - name: neg
    sample: {output_text: "bad"}
    item: {reference: ok}
    expect: 1
`

const labelModel = `version: 1
name: judged
dataset:
  path: cases.jsonl
  sha256: "` + hexA + `"
grader:
  type: label_model
  name: tone
  model: o3-mini-2025-01-31
  endpoint: responses
  input:
    - role: developer
      content: "Label the tone of {{sample.output_text}}."
  labels: [polite, neutral, rude]
  passing_labels: [polite, neutral]
  sampling_params: {reasoning_effort: low}
canaries:
  - name: pos
    sample: {output_text: "thank you"}
    item: {}
    expect: 1
  - name: neg
    sample: {output_text: "go away"}
    item: {}
    expect: 0
`

func TestParseModelGraders(t *testing.T) {
	seed, tokens, zero, one := int64(3), 256, 0.0, 1.0
	tests := []struct {
		name string
		yaml string
		want Grader
	}{
		{
			name: "score_model",
			yaml: scoreModel,
			want: Grader{
				Type: "score_model", Name: "score_model", Contract: "sample", TimeoutSeconds: 120, MemoryMB: 2048,
				Metric: "score", PassThreshold: 5, Isolation: "worker", LoadTimeoutSeconds: 30,
				Judge: &ModelGrader{
					Model: "gpt-4o-2024-08-06",
					Input: []Message{
						{Role: "system", Content: "Grade the answer from 1 to 7.", Line: 10},
						{Role: "user", Line: 12, Content: "Reference: {{ item.reference }}. Answer: {{sample.output_text}} Tools: {{sample.output_tools[0].function.name}}"},
					},
					Range:          [2]float64{1, 7},
					SamplingParams: SamplingParams{Seed: &seed, TopP: &one, Temperature: &zero, MaxCompletionsTokens: &tokens},
					Endpoint:       "chat_completions",
					MaxCalls:       500,
				},
			},
		},
		{
			name: "label_model over the responses endpoint",
			yaml: labelModel,
			want: Grader{
				Type: "label_model", Name: "tone", Contract: "sample", TimeoutSeconds: 120, MemoryMB: 2048,
				Metric: "score", PassThreshold: 1, Isolation: "worker", LoadTimeoutSeconds: 30,
				Judge: &ModelGrader{
					Model:          "o3-mini-2025-01-31",
					Input:          []Message{{Role: "developer", Content: "Label the tone of {{sample.output_text}}.", Line: 12}},
					Range:          [2]float64{0, 1},
					Labels:         []string{"polite", "neutral", "rude"},
					PassingLabels:  []string{"polite", "neutral"},
					SamplingParams: SamplingParams{ReasoningEffort: "low"},
					Endpoint:       "responses",
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.yaml), "g.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, m.Grader, cmpIgnoreLines); diff != "" {
				t.Errorf("grader (-want +got):\n%s", diff)
			}
			if m.Line("grader.model") == 0 {
				t.Error("grader.model has no line")
			}
		})
	}
}

func TestParseModelGraderErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []wantErr
	}{
		{
			name: "python keys on a model grader",
			yaml: strings.Replace(scoreModel, "  max_calls: 500", "  source: g.py\n  memory_mb: 512", 1),
			want: []wantErr{
				{"grader.source", "source:", "does not apply to a model grader (score_model)"},
				{"grader.memory_mb", "memory_mb:", "does not apply to a model grader"},
			},
		},
		{
			name: "model keys on a python grader",
			yaml: strings.Replace(minimal, "type: python", "type: python\n  model: gpt-4o-2024-08-06", 1),
			want: []wantErr{{"grader.model", "model:", "does not apply to a python grader"}},
		},
		{
			name: "missing model and input",
			yaml: strings.Replace(strings.Replace(scoreModel, "  model: gpt-4o-2024-08-06\n", "", 1), "  input:\n    - role: system\n      content: Grade the answer from 1 to 7.\n    - role: user\n      content: \"Reference: {{ item.reference }}. Answer: {{sample.output_text}} Tools: {{sample.output_tools[0].function.name}}\"\n", "", 1),
			want: []wantErr{
				{"grader.model", "grader:", "required key is missing"},
				{"grader.input", "grader:", "required key is missing"},
			},
		},
		{
			name: "a template outside the item and sample namespaces",
			yaml: strings.Replace(scoreModel, "{{ item.reference }}", "{{ env.OPENAI_API_KEY }}", 1),
			want: []wantErr{{"grader.input.1.content", "content: \"Reference", "must name a variable of the item or sample namespace"}},
		},
		{
			name: "an unclosed template",
			yaml: strings.Replace(scoreModel, "{{sample.output_text}}", "{{sample.output_text", 1),
			want: []wantErr{
				{"grader.input.1.content", "content: \"Reference", "must name a variable"},
				{"grader.input.1.content", "content: \"Reference", "without its closing"},
			},
		},
		{
			name: "a role OpenAI does not have",
			yaml: strings.Replace(scoreModel, "role: system", "role: tool", 1),
			want: []wantErr{{"grader.input.0.role", "role: tool", "must be one of system | developer | user | assistant"}},
		},
		{
			name: "pass_threshold outside range",
			yaml: strings.Replace(scoreModel, "pass_threshold: 5", "pass_threshold: 9", 1),
			want: []wantErr{{"grader.pass_threshold", "pass_threshold:", "must be within range [1, 7], got 9"}},
		},
		{
			name: "range the wrong way round",
			yaml: strings.Replace(strings.Replace(scoreModel, "range: [1, 7]", "range: [7, 1]", 1), "pass_threshold: 5", "pass_threshold: 0.5", 1),
			want: []wantErr{{"grader.range", "range:", "min must be below max"}},
		},
		{
			name: "score_model needs its threshold",
			yaml: strings.Replace(scoreModel, "  pass_threshold: 5\n", "", 1),
			want: []wantErr{{"grader.pass_threshold", "grader:", "required key is missing"}},
		},
		{
			name: "labels on a score_model",
			yaml: strings.Replace(scoreModel, "  max_calls: 500", "  labels: [a, b]", 1),
			want: []wantErr{{"grader.labels", "labels:", "does not apply to a score_model grader"}},
		},
		{
			name: "a passing label that is not a label",
			yaml: strings.Replace(labelModel, "passing_labels: [polite, neutral]", "passing_labels: [polite, kind]", 1),
			want: []wantErr{{"grader.passing_labels", "passing_labels:", `"kind" is not one of labels`}},
		},
		{
			name: "every label passing",
			yaml: strings.Replace(labelModel, "passing_labels: [polite, neutral]", "passing_labels: [polite, neutral, rude]", 1),
			want: []wantErr{{"grader.passing_labels", "passing_labels:", "can never fail a case"}},
		},
		{
			name: "a threshold on a label_model",
			yaml: strings.Replace(labelModel, "  endpoint: responses", "  endpoint: responses\n  pass_threshold: 0.5", 1),
			want: []wantErr{{"grader.pass_threshold", "pass_threshold:", "does not apply to a label_model grader"}},
		},
		{
			name: "a seed on the responses endpoint",
			yaml: strings.Replace(labelModel, "{reasoning_effort: low}", "{reasoning_effort: low, seed: 1}", 1),
			want: []wantErr{{"grader.sampling_params.seed", "sampling_params:", "the responses endpoint takes no seed"}},
		},
		{
			name: "a mistyped sampling parameter",
			yaml: strings.Replace(scoreModel, "temperature: 0,", "temprature: 0,", 1),
			want: []wantErr{{"grader.sampling_params.temprature", "sampling_params:", "unknown key (did you mean temperature?)"}},
		},
		{
			name: "a budget of zero",
			yaml: strings.Replace(scoreModel, "max_calls: 500", "max_calls: 0", 1),
			want: []wantErr{{"grader.max_calls", "max_calls:", "must be at least 1"}},
		},
		{
			name: "mutation testing asked of a model grader",
			yaml: scoreModel + "gate:\n  min_mutation_score: 0.9\n",
			want: []wantErr{{"gate.min_mutation_score", "min_mutation_score:", "mutation testing does not apply to a model grader"}},
		},
		{
			name: "canaries judged at the model grader's threshold",
			yaml: strings.Replace(scoreModel, "expect: 7", "expect: 4", 1),
			want: []wantErr{{"canaries", "canaries:", "missing a positive canary (expect >= pass_threshold 5)"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const file = "g.yaml"
			_, err := Parse([]byte(tt.yaml), file)
			if !errors.Is(err, ErrInput) {
				t.Fatalf("Parse error = %v, want one matching ErrInput", err)
			}
			got := inputErrors(t, err)
			if len(got) != len(tt.want) {
				t.Fatalf("Parse reported %d problems, want %d:\n%v", len(got), len(tt.want), err)
			}
			for i, w := range tt.want {
				line := lineOf(t, tt.yaml, w.at)
				e := got[i]
				if e.Line != line || e.Key != w.key || !strings.Contains(e.Msg, w.msg) {
					t.Errorf("problem %d = %#v\nwant line %d, key %q, message containing %q", i, e, line, w.key, w.msg)
				}
			}
		})
	}
}

// The grader digest moves with what decides verdicts and not with the rest.
func TestGraderDigest(t *testing.T) {
	base, err := Parse([]byte(scoreModel), "g.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d := GraderDigest(base.Grader)
	if !strings.HasPrefix(d, "sha256:") {
		t.Fatalf("digest %q", d)
	}
	for _, tt := range []struct {
		old, new string
		same     bool
	}{
		{"max_calls: 500", "max_calls: 20", true},
		{"type: score_model", "type: score_model\n  name: renamed", true},
		{"gpt-4o-2024-08-06", "gpt-4o-2024-11-20", false},
		{"from 1 to 7", "from 1 to 7!", false},
		{"temperature: 0", "temperature: 1", false},
		{"pass_threshold: 5", "pass_threshold: 6", false},
	} {
		m, err := Parse([]byte(strings.Replace(scoreModel, tt.old, tt.new, 1)), "g.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if got := GraderDigest(m.Grader) == d; got != tt.same {
			t.Errorf("%q -> %q: same digest %v, want %v", tt.old, tt.new, got, tt.same)
		}
	}
	py, _ := Parse([]byte(minimal), "g.yaml")
	if GraderDigest(py.Grader) != "" {
		t.Error("a python grader has a model digest")
	}
}
