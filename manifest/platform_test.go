package manifest

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mka1 is minimal with its grader under MKA1's contract.
func mka1(graderKeys string) string {
	return strings.Replace(minimal, "  type: python\n", "  type: python\n  platform: mka1\n"+graderKeys, 1)
}

func TestParsePlatform(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want Grader
	}{
		{
			name: "openai by default",
			yaml: minimal,
			want: Grader{Contract: "sample", Metric: "score", TimeoutSeconds: 120, MaxModelCalls: 64},
		},
		{
			name: "mka1 defaults",
			yaml: mka1(""),
			want: Grader{Platform: PlatformMKA1, Contract: "sample", Metric: "score", TimeoutSeconds: 120, MaxModelCalls: 64},
		},
		{
			name: "mka1 metric_id, batch, declared metrics",
			yaml: mka1("  contract: batch\n  metric_id: correct\n  metrics: [macro_f1, accuracy]\n  timeout_seconds: 600\n  max_model_calls: 0\n  target_field: label\n"),
			want: Grader{Platform: PlatformMKA1, Contract: "batch", Metric: "correct", TimeoutSeconds: 600,
				Metrics: []string{"macro_f1", "accuracy"}, TargetField: "label"},
		},
		{
			name: "model_backed is the sample contract with ctx",
			yaml: mka1("  contract: model_backed\n  max_model_calls: 500\n"),
			want: Grader{Platform: PlatformMKA1, Contract: "sample", ModelBacked: true, Metric: "score", TimeoutSeconds: 120, MaxModelCalls: 500},
		},
		{
			name: "model_backed on openai too: ctx is served on every platform",
			yaml: strings.Replace(minimal, "  type: python\n", "  type: python\n  contract: model_backed\n", 1),
			want: Grader{Contract: "sample", ModelBacked: true, Metric: "score", TimeoutSeconds: 120, MaxModelCalls: 64},
		},
		{
			name: "model_access mka1 gives a sample grader ctx",
			yaml: mka1("  model_access: mka1\n"),
			want: Grader{Platform: PlatformMKA1, Contract: "sample", ModelBacked: true, Metric: "score", TimeoutSeconds: 120, MaxModelCalls: 64},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.yaml), "gradegate.yaml")
			if err != nil {
				t.Fatal(err)
			}
			g := m.Grader
			got := Grader{Platform: g.Platform, Contract: g.Contract, ModelBacked: g.ModelBacked, Metric: g.Metric,
				TimeoutSeconds: g.TimeoutSeconds, MaxModelCalls: g.MaxModelCalls, Metrics: g.Metrics, TargetField: g.TargetField}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("grader (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseGateMetrics(t *testing.T) {
	y := mka1("  contract: batch\n") + "gate:\n  metrics:\n    macro_f1: {min: 0.8}\n    accuracy: {min: 0.5, max: 1}\n"
	m, err := Parse([]byte(y), "gradegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []MetricRule{{Name: "accuracy", Min: f64(0.5), Max: f64(1)}, {Name: "macro_f1", Min: f64(0.8)}}
	if diff := cmp.Diff(want, m.Gate.Metrics, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Line" }, cmp.Ignore())); diff != "" {
		t.Errorf("gate.metrics (-want +got):\n%s", diff)
	}
	if !m.Grader.Aggregate() {
		t.Error("Aggregate() = false for a batch grader under mka1")
	}
}

func TestParsePlatformErrors(t *testing.T) {
	batch := mka1("  contract: batch\n")
	tests := []struct {
		name string
		yaml string
		want []wantErr
	}{
		{
			name: "unknown platform",
			yaml: strings.Replace(minimal, "  type: python\n", "  type: python\n  platform: vertex\n", 1),
			want: []wantErr{{"grader.platform", "platform: vertex", "must be one of openai | mka1"}},
		},
		{
			name: "an MKA1 key under openai",
			yaml: strings.Replace(minimal, "  type: python\n", "  type: python\n  metric_id: exact\n  target_field: answer\n", 1),
			want: []wantErr{
				{"grader.metric_id", "metric_id: exact", "set grader.platform: mka1"},
				{"grader.target_field", "target_field: answer", "set grader.platform: mka1"},
			},
		},
		{
			name: "contract outside MKA1's three",
			yaml: mka1("  contract: aggregate\n"),
			want: []wantErr{{"grader.contract", "contract: aggregate", "must be one of sample | batch | model_backed"}},
		},
		{
			name: "metric and metric_id both",
			yaml: mka1("  metric: a\n  metric_id: b\n"),
			want: []wantErr{{"grader.metric_id", "metric_id: b", "grader.metric (line 9) names the same score"}},
		},
		{
			name: "max_model_calls out of range",
			yaml: mka1("  max_model_calls: 501\n"),
			want: []wantErr{{"grader.max_model_calls", "max_model_calls: 501", "must be between 0 and 500"}},
		},
		{
			name: "timeout_seconds out of MKA1's range",
			yaml: mka1("  timeout_seconds: 0\n"),
			want: []wantErr{{"grader.timeout_seconds", "timeout_seconds: 0", "must be between 1 and 600"}},
		},
		{
			name: "model_access none with model_backed",
			yaml: mka1("  contract: model_backed\n  model_access: none\n"),
			want: []wantErr{{"grader.model_access", "model_access: none", "contradicts contract model_backed"}},
		},
		{
			name: "a metric declared twice",
			yaml: mka1("  metrics: [f1, f1]\n"),
			want: []wantErr{{"grader.metrics", "metrics: [f1, f1]", "names \"f1\" twice"}},
		},
		{
			name: "gate.metrics on a sample grader",
			yaml: mka1("") + "gate:\n  metrics:\n    macro_f1: {min: 0.8}\n",
			want: []wantErr{{"gate.metrics", "  metrics:", "only a batch grader under MKA1's contract returns"}},
		},
		{
			name: "gate.metrics on an openai batch grader",
			yaml: strings.Replace(minimal, "  type: python\n", "  type: python\n  contract: batch\n", 1) + "gate:\n  metrics:\n    macro_f1: {min: 0.8}\n",
			want: []wantErr{{"gate.metrics", "  metrics:", "grader.platform: mka1"}},
		},
		{
			name: "gate.metrics without a bound",
			yaml: batch + "gate:\n  metrics:\n    macro_f1: {}\n",
			want: []wantErr{{"gate.metrics.macro_f1", "macro_f1: {}", "needs min, max or both"}},
		},
		{
			name: "gate.metrics min above max",
			yaml: batch + "gate:\n  metrics:\n    macro_f1: {min: 0.9, max: 0.1}\n",
			want: []wantErr{{"gate.metrics.macro_f1", "macro_f1: {min", "no value can pass"}},
		},
		{
			name: "gate.metrics misspelt bound",
			yaml: batch + "gate:\n  metrics:\n    macro_f1: {minimum: 0.9}\n",
			want: []wantErr{
				{"gate.metrics.macro_f1.minimum", "macro_f1: {min", "unknown key; expected one of: min, max"},
				{"gate.metrics.macro_f1", "macro_f1: {min", "needs min, max or both"},
			},
		},
		{
			name: "gate.metrics names an undeclared metric",
			yaml: mka1("  contract: batch\n  metrics: [accuracy]\n") + "gate:\n  metrics:\n    macro_f1: {min: 0.8}\n",
			want: []wantErr{{"gate.metrics.macro_f1", "macro_f1: {min", "is not among grader.metrics"}},
		},
		{
			name: "gate.metrics not a mapping",
			yaml: batch + "gate:\n  metrics: [macro_f1]\n",
			want: []wantErr{{"gate.metrics", "metrics: [macro_f1]", "must be a mapping of metric name to {min, max}"}},
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
			if len(got) != len(tt.want) {
				t.Fatalf("Parse reported %d problems, want %d:\n%v", len(got), len(tt.want), err)
			}
			for i, w := range tt.want {
				line := lineOf(t, tt.yaml, w.at)
				e := got[i]
				if e.File != file || e.Line != line || e.Key != w.key || !strings.Contains(e.Msg, w.msg) {
					t.Errorf("problem %d = %#v\nwant file %s, line %d, key %q, message containing %q", i, e, file, line, w.key, w.msg)
				}
			}
		})
	}
}
