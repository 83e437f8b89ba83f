package manifest

// What a Python grader returns and how its exceptions count, in the terms of
// OpenAI's hosted grader.

// On-exception policies (grader.on_exception).
const (
	// OnExceptionHold treats a grader that raises as a grader bug: the case
	// is unevaluable and counts against gate.max_errors. The default.
	OnExceptionHold = "hold"
	// OnExceptionZero is the hosted rule: the case is graded 0 and fails,
	// and is still counted and listed as a grader exception.
	OnExceptionZero = "zero"
)

// ZeroOnException reports whether a raising grader grades the case 0.
func (g Grader) ZeroOnException() bool { return g.OnException == OnExceptionZero }

// pythonForbidden are the model grader keys a Python grader must not have:
// all but range, which bounds either grader's scores.
func pythonForbidden() []string {
	out := multiKeys()
	for _, k := range modelKeys() {
		if k != "range" {
			out = append(out, k)
		}
	}
	return out
}

// pythonScale decodes a Python grader's pass_threshold (any finite number),
// range and on_exception.
func (d *decoder) pythonScale(s *section, g *Grader) {
	if v, ok := s.enum("on_exception", OnExceptionHold, OnExceptionZero); ok {
		g.OnException = v
	}
	if n := s.scalar("range"); n != nil {
		if r, ok := d.scoreRange(n, s.key("range")); ok {
			g.Range = &r
		}
	}
	if v, ok := s.number("pass_threshold"); ok {
		if g.Range != nil && (v < g.Range[0] || v > g.Range[1]) {
			d.fail(s.node("pass_threshold").Line, s.key("pass_threshold"), "must be within range [%g, %g], got %g", g.Range[0], g.Range[1], v)
			return
		}
		g.PassThreshold = v
	}
}
