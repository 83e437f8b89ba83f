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
		{"metric not built", "type: string_check\n      input", "type: text_similarity\n      evaluation_metric: meteor\n      input", "grader.graders.mentions.evaluation_metric", `"meteor" is not built: gradegate computes text_similarity with fuzzy_match, bleu`},
		{"model sub-grader not built", "type: string_check", "type: score_model", "grader.graders.mentions", "score_model sub-grader is not built"},
		{"operation", "operation: ilike", "operation: regex", "grader.graders.mentions.operation", "must be one of eq | ne | like | ilike"},
		{"no python part", "type: python\n      source: grader.py\n      sha256: \"" + hexB + "\"\n      timeout_seconds: 30", "type: string_check\n      input: x\n      reference: y\n      operation: eq", "grader.graders", "needs one python sub-grader"},
		{"source at the top", "type: multi", "type: multi\n  source: grader.py", "grader.source", "does not apply to a multi grader"},
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
