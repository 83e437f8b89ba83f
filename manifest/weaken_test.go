package manifest

import (
	"slices"
	"strings"
	"testing"
)

// base is minimal with the rules a change could weaken.
const weakenBase = minimal + `gate:
  min_pass_rate: 0.9
  min_mutation_score: 0.9
  slices:
    refunds: {mandatory: true, min_cases: 3}
    tone: {min_pass_rate: 0.8}
  calibration:
    max_false_pass: 0
    max_false_fail: 1
`

func TestWeakenings(t *testing.T) {
	tests := []struct {
		name string
		edit func(string) string
		keys []string // the weakenings' keys, in order
	}{
		{name: "the same manifest", edit: func(s string) string { return s }},
		{name: "a stricter manifest", edit: func(s string) string {
			return strings.Replace(s, "min_pass_rate: 0.9", "min_pass_rate: 0.95", 1)
		}},
		{name: "a slice no longer mandatory", edit: func(s string) string {
			return strings.Replace(s, "{mandatory: true, min_cases: 3}", "{min_cases: 3}", 1)
		}, keys: []string{"gate.slices.refunds.mandatory"}},
		{name: "min_mutation_score deleted", edit: func(s string) string {
			return strings.Replace(s, "  min_mutation_score: 0.9\n", "", 1)
		}, keys: []string{"gate.min_mutation_score"}},
		{name: "min_mutation_score lowered", edit: func(s string) string {
			return strings.Replace(s, "min_mutation_score: 0.9", "min_mutation_score: 0.5", 1)
		}, keys: []string{"gate.min_mutation_score"}},
		{name: "thresholds lowered", edit: func(s string) string {
			s = strings.Replace(s, "min_pass_rate: 0.9", "min_pass_rate: 0.8", 1)
			return strings.Replace(s, "tone: {min_pass_rate: 0.8}", "tone: {min_pass_rate: 0.5}", 1)
		}, // refunds takes the overall minimum, so it is lowered too
			keys: []string{"gate.min_pass_rate", "gate.slices.refunds.min_pass_rate", "gate.slices.tone.min_pass_rate"}},
		{name: "calibration limits raised or deleted", edit: func(s string) string {
			s = strings.Replace(s, "max_false_pass: 0", "max_false_pass: 2", 1)
			return strings.Replace(s, "    max_false_fail: 1\n", "", 1)
		}, keys: []string{"gate.calibration.max_false_pass", "gate.calibration.max_false_fail"}},
		{name: "a canary dropped", edit: func(s string) string {
			return strings.Replace(s, "  - name: neg\n    sample: {output_text: \"bad\"}\n    item: {expected: 1}\n    expect: 0\n",
				"  - name: neg2\n    sample: {output_text: \"bad\"}\n    item: {expected: 1}\n    expect: 0\n", 1)
		}, keys: []string{"canaries"}},
		{name: "a negative canary's sample changed under its name", edit: func(s string) string {
			return strings.Replace(s, "  - name: neg\n    sample: {output_text: \"bad\"}\n", "  - name: neg\n    sample: {output_text: \"\"}\n", 1)
		}, keys: []string{"canaries.neg"}},
		{name: "a canary's expectation changed under its name", edit: func(s string) string {
			return strings.Replace(s, "    item: {expected: 1}\n    expect: 0\n", "    item: {expected: 1}\n    expect: 0.5\n", 1)
		}, keys: []string{"canaries.neg"}},
		{name: "a canary rewritten in another layout is no change", edit: func(s string) string {
			return strings.Replace(s, "  - name: neg\n    sample: {output_text: \"bad\"}\n", "  - name: neg\n    sample:\n      output_text: bad\n", 1)
		}},
		{name: "checks switched off", edit: func(s string) string {
			return s + "  metamorphic: {enabled: false}\n  builtin_canaries: {enabled: false, reason: noisy}\n"
		}, keys: []string{"gate.metamorphic.enabled", "gate.builtin_canaries"}},
		{name: "a slice's rule deleted", edit: func(s string) string {
			return strings.Replace(s, "    refunds: {mandatory: true, min_cases: 3}\n", "", 1)
		}, keys: []string{"gate.slices.refunds"}},
	}
	base, err := Parse([]byte(weakenBase), "gradegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			head, err := Parse([]byte(tt.edit(weakenBase)), "gradegate.yaml")
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, w := range Weakenings(base, head) {
				keys = append(keys, w.Key)
				if w.Message == "" {
					t.Errorf("weakening %s says nothing", w.Key)
				}
			}
			if !slices.Equal(keys, tt.keys) {
				t.Errorf("weakenings %v, want %v", keys, tt.keys)
			}
		})
	}
}

func TestBuiltinCanariesNeedAReasonOff(t *testing.T) {
	_, err := Parse([]byte(minimal+"gate:\n  builtin_canaries: {enabled: false}\n"), "gradegate.yaml")
	if err == nil || !strings.Contains(err.Error(), "gate.builtin_canaries") || !strings.Contains(err.Error(), "reason") {
		t.Fatalf("err = %v, want one naming gate.builtin_canaries and its reason", err)
	}
	m, err := Parse([]byte(minimal+"gate:\n  builtin_canaries: {enabled: false, reason: \"the grader is a classifier\"}\n"), "gradegate.yaml")
	if err != nil || !m.Gate.BuiltinCanaries.Off || m.Gate.BuiltinCanaries.Reason == "" {
		t.Fatalf("m = %+v, err %v", m.Gate.BuiltinCanaries, err)
	}
}
