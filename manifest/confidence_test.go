package manifest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseStatisticsKeys(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		level   float64
		rule    string
		alpha   float64
		repeats int
	}{
		{"defaults", minimal, 0.95, "point", 0.05, 1},
		{"every key", minimal + "gate:\n  confidence: {level: 0.99, rule: lower_bound}\n  baseline: {max_drop: 0.01, alpha: 0.01}\n", 0.99, "lower_bound", 0.01, 1},
		{"alpha 1 is the old rule", minimal + "gate:\n  baseline: {alpha: 1}\n", 0.95, "point", 1, 1},
		{"only the rule", minimal + "gate:\n  confidence: {rule: lower_bound}\n", 0.95, "lower_bound", 0.05, 1},
		{"repeats on a model grader", scoreModel + "gate:\n  repeats: 3\n", 0.95, "point", 0.05, 3},
		{"repeats 1 on a python grader", minimal + "gate:\n  repeats: 1\n", 0.95, "point", 0.05, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.yaml), "gradegate.yaml")
			if err != nil {
				t.Fatal(err)
			}
			g := m.Gate
			if g.Confidence.Level != tt.level || g.Confidence.Rule != tt.rule || g.Baseline.Alpha != tt.alpha || g.Repeats != tt.repeats {
				t.Errorf("got level %v rule %q alpha %v repeats %d; want %v %q %v %d",
					g.Confidence.Level, g.Confidence.Rule, g.Baseline.Alpha, g.Repeats, tt.level, tt.rule, tt.alpha, tt.repeats)
			}
		})
	}
}

func TestParseStatisticsErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []wantErr
	}{
		{"unknown confidence key", minimal + "gate:\n  confidence:\n    levle: 0.9\n",
			[]wantErr{{"gate.confidence.levle", "levle:", "did you mean level?"}}},
		{"level of 1", minimal + "gate:\n  confidence:\n    level: 1\n",
			[]wantErr{{"gate.confidence.level", "level:", "must be above 0 and below 1"}}},
		{"level as a percentage", minimal + "gate:\n  confidence:\n    level: 95\n",
			[]wantErr{{"gate.confidence.level", "level:", "must be above 0 and below 1"}}},
		{"level not a number", minimal + "gate:\n  confidence:\n    level: high\n",
			[]wantErr{{"gate.confidence.level", "level:", "must be a number"}}},
		{"unknown rule", minimal + "gate:\n  confidence:\n    rule: lower\n",
			[]wantErr{{"gate.confidence.rule", "rule:", "must be one of point | lower_bound"}}},
		{"confidence not a mapping", minimal + "gate:\n  confidence: 0.95\n",
			[]wantErr{{"gate.confidence", "confidence:", "must be a mapping"}}},
		{"alpha above 1", minimal + "gate:\n  baseline:\n    alpha: 5\n",
			[]wantErr{{"gate.baseline.alpha", "alpha:", "must be between 0 and 1"}}},
		{"unknown baseline key", minimal + "gate:\n  baseline:\n    alfa: 0.1\n",
			[]wantErr{{"gate.baseline.alfa", "alfa:", "did you mean alpha?"}}},
		{"even repeats", scoreModel + "gate:\n  repeats: 4\n",
			[]wantErr{{"gate.repeats", "repeats:", "must be odd"}}},
		{"zero repeats", scoreModel + "gate:\n  repeats: 0\n",
			[]wantErr{{"gate.repeats", "repeats:", "must be between 1 and 99"}}},
		{"repeats on a python grader", minimal + "gate:\n  repeats: 3\n",
			[]wantErr{{"gate.repeats", "repeats:", "a python grader is not asked"}}},
		{"every problem at once", minimal + "gate:\n  confidence: {level: 2, rule: x}\n  baseline: {alpha: -1}\n",
			[]wantErr{
				{"gate.confidence.level", "confidence:", "must be above 0 and below 1"},
				{"gate.confidence.rule", "confidence:", "must be one of"},
				{"gate.baseline.alpha", "baseline:", "must be between 0 and 1"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const file = "evals/x/gradegate.yaml"
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
				if e.File != file || e.Line != line || e.Key != w.key || !strings.Contains(e.Msg, w.msg) {
					t.Errorf("problem %d = %#v\nwant file %s, line %d, key %q, message containing %q", i, e, file, line, w.key, w.msg)
				}
				if prefix := fmt.Sprintf("%s:%d: %s: ", file, line, w.key); !strings.HasPrefix(e.Error(), prefix) {
					t.Errorf("problem %d reads %q, want it to start with %q", i, e.Error(), prefix)
				}
			}
		})
	}
}
