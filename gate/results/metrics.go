package results

// Reason codes of gate.metrics, the aggregate gates on grade_batch's
// metrics (platform mka1).
const (
	// ReasonMetricBelowThreshold: a gated metric is below its min.
	ReasonMetricBelowThreshold = "metric_below_threshold"
	// ReasonMetricAboveThreshold: a gated metric is above its max.
	ReasonMetricAboveThreshold = "metric_above_threshold"
	// ReasonMetricMissing: a gated metric has no value to gate: the batch
	// was not a valid return as a whole, the grader did not return the
	// metric, or its value was dropped (not finite).
	ReasonMetricMissing = "metric_missing"
	// ReasonMetricNotShardable: a gated metric is an aggregate over the
	// whole set, which no shard graded and merge cannot recompute.
	ReasonMetricNotShardable = "metric_not_shardable"
)

// Metric scopes: what set of cases the values were computed over.
const (
	// MetricScopeDataset: one grade_batch call over every case the run
	// graded (the whole intended set of an unsharded run).
	MetricScopeDataset = "dataset"
	// MetricScopeShard: over one shard's cases only; not gated.
	MetricScopeShard = "shard"
	// MetricScopeShards: a merge of shards, each with its own values;
	// an aggregate of the whole set is not among them.
	MetricScopeShards = "shards"
)

// Metrics is the results "metrics" block: the aggregate metrics a batch
// grader returned under MKA1's contract, and their gates.
type Metrics struct {
	Scope string `json:"scope"`
	// Cases is how many cases the batch held; Batches how many grade_batch
	// calls returned metrics (1 when the set was graded at once, 0 when
	// the batch was not a valid return).
	Cases   int `json:"cases"`
	Batches int `json:"batches"`
	// Values are the metrics kept, by name.
	Values map[string]float64 `json:"values"`
	// Dropped names the metrics the rules dropped, with why (not finite,
	// not among grader.metrics).
	Dropped []string `json:"dropped,omitempty"`
	// Gates are gate.metrics's rules with the values they read, in name
	// order.
	Gates []MetricGate `json:"gates,omitempty"`
}

// MetricGate is one gate.metrics rule as decided.
type MetricGate struct {
	Name  string   `json:"name"`
	Min   *float64 `json:"min,omitempty"`
	Max   *float64 `json:"max,omitempty"`
	Value *float64 `json:"value"`
	// Status is pass, hold, or warn (a shard, which merge decides).
	Status string `json:"status"`
}
