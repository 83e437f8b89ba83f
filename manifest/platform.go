package manifest

import (
	"math"
	"sort"

	"go.yaml.in/yaml/v3"
)

// Platforms (grader.platform): whose grader contract a Python grader is
// written for. The sample shape, the item's convenience fields, the return
// rules and the names of the keys follow that platform, so a grader moves
// between it and gradegate with no edit.
const (
	PlatformOpenAI = "openai"
	PlatformMKA1   = "mka1"
)

// mka1Keys are the grader keys only platform mka1 reads.
func mka1Keys() []string {
	return []string{"metric_id", "metrics", "model_access", "target_field"}
}

// platform decodes grader.platform and the keys that depend on it: the
// contract, MKA1's metric_id, declared metrics, max_model_calls,
// model_access and target_field. It runs after the keys both platforms
// share (timeout_seconds keeps its 1..600 bound and 120 default, which are
// MKA1's too).
func (d *decoder) platform(s *section, g *Grader) {
	if v, ok := s.enum("platform", PlatformOpenAI, PlatformMKA1); ok && v == PlatformMKA1 {
		g.Platform = v
	}
	// model_backed is MKA1's name for a sample grader that takes ctx,
	// which the gate serves on every platform.
	if v, ok := s.enum("contract", "sample", "batch", ContractModelBacked); ok {
		g.Contract = v
		if v == ContractModelBacked {
			g.Contract, g.ModelBacked = "sample", true
		}
	}
	if g.Platform != PlatformMKA1 {
		for _, k := range mka1Keys() {
			if n := s.node(k); n != nil {
				d.fail(n.Line, s.key(k), "is a key of MKA1's grader contract; set grader.platform: mka1 to use it")
			}
		}
		return
	}
	if m, id := s.node("metric"), s.node("metric_id"); m != nil && id != nil {
		d.fail(id.Line, s.key("metric_id"), "grader.metric (line %d) names the same score; under platform mka1 write metric_id only", m.Line)
	} else if v, ok := s.str("metric_id"); ok {
		g.Metric = v
	}
	if v, ok := s.enum("model_access", "mka1", "none"); ok {
		switch {
		case v == "none" && g.ModelBacked:
			d.fail(s.node("model_access").Line, s.key("model_access"),
				"none contradicts contract model_backed, whose grader takes ctx for its model calls")
		case v == "mka1":
			g.ModelBacked = true
		}
	}
	g.TargetField, _ = s.str("target_field")
	if names, all := s.strings("metrics"); all {
		seen := map[string]bool{}
		for i, name := range names {
			if seen[name] {
				d.fail(resolve(s.node("metrics").Content[i]).Line, s.key("metrics"), "names %s twice", quote(name))
				continue
			}
			seen[name] = true
			g.Metrics = append(g.Metrics, name)
		}
	}
}

// gateMetrics decodes gate.metrics: NAME: {min: X, max: Y}, the aggregate
// metrics of grade_batch that gate the run. Sorted by name.
func (d *decoder) gateMetrics(n *yaml.Node) []MetricRule {
	if n.Kind != yaml.MappingNode {
		d.fail(n.Line, "gate.metrics", "must be a mapping of metric name to {min, max}, got %s", describe(n))
		return nil
	}
	var rules []MetricRule
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode || k.Value == "" {
			d.fail(k.Line, "gate.metrics", "metric names must be non-empty strings, got %s", describe(k))
			continue
		}
		key := "gate.metrics." + keyText(k.Value)
		if first, dup := seen[k.Value]; dup {
			d.fail(k.Line, key, "duplicate metric (first at line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		d.lines[key] = k.Line
		s, ok := d.mapping(v, key, k.Line, "min", "max")
		if !ok {
			continue
		}
		rule := MetricRule{Name: k.Value, Line: k.Line}
		if f, ok := s.number("min"); ok {
			rule.Min = &f
		}
		if f, ok := s.number("max"); ok {
			rule.Max = &f
		}
		switch {
		case !s.written("min") && !s.written("max"):
			d.fail(k.Line, key, "needs min, max or both: a metric gate without a bound gates nothing")
		case rule.Min != nil && rule.Max != nil && *rule.Min > *rule.Max:
			d.fail(k.Line, key, "min %g is above max %g: no value can pass", *rule.Min, *rule.Max)
		}
		rules = append(rules, rule)
	}
	sort.SliceStable(rules, func(i, j int) bool { return rules[i].Name < rules[j].Name })
	return rules
}

// checkGateMetrics holds gate.metrics to the grader that can produce them:
// only a batch grader under platform mka1 returns aggregate metrics, and a
// metric that grader.metrics does not declare is dropped before it could
// gate.
func (d *decoder) checkGateMetrics(m *Manifest) {
	if len(m.Gate.Metrics) == 0 {
		return
	}
	line := d.lines["gate.metrics"]
	g := m.Grader
	if g.Type != "python" || g.Platform != PlatformMKA1 || g.Contract != "batch" {
		d.fail(line, "gate.metrics", "gates aggregate metrics, which only a batch grader under MKA1's contract returns (grader.type: python, grader.platform: mka1, grader.contract: batch)")
		return
	}
	if len(g.Metrics) == 0 {
		return
	}
	for _, r := range m.Gate.Metrics {
		if !contains(g.Metrics, r.Name) {
			d.fail(r.Line, "gate.metrics."+keyText(r.Name), "is not among grader.metrics (%s): an undeclared metric is dropped, so it could never pass", quote(joinNames(g.Metrics)))
		}
	}
}

func joinNames(names []string) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += n
	}
	return out
}

// MetricRule is one entry of gate.metrics: the bounds an aggregate metric
// of grade_batch must meet. Min and Max are nil when not written.
type MetricRule struct {
	Name string   `json:"name"`
	Min  *float64 `json:"min,omitempty"`
	Max  *float64 `json:"max,omitempty"`
	Line int      `json:"-"`
}

// Holds reports whether value is outside the rule's bounds.
func (r MetricRule) Holds(value float64) bool {
	if math.IsNaN(value) || math.IsInf(value, 0) {
		return true
	}
	return (r.Min != nil && value < *r.Min) || (r.Max != nil && value > *r.Max)
}

// Aggregate reports whether the grader's batch is the whole set: platform
// mka1's batch contract, whose grade_batch computes metrics over every
// case at once and whose canaries run in batches of their own.
func (g Grader) Aggregate() bool {
	return g.Type == "python" && g.Platform == PlatformMKA1 && g.Contract == "batch"
}
