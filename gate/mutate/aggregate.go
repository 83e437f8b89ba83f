package mutate

import (
	"slices"
	"strings"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// This file is mutation testing's view of gate.metrics: an aggregate
// grader (MKA1's batch contract) is graded once more per source over every
// dataset case with a sample, in one batch as the gate grades them, and a
// mutant whose metric breaks a gate the unmutated grader's metric meets is
// killed by that gate. A mutant that changes only the metric (the macro
// average, a label's F1) is seen by nothing else.

// aggregateTasks are the cases of the aggregate batch: every readable case
// with a sample when gate.metrics gates an aggregate grader, else none.
func aggregateTasks(m *manifest.Manifest, cases []dataset.Case) []grading.Task {
	if len(m.Gate.Metrics) == 0 || !m.Grader.Aggregate() {
		return nil
	}
	var out []grading.Task
	for _, c := range cases {
		if c.Sample != nil && !c.Unreadable {
			out = append(out, grading.Task{ID: c.ID, Sample: c.Sample, Item: c.ItemForGrader()})
		}
	}
	return out
}

// batchOf is the one grade_batch report of an aggregate batch's outcomes,
// or nil when the batch returned none (it raised, or was invalid whole).
func batchOf(outcomes []grading.Outcome) *grading.BatchReport {
	for _, o := range outcomes {
		if o.Batch != nil {
			return o.Batch
		}
	}
	return nil
}

// metricValue is a gated metric's value in a report; ok is false when it
// has none.
func metricValue(b *grading.BatchReport, name string) (float64, bool) {
	if b == nil {
		return 0, false
	}
	v, ok := b.Metrics[name]
	return v, ok
}

// liveMetrics are the gates the unmutated grader's metrics meet: only they
// can tell a mutant apart.
func (s *suite) liveMetrics(base *grading.BatchReport) []bool {
	live := make([]bool, len(s.m.Gate.Metrics))
	for i, r := range s.m.Gate.Metrics {
		v, ok := metricValue(base, r.Name)
		live[i] = ok && !r.Holds(v)
	}
	return live
}

// metricKillers names the live gates a mutant's metrics break
// ("gate.metrics.macro_f1"): its value is missing or outside the bounds.
func (s *suite) metricKillers(b *grading.BatchReport) []string {
	if len(s.aggregate) == 0 {
		return nil
	}
	var out []string
	for i, r := range s.m.Gate.Metrics {
		if !s.liveMetric[i] {
			continue
		}
		if v, ok := metricValue(b, r.Name); !ok || r.Holds(v) {
			out = append(out, "gate.metrics."+r.Name)
		}
	}
	return out
}

// byMetricOnly says whether every killer is a gate.metrics gate.
func (s *suite) byMetricOnly(killers []string) bool {
	return len(killers) > 0 && !slices.ContainsFunc(killers, func(k string) bool { return !strings.HasPrefix(k, "gate.metrics.") })
}
