package render

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gradegate/gradegate/gate/results"
)

// MetricLines state a batch grader's aggregate metrics and their gates,
// one line each, in the form every output uses: a head line
// ("metrics: over 12 cases, one grade_batch call"), then "macro_f1 0.8333
// min 0.8: pass" for each gated metric and "accuracy 0.75" for the rest,
// then what was dropped. The names and the dropped notes are the grader's
// text: each printer passes them through its own door (oneLine, md).
func MetricLines(m *results.Metrics) []string {
	if m == nil {
		return nil
	}
	head := fmt.Sprintf("metrics: over %s, %s", plural(m.Cases, "case", "cases"), plural(m.Batches, "grade_batch call", "grade_batch calls"))
	switch m.Scope {
	case results.MetricScopeShard:
		head += " (this shard's cases only: not gated)"
	case results.MetricScopeShards:
		head += " (each shard's own cases: no value over the whole set)"
	}
	lines := []string{head}
	gated := map[string]bool{}
	for _, g := range m.Gates {
		gated[g.Name] = true
		value := "no value"
		if g.Value != nil {
			value = strconv.FormatFloat(*g.Value, 'g', 4, 64)
		}
		var bounds []string
		if g.Min != nil {
			bounds = append(bounds, "min "+strconv.FormatFloat(*g.Min, 'g', -1, 64))
		}
		if g.Max != nil {
			bounds = append(bounds, "max "+strconv.FormatFloat(*g.Max, 'g', -1, 64))
		}
		lines = append(lines, fmt.Sprintf("  %s %s %s: %s", g.Name, value, strings.Join(bounds, " "), g.Status))
	}
	names := make([]string, 0, len(m.Values))
	for name := range m.Values {
		if !gated[name] {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		lines = append(lines, fmt.Sprintf("  %s %s", name, strconv.FormatFloat(m.Values[name], 'g', 4, 64)))
	}
	for _, d := range m.Dropped {
		lines = append(lines, "  dropped "+d)
	}
	return lines
}
