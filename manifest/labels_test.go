package manifest

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseLabelKeys(t *testing.T) {
	yaml := strings.Replace(minimal, "path: cases.jsonl", `path: cases.jsonl
  fields:
    rubric_version: rv
    label_status: status
    reviewer_labels: reviews
    reason: why`, 1) + `samples:
  path: samples.jsonl
  candidate: {model: support-bot, revision: "2026-11-30"}
rubric:
  version: cancel-rubric-3
gate:
  calibration:
    current_labels_only: true
    min_agreement: 0.6
    require_reasons: true
    warn_only_statuses: [needs_review]
`
	m, err := Parse([]byte(yaml), "gradegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f := m.Dataset.Fields
	if got := []string{f.RubricVersion, f.LabelStatus, f.ReviewerLabels, f.Reason}; !cmp.Equal(got, []string{"rv", "status", "reviews", "why"}) {
		t.Errorf("fields = %v", got)
	}
	if diff := cmp.Diff(&Candidate{Model: "support-bot", Revision: "2026-11-30"}, m.Samples.Candidate); diff != "" {
		t.Errorf("samples.candidate (-want +got):\n%s", diff)
	}
	c := m.Gate.Calibration
	if !c.CurrentLabelsOnly || !c.RequireReasons || c.MinAgreement == nil || *c.MinAgreement != 0.6 {
		t.Errorf("calibration = %+v", c)
	}
	for status, want := range map[string]bool{"disputed": true, "novel": true, "needs_review": true, "settled": false, "": false} {
		if got := c.WarnOnlyStatus(status); got != want {
			t.Errorf("WarnOnlyStatus(%q) = %v, want %v", status, got, want)
		}
	}
	if line := m.Line("gate.calibration.min_agreement"); line == 0 {
		t.Error("no line recorded for gate.calibration.min_agreement")
	}
}

func TestParseLabelKeyErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want wantErr
	}{
		{
			name: "misspelt field key",
			yaml: strings.Replace(minimal, "path: cases.jsonl", "path: cases.jsonl\n  fields: {reviewer_label: r}", 1),
			want: wantErr{"dataset.fields.reviewer_label", "reviewer_label", "did you mean reviewer_labels?"},
		},
		{
			name: "min_agreement out of range",
			yaml: minimal + "gate:\n  calibration:\n    min_agreement: 1.5\n",
			want: wantErr{"gate.calibration.min_agreement", "min_agreement:", "must be between 0 and 1"},
		},
		{
			name: "require_reasons not a boolean",
			yaml: minimal + "gate:\n  calibration:\n    require_reasons: yes please\n",
			want: wantErr{"gate.calibration.require_reasons", "require_reasons:", "must be true or false"},
		},
		{
			name: "current_labels_only without a rubric version",
			yaml: minimal + "gate:\n  calibration:\n    current_labels_only: true\n",
			want: wantErr{"gate.calibration.current_labels_only", "current_labels_only:", "needs rubric.version"},
		},
		{
			name: "candidate without a model",
			yaml: minimal + "samples:\n  path: s.jsonl\n  candidate:\n    revision: r1\n",
			want: wantErr{"samples.candidate.model", "candidate:", "required key is missing"},
		},
		{
			name: "candidate misspelt key",
			yaml: minimal + "samples:\n  path: s.jsonl\n  candidate: {model: m, revison: r1}\n",
			want: wantErr{"samples.candidate.revison", "candidate:", "did you mean revision?"},
		},
		{
			name: "warn_only_statuses not a list",
			yaml: minimal + "gate:\n  calibration:\n    warn_only_statuses: disputed\n",
			want: wantErr{"gate.calibration.warn_only_statuses", "warn_only_statuses:", "must be a list of strings"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const file = "evals/x/gradegate.yaml"
			_, err := Parse([]byte(tt.yaml), file)
			if !errors.Is(err, ErrInput) {
				t.Fatalf("Parse error = %v, want one matching ErrInput", err)
			}
			got := inputErrors(t, err)
			if len(got) != 1 {
				t.Fatalf("Parse reported %d problems, want 1:\n%v", len(got), err)
			}
			line := lineOf(t, tt.yaml, tt.want.at)
			if e := got[0]; e.File != file || e.Line != line || e.Key != tt.want.key || !strings.Contains(e.Msg, tt.want.msg) {
				t.Errorf("problem = %#v\nwant line %d, key %q, message containing %q", e, line, tt.want.key, tt.want.msg)
			}
		})
	}
}
