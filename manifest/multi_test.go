package manifest

import (
	"strings"
	"testing"
)

const multiManifest = `version: 1
name: cookbook
dataset:
  path: cases.jsonl
  sha256: "` + hexA + `"
grader:
  type: multi
  name: cookbook_multi
  pass_threshold: 0.8
  calculate_output: "0.85 * similarity + 0.15 * mentions"
  graders:
    similarity:
      type: python
      source: grader.py
      sha256: "` + hexB + `"
      timeout_seconds: 30
    mentions:
      type: string_check
      input: "{{sample.output_text}}"
      reference: "{{item.reference_answer}}"
      operation: ilike
canaries:
  - {name: pos, sample: {output_text: "ok"}, item: {reference_answer: "ok"}, expect: 1.0}
  - {name: neg, sample: {output_text: "bad"}, item: {reference_answer: "ok"}, expect: 0}
`

func TestParseMulti(t *testing.T) {
	m, err := Parse([]byte(multiManifest), "gradegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g := m.Grader
	if g.Type != TypeMulti || g.Name != "cookbook_multi" || g.Source != "grader.py" || g.SHA256 != hexB || g.TimeoutSeconds != 30 || g.PassThreshold != 0.8 {
		t.Errorf("grader %+v", g)
	}
	mg := g.Multi
	if mg == nil || mg.Python != "similarity" || len(mg.Graders) != 2 || mg.Graders[1].Operation != "ilike" || mg.Formula == nil {
		t.Fatalf("multi %+v", mg)
	}
	if got, _ := mg.Formula.Eval(map[string]float64{"similarity": 1, "mentions": 0}); got != 0.85 {
		t.Errorf("formula = %v", got)
	}
	if m.Line("grader.sha256") != strings.Count(multiManifest[:strings.Index(multiManifest, "      sha256")], "\n")+1 {
		t.Errorf("grader.sha256 line %d, want the python sub-grader's", m.Line("grader.sha256"))
	}
}

func TestParseMultiErrors(t *testing.T) {
	tests := []struct {
		name, from, to, key, msg string
	}{
		{"unknown name in formula", `"0.85 * similarity + 0.15 * mentions"`, `"similarity + other"`, "grader.calculate_output", `"other" at column 14 is not a sub-grader`},
		{"metric not built", "type: string_check\n      input", "type: text_similarity\n      evaluation_metric: cosine_l2\n      input", "grader.graders.mentions.evaluation_metric", `"cosine_l2" is not built: gradegate computes text_similarity with fuzzy_match, bleu`},
		{"cosine without embedding_model", "type: string_check\n      input", "type: text_similarity\n      evaluation_metric: cosine\n      input", "grader.graders.mentions.evaluation_metric", "embedding_model"},
		{"model sub-grader without a model", "type: string_check", "type: score_model", "grader.graders.mentions.model", "required"},
		{"model sub-grader with a reference", "type: string_check\n      input: \"{{sample.output_text}}\"\n      reference: \"{{item.reference_answer}}\"\n      operation: ilike", "type: label_model\n      model: gpt-4o-2024-08-06\n      input: [{role: user, content: \"{{sample.output_text}}\"}]\n      labels: [yes, no]\n      passing_labels: [yes]\n      reference: x", "grader.graders.mentions.reference", "does not apply to a label_model sub-grader"},
		{"budget without a model sub-grader", "type: multi", "type: multi\n  max_calls: 10", "grader.max_calls", "has none"},
		{"operation", "operation: ilike", "operation: regex", "grader.graders.mentions.operation", "must be one of eq | ne | like | ilike"},
		{"meteor without a python part", "type: python\n      source: grader.py\n      sha256: \"" + hexB + "\"\n      timeout_seconds: 30", "type: text_similarity\n      input: x\n      reference: y\n      evaluation_metric: meteor", "grader.graders.similarity.evaluation_metric", "has none"},
		{"source at the top", "type: multi", "type: multi\n  source: grader.py", "grader.source", "does not apply to a multi grader"},
		{"timeout at the top", "type: multi", "type: multi\n  timeout_seconds: 5", "grader.timeout_seconds", "does not apply to a multi grader (these belong to its python sub-graders"},
		{"memory at the top", "type: multi", "type: multi\n  memory_mb: 512", "grader.memory_mb", "does not apply to a multi grader"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := strings.Replace(multiManifest, tt.from, tt.to, 1)
			if text == multiManifest {
				t.Fatal("replacement did not apply")
			}
			_, err := Parse([]byte(text), "gradegate.yaml")
			if err == nil || !strings.Contains(err.Error(), tt.key+": ") || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %v, want %s: …%s", err, tt.key, tt.msg)
			}
		})
	}
}

