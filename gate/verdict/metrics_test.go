package verdict

import (
	"slices"
	"testing"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/manifest"
)

func TestMetricGates(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	rules := []manifest.MetricRule{{Name: "macro_f1", Min: f(0.8)}}
	over := func(values map[string]float64, batches int) *results.Metrics {
		return &results.Metrics{Scope: results.MetricScopeDataset, Cases: 12, Batches: batches, Values: values}
	}
	tests := []struct {
		name    string
		rules   []manifest.MetricRule
		metrics *results.Metrics
		shard   shard.Shard
		reasons []string
		status  string
	}{
		{name: "at the min passes", rules: rules, metrics: over(map[string]float64{"macro_f1": 0.8}, 1), status: "pass"},
		{name: "below the min holds", rules: rules, metrics: over(map[string]float64{"macro_f1": 0.79}, 1),
			reasons: []string{results.ReasonMetricBelowThreshold}, status: "hold"},
		{name: "above the max holds", rules: []manifest.MetricRule{{Name: "macro_f1", Min: f(0.5), Max: f(0.9)}}, metrics: over(map[string]float64{"macro_f1": 0.95}, 1),
			reasons: []string{results.ReasonMetricAboveThreshold}, status: "hold"},
		{name: "a metric the grader did not return holds", rules: rules, metrics: over(map[string]float64{"accuracy": 1}, 1),
			reasons: []string{results.ReasonMetricMissing}, status: "hold"},
		{name: "a batch invalid as a whole holds", rules: rules, metrics: over(map[string]float64{}, 0),
			reasons: []string{results.ReasonMetricMissing}, status: "hold"},
		{name: "values over several batches are not the set's", rules: rules, metrics: over(map[string]float64{"macro_f1": 0.9}, 2),
			reasons: []string{results.ReasonMetricMissing}, status: "hold"},
		{name: "no metrics block at all holds", rules: rules, reasons: []string{results.ReasonMetricMissing}, status: "hold"},
		{name: "a shard cannot gate the set", rules: rules, metrics: &results.Metrics{Scope: results.MetricScopeShard, Batches: 1, Values: map[string]float64{"macro_f1": 0.9}},
			shard: shard.Shard{Index: 1, Count: 2}, reasons: []string{results.ReasonMetricNotShardable}, status: "hold"},
		{name: "merged shards cannot either", rules: rules, metrics: &results.Metrics{Scope: results.MetricScopeShards, Batches: 2, Values: map[string]float64{}},
			reasons: []string{results.ReasonMetricNotShardable}, status: "hold"},
		{name: "metrics without gates are reported", metrics: over(map[string]float64{"accuracy": 0.5}, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := manifest.Gate{MinPassRate: 0, Metrics: tt.rules}
			v := Decide(g, Evidence{Cases: []results.CaseResult{passRow("a")}, Metrics: tt.metrics, Shard: tt.shard})
			var codes []string
			for _, r := range v.Reasons {
				if r.Code != results.ReasonOverallBelowThreshold {
					codes = append(codes, r.Code)
				}
			}
			if !slices.Equal(codes, tt.reasons) {
				t.Errorf("reasons %v, want %v (%+v)", codes, tt.reasons, v.Reasons)
			}
			if v.Metrics == nil {
				t.Fatal("no metrics block")
			}
			if tt.status == "" {
				if len(v.Metrics.Gates) != 0 || v.Metrics.Values["accuracy"] != 0.5 {
					t.Errorf("metrics %+v", v.Metrics)
				}
				return
			}
			if len(v.Metrics.Gates) != 1 || v.Metrics.Gates[0].Status != tt.status {
				t.Errorf("gates %+v, want one with status %s", v.Metrics.Gates, tt.status)
			}
		})
	}
}

func passRow(id string) results.CaseResult {
	s := 1.0
	return results.CaseResult{CaseID: id, Status: results.StatusPass, Class: "ok", Score: &s, Scores: map[string]float64{"score": 1}, Slices: []string{}}
}
