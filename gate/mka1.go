package gate

import (
	"math"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/gate/worker"
	"github.com/gradegate/gradegate/manifest"
)

// This file holds what grader.platform: mka1 changes in a run: what the
// worker fills into MKA1's sample and item, and the one batch of an
// aggregate grader.

// MKA1RunID is sample["run_id"] for a stored sample that has none: a gate
// run is local, and a grader must not see an id that changes between runs
// of the same bytes (the determinism check would flag it).
const MKA1RunID = "gradegate-local"

// mka1Worker is the worker's MKA1 settings for a grader under platform
// mka1, or nil: task_id is the suite's name, model the samples'
// candidate model when samples.candidate names one.
func mka1Worker(m *manifest.Manifest, g manifest.Grader) *worker.MKA1 {
	if g.Platform != manifest.PlatformMKA1 {
		return nil
	}
	w := &worker.MKA1{TaskID: m.Name, RunID: MKA1RunID, TargetField: g.TargetField, Metrics: g.Metrics}
	if m.Samples != nil && m.Samples.Candidate != nil {
		w.Model = m.Samples.Candidate.Model
	}
	return w
}

// aggregateBatch is the worker's batch size for an aggregate grader: one
// grade_batch call holds every case handed over, so its metrics are over
// the whole set. 0 (the worker's default) for every other grader.
func aggregateBatch(g manifest.Grader) int {
	if g.Aggregate() {
		return math.MaxInt
	}
	return 0
}

// metricsOf is the metrics block of an aggregate grader's run: the one
// batch's metrics, over the shard's cases when the run is a shard of
// several. nil for every other grader.
func metricsOf(m *manifest.Manifest, batches []*grading.BatchReport, sh shard.Shard) *results.Metrics {
	if !m.Grader.Aggregate() {
		return nil
	}
	out := &results.Metrics{Scope: results.MetricScopeDataset, Batches: len(batches), Values: map[string]float64{}}
	if sh.Partial() {
		out.Scope = results.MetricScopeShard
	}
	for _, b := range batches {
		out.Cases += b.Cases
	}
	if len(batches) == 1 {
		for k, v := range batches[0].Metrics {
			out.Values[k] = v
		}
		out.Dropped = batches[0].Dropped
	}
	return out
}

// mergeMetrics is the metrics block of merged shards: one shard's as it
// is, several shards' without values (each is over its own cases, and
// none over the whole set), so gate.metrics holds with
// metric_not_shardable.
func mergeMetrics(shards []*results.Results) *results.Metrics {
	var out *results.Metrics
	for _, r := range shards {
		if r.Metrics == nil {
			continue
		}
		if len(shards) == 1 {
			c := *r.Metrics
			c.Gates = nil
			return &c
		}
		if out == nil {
			out = &results.Metrics{Scope: results.MetricScopeShards, Values: map[string]float64{}}
		}
		out.Cases += r.Metrics.Cases
		out.Batches += r.Metrics.Batches
	}
	return out
}