const multiModel = `    judged:
      type: score_model
      model: gpt-4o-mini-2024-07-18
      input:
        - {role: user, content: "Answer: {{sample.output_text}}"}
      range: [0, 5]
      pass_threshold: 4
      sampling_params: {temperature: 0}
      endpoint: responses
`

func TestParseMultiModel(t *testing.T) {
	text := strings.Replace(multiManifest, "canaries:", multiModel+"canaries:", 1)
	text = strings.Replace(text, "type: multi", "type: multi\n  max_calls: 50", 1)
	text = strings.Replace(text, "+ 0.15 * mentions", "+ 0.1 * mentions + 0.01 * judged", 1)
	m, err := Parse([]byte(text), "gradegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	models := m.Grader.Multi.Models()
	if len(models) != 1 || m.Grader.Multi.MaxCalls != 50 {
		t.Fatalf("models %+v, max_calls %d", models, m.Grader.Multi.MaxCalls)
	}
	g := models[0].Model
	if g.Type != TypeScoreModel || g.Name != "judged" || g.Judge == nil || g.Judge.Model != "gpt-4o-mini-2024-07-18" ||
		g.Judge.Range != [2]float64{0, 5} || g.PassThreshold != 4 || g.Judge.Endpoint != EndpointResponses ||
		g.Judge.MaxCalls != 50 || g.TimeoutSeconds != DefaultTimeoutSeconds || len(g.Judge.Input) != 1 {
		t.Errorf("model sub-grader %+v / %+v", g, g.Judge)
	}
	if m.Grader.Judge != nil {
		t.Error("a multi grader with a model part became a model grader")
	}
}

func TestPinMulti(t *testing.T) {
	text := strings.Replace(multiManifest, `sha256: "`+hexB+`"`, `sha256: "TODO"`, 1)
	files, err := PinnedFiles([]byte(text), "gradegate.yaml")
	if err != nil || files["grader"] != "grader.py" {
		t.Fatalf("PinnedFiles = %v, %v", files, err)
	}
	out, err := Pin([]byte(text), map[string]string{"grader": hexB, "dataset": hexA})
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != multiManifest {
		t.Errorf("pinned:\n%s\nwant:\n%s", out, multiManifest)
	}
}

// TestParseMultiParts: a second python sub-grader has its own source,
// digest and limits; the first stays the grader's own; pin finds and
// rewrites each one's digest.
func TestParseMultiParts(t *testing.T) {
	second := "    format:\n      type: python\n      source: checks/format.py\n      sha256: \"" + hexA + "\"\n      memory_mb: 512\n      isolation: case\n"
	text := strings.Replace(multiManifest, "    mentions:\n", second+"    mentions:\n", 1)
	text = strings.Replace(text, "0.15 * mentions", "0.1 * mentions + 0.05 * format", 1)
	text = strings.Replace(text, "type: multi", "type: multi\n  load_timeout_seconds: 45", 1)
	m, err := Parse([]byte(text), "gradegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g := m.Grader
	parts := g.Multi.PythonParts()
	if len(parts) != 2 || g.Multi.Python != "similarity" || g.Source != "grader.py" || g.SHA256 != hexB || g.TimeoutSeconds != 30 {
		t.Fatalf("grader %+v, parts %+v", g, parts)
	}
	p := g.Part(parts[1])
	if g.LoadTimeoutSeconds != 45 || p.LoadTimeoutSeconds != 45 {
		t.Errorf("load timeouts %d and %d, want the multi grader's 45 for every part", g.LoadTimeoutSeconds, p.LoadTimeoutSeconds)
	}
	if p.Source != "checks/format.py" || p.SHA256 != hexA || p.MemoryMB != 512 || p.Isolation != "case" || p.TimeoutSeconds != DefaultTimeoutSeconds || p.PassThreshold != 0.8 || p.Multi != nil {
		t.Errorf("second part %+v", p)
	}
	if m.Line(PartKey("format")+".sha256") != strings.Count(text[:strings.Index(text, "      sha256: \""+hexA)], "\n")+1 {
		t.Errorf("the second part's sha256 line is %d", m.Line(PartKey("format")+".sha256"))
	}

	unpinned := strings.Replace(text, `sha256: "`+hexA+`"`+"\n      memory_mb", "memory_mb", 1)
	files, err := PinnedFiles([]byte(unpinned), "gradegate.yaml")
	if err != nil || files["grader"] != "grader.py" || files[PartKey("format")] != "checks/format.py" {
		t.Fatalf("PinnedFiles = %v, %v", files, err)
	}
	out, err := Pin([]byte(unpinned), map[string]string{"grader": hexB, PartKey("format"): hexA, "dataset": hexA})
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != text {
		t.Errorf("pinned:\n%s\nwant:\n%s", out, text)
	}
	if _, err := Pin([]byte(text), map[string]string{PartKey("nope"): hexA}); err == nil {
		t.Error("pinned a sub-grader that does not exist")
	}
}
