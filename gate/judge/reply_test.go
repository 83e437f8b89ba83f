package judge

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/manifest"
)

func TestParseReply(t *testing.T) {
	score := manifest.Grader{Type: manifest.TypeScoreModel, Judge: &manifest.ModelGrader{Range: [2]float64{1, 7}}}
	label := manifest.Grader{Type: manifest.TypeLabelModel, Judge: &manifest.ModelGrader{
		Labels: []string{"correct", "incorrect"}, PassingLabels: []string{"correct"},
	}}
	tests := []struct {
		name    string
		g       manifest.Grader
		e       envelope
		score   float64
		label   string
		wantErr string
	}{
		{"structured output", score, envelope{text: `{"steps": [{"description": "d", "conclusion": "c"}], "result": 6.5}`}, 6.5, "", ""},
		{"bare number with space", score, envelope{text: " 4\n"}, 4, "", ""},
		{"range ends are in range", score, envelope{text: `{"result": 7}`}, 7, "", ""},
		{"above range", score, envelope{text: `{"result": 8}`}, 0, "", "outside range [1, 7]"},
		{"below range", score, envelope{text: "0"}, 0, "", "outside range"},
		{"a number in prose", score, envelope{text: "Score: 5"}, 0, "", "not a number"},
		{"a number then prose", score, envelope{text: "5 because it is right"}, 0, "", "not a number"},
		{"a string result", score, envelope{text: `{"result": "5"}`}, 0, "", "is a string"},
		{"no result", score, envelope{text: `{"score": 5}`}, 0, "", "has no result"},
		{"truncated JSON", score, envelope{text: `{"steps": [{"description": "`}, 0, "", "not valid JSON"},
		{"boolean", score, envelope{text: "true"}, 0, "", "not a number"},
		{"empty", score, envelope{text: "  "}, 0, "", "empty"},
		{"refusal", score, envelope{refusal: "I can't help"}, 0, "", "refused"},
		{"label as structured output", label, envelope{text: `{"steps": [], "result": "correct"}`}, 1, "correct", ""},
		{"failing label alone", label, envelope{text: "incorrect\n"}, 0, "incorrect", ""},
		{"quoted label", label, envelope{text: `"correct"`}, 1, "correct", ""},
		{"label in another case", label, envelope{text: "Correct"}, 0, "", "none of the labels"},
		{"label in prose", label, envelope{text: "The answer is correct."}, 0, "", "none of the labels"},
		{"result not a string", label, envelope{text: `{"result": 1}`}, 0, "", "not a label"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := parseReply(tt.g, tt.e)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("err = %v, want %q (verdict %+v)", err, tt.wantErr, v)
				}
				return
			}
			if err != nil || v.score != tt.score || v.label != tt.label {
				t.Errorf("= %+v, %v; want score %g label %q", v, err, tt.score, tt.label)
			}
		})
	}
}

func TestRender(t *testing.T) {
	sample := json.RawMessage(`{"output_text": "hi <b>", "output_json": {"total": 2599, "ratio": 1.50}, "output_tools": [{"function": {"name": "refund", "arguments": "{\"id\": 1}"}}]}`)
	item := json.RawMessage(`{"reference": "5 days", "tags": ["a", "b"], "n": null}`)
	v, err := decodeVars(sample, item)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text, want, wantErr string
	}{
		{"{{sample.output_text}}", "hi <b>", ""},
		{"{{ item.reference }} / {{item.reference}}", "5 days / 5 days", ""},
		{"{{sample.output_json}}", `{"ratio":1.50,"total":2599}`, ""},
		{"{{sample.output_json.total}}", "2599", ""},
		{"{{sample.output_tools[0].function.name}}", "refund", ""},
		{"{{item.tags}} {{item.tags[1]}}", `["a","b"] b`, ""},
		{"{{item.n}}", "null", ""},
		{"no templates {single}", "no templates {single}", ""},
		{"{{item.expected}}", "", "item has no field expected"},
		{"{{item.tags[2]}}", "", "item.tags has 2 elements, no index 2"},
		{"{{item.reference.x}}", "", "item.reference is a string, not an object"},
		{"{{sample.output_text[0]}}", "", "not a list"},
	}
	for _, tt := range tests {
		got, err := render(tt.text, v)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("render(%q) err = %v, want %q", tt.text, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("render(%q) = %q, %v; want %q", tt.text, got, err, tt.want)
		}
	}
}

func TestRedact(t *testing.T) {
	key := "sk-proj-abcdefghijklmnopWXYZ"
	for _, s := range []string{
		"Incorrect API key provided: " + key,
		"Incorrect API key provided: sk-proj-*********WXYZ.",
	} {
		if got := redactKey(s, key); strings.Contains(got, "WXYZ") || strings.Contains(got, key) {
			t.Errorf("redactKey(%q) = %q", s, got)
		}
	}
}

func TestListed(t *testing.T) {
	var list []string
	for i := 999; i >= 0; i-- {
		addListed(&list, fmt.Sprintf("c%03d", i))
	}
	got := listed(list)
	if len(list) > 2*maxListed || len(got) != maxListed || got[0] != "c000" || got[maxListed-1] != fmt.Sprintf("c%03d", maxListed-1) {
		t.Errorf("kept %d, listed %d from %s to %s", len(list), len(got), got[0], got[len(got)-1])
	}
}
