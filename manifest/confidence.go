package manifest

// Defaults of the statistics keys.
const (
	// DefaultConfidenceLevel is gate.confidence.level's default.
	DefaultConfidenceLevel = 0.95
	// DefaultConfidenceRule is gate.confidence.rule's default: today's
	// rule, a slice passes when its observed rate meets its minimum.
	DefaultConfidenceRule = RulePoint
	// DefaultBaselineAlpha is gate.baseline.alpha's default.
	DefaultBaselineAlpha = 0.05
	// MaxRepeats bounds gate.repeats: each repeat is a call per case.
	MaxRepeats = 99
)

// Rules of gate.confidence.rule.
const (
	// RulePoint gates a slice on its observed pass rate.
	RulePoint = "point"
	// RuleLowerBound passes a slice only when its interval's lower bound
	// clears the minimum and holds it only when the upper bound is below;
	// in between the slice is inconclusive.
	RuleLowerBound = "lower_bound"
)

// Confidence is gate.confidence: the level of every interval the results
// show, and whether slices are gated on the observed rate or the interval.
type Confidence struct {
	Level float64 `json:"level"` // in (0, 1); default 0.95
	Rule  string  `json:"rule"`  // point | lower_bound
}

// confidence reads gate.confidence into g.
func (d *decoder) confidence(s *section, g *Gate) {
	n := s.node("confidence")
	if n == nil {
		return
	}
	c, ok := d.mapping(n, "gate.confidence", d.lines["gate.confidence"], "level", "rule")
	if !ok {
		return
	}
	if v, ok := c.number("level"); ok {
		if v <= 0 || v >= 1 {
			d.fail(c.node("level").Line, c.key("level"), "must be above 0 and below 1 (0.95 is a 95%% interval), got %g", v)
		} else {
			g.Confidence.Level = v
		}
	}
	if v, ok := c.enum("rule", RulePoint, RuleLowerBound); ok {
		g.Confidence.Rule = v
	}
}

// repeats reads gate.repeats into g. It must be odd, so that every case
// has a majority; checkRepeats says whether the grader is one it applies to.
func (d *decoder) repeats(s *section, g *Gate) {
	v, ok := s.integer("repeats", 1, MaxRepeats)
	if !ok {
		return
	}
	if v%2 == 0 {
		d.fail(s.node("repeats").Line, "gate.repeats", "must be odd, so that the answers of every case have a majority, got %d", v)
		return
	}
	g.Repeats = v
}

// checkRepeats refuses gate.repeats above 1 for a grader that is not a
// model grader: nothing asks it, and gate.determinism is what measures
// whether it answers the same twice.
func (d *decoder) checkRepeats(m *Manifest) {
	if m.Gate.Repeats > 1 && m.Grader.Judge == nil {
		d.fail(d.lines["gate.repeats"], "gate.repeats",
			"asks a model grader each case %d times; a %s grader is not asked (gate.determinism grades cases twice to measure its noise)", m.Gate.Repeats, m.Grader.Type)
	}
}
