package verdict

import (
	"fmt"
	"strings"

	"github.com/gradegate/gradegate/gate/results"
)

// metrics decides gate.metrics over the aggregate metrics of the run's
// batch and returns the metrics block with its gates; nil when the run has
// neither metrics nor metric gates.
//
// The batch is the whole set: a shard's values are over its own cases and
// a merge of shards has none over the whole, and a Python metric cannot be
// recomputed from the rows, so both hold with metric_not_shardable (a
// shard's says so, and merge's holds the run) rather than gate a value
// that is not the one named.
func (d *decider) metrics() *results.Metrics {
	rules := d.g.Metrics
	m := d.ev.Metrics
	if m == nil && len(rules) == 0 {
		return nil
	}
	out := &results.Metrics{Scope: results.MetricScopeDataset, Values: map[string]float64{}}
	if m != nil {
		*out = *m
		out.Gates = nil
		if out.Values == nil {
			out.Values = map[string]float64{}
		}
	}
	if len(rules) == 0 {
		return out
	}
	unshardable := d.partial || out.Scope != results.MetricScopeDataset
	var names []string
	for _, r := range rules {
		gate := results.MetricGate{Name: r.Name, Min: r.Min, Max: r.Max, Status: results.StatusPass}
		v, ok := out.Values[r.Name]
		if ok && out.Batches == 1 && !unshardable {
			gate.Value = &v
		}
		switch {
		case unshardable:
			gate.Status = results.VerdictHold
			names = append(names, r.Name)
		case gate.Value == nil:
			gate.Status = results.VerdictHold
			d.hold(results.Reason{Code: results.ReasonMetricMissing, Message: missingMetric(r.Name, out)})
		case r.Holds(v):
			gate.Status = results.VerdictHold
			code, bound := results.ReasonMetricBelowThreshold, fmt.Sprintf("below its min %g", deref(r.Min))
			if r.Min == nil || v >= *r.Min {
				code, bound = results.ReasonMetricAboveThreshold, fmt.Sprintf("above its max %g", deref(r.Max))
			}
			d.hold(results.Reason{Code: code, Message: fmt.Sprintf("metric %s is %.4g over %d cases, %s (gate.metrics.%s)", r.Name, v, out.Cases, bound, r.Name)})
		}
		out.Gates = append(out.Gates, gate)
	}
	if unshardable {
		where := fmt.Sprintf("shard %s grades part of the cases", d.ev.Shard)
		if !d.partial {
			where = "the merged shards each computed them over their own cases"
		}
		d.hold(results.Reason{Code: results.ReasonMetricNotShardable, Message: fmt.Sprintf(
			"gate.metrics (%s) gates aggregates over the whole set, and %s; merge cannot recompute a Python metric from the rows: run this suite unsharded",
			strings.Join(names, ", "), where)})
	}
	return out
}

func missingMetric(name string, m *results.Metrics) string {
	switch {
	case m.Batches == 0:
		return fmt.Sprintf("metric %s has no value: grade_batch returned no valid result for the batch (see the cases' errors)", name)
	case m.Batches > 1:
		return fmt.Sprintf("metric %s has no value over the whole set: %d grade_batch calls returned metrics, each over part of it", name, m.Batches)
	}
	for _, d := range m.Dropped {
		if strings.HasPrefix(d, name+":") {
			return fmt.Sprintf("metric %s has no value: it was dropped (%s)", name, d)
		}
	}
	return fmt.Sprintf("metric %s has no value: grade_batch's metrics do not name it", name)
}

func deref(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}
