package verdict

import (
	"fmt"

	"github.com/gradegate/gradegate/gate/results"
)

// calibration holds the run to gate.calibration overall: more passes whose
// human_score is 0 than max_false_pass (false_pass), or, when
// max_false_fail is set, more fails whose human_score is 1 (false_fail).
// Every false pass, held or not, is named in a warning, so each report
// lists them. A count over its maximum in one shard is over it in the
// union, so a shard holds on it too.
func (d *decider) calibration() {
	c := d.g.Calibration
	o := &d.t.overall
	// A slice that held on its false passes named them already; the overall
	// count then only lists them all.
	if o.falsePass > c.MaxFalsePass && !d.heldOn(results.ReasonFalsePass) {
		d.hold(results.Reason{Code: results.ReasonFalsePass, CaseIDs: o.falsePassIDs, Message: fmt.Sprintf(
			"%d %s passed although %s human_score is 0 (%s), gate.calibration.max_false_pass is %d",
			o.falsePass, plural(o.falsePass, "case", "cases"), plural(o.falsePass, "its", "their"),
			idList(o.falsePassIDs, o.falsePass), c.MaxFalsePass)})
	} else if o.falsePass > 0 {
		d.warn(results.Warning{Code: WarnFalsePass, Message: fmt.Sprintf(
			"%d %s passed although %s human_score is 0: %s",
			o.falsePass, plural(o.falsePass, "case", "cases"), plural(o.falsePass, "its", "their"), idList(o.falsePassIDs, o.falsePass))})
	}
	if c.MaxFalseFail != nil && o.falseFail > *c.MaxFalseFail && !d.heldOn(results.ReasonFalseFail) {
		d.hold(results.Reason{Code: results.ReasonFalseFail, CaseIDs: o.falseFailIDs, Message: fmt.Sprintf(
			"%d %s failed although %s human_score is 1 (%s), gate.calibration.max_false_fail is %d",
			o.falseFail, plural(o.falseFail, "case", "cases"), plural(o.falseFail, "its", "their"),
			idList(o.falseFailIDs, o.falseFail), *c.MaxFalseFail)})
	}
}

// sliceCalibration is gate.calibration in one slice: max_false_pass and
// max_false_fail, or for a mandatory slice mandatory_max_false_pass (0
// unless set) and mandatory_max_false_fail (max_false_fail unless set).
func (d *decider) sliceCalibration(sr *results.SliceResult, g *group, mandatory bool) []results.Reason {
	c := d.g.Calibration
	maxPass, maxFail := c.MaxFalsePass, c.MaxFalseFail
	passKey, failKey := "max_false_pass", "max_false_fail"
	what := "slice"
	if mandatory {
		what, passKey = "mandatory slice", "mandatory_max_false_pass"
		maxPass = 0
		if c.MandatoryMaxFalsePass != nil {
			maxPass = *c.MandatoryMaxFalsePass
		}
		if c.MandatoryMaxFalseFail != nil {
			maxFail, failKey = c.MandatoryMaxFalseFail, "mandatory_max_false_fail"
		}
	}
	var out []results.Reason
	if sr.FalsePass > maxPass {
		out = append(out, results.Reason{Code: results.ReasonFalsePass, Slice: sr.Name, CaseIDs: g.falsePassIDs, Message: fmt.Sprintf(
			"%s %q: %d %s passed although %s human_score is 0 (%s), gate.calibration.%s is %d",
			what, sr.Name, sr.FalsePass, plural(sr.FalsePass, "case", "cases"), plural(sr.FalsePass, "its", "their"),
			idList(g.falsePassIDs, sr.FalsePass), passKey, maxPass)})
	}
	if maxFail != nil && sr.FalseFail > *maxFail {
		out = append(out, results.Reason{Code: results.ReasonFalseFail, Slice: sr.Name, CaseIDs: g.falseFailIDs, Message: fmt.Sprintf(
			"%s %q: %d %s failed although %s human_score is 1 (%s), gate.calibration.%s is %d",
			what, sr.Name, sr.FalseFail, plural(sr.FalseFail, "case", "cases"), plural(sr.FalseFail, "its", "their"),
			idList(g.falseFailIDs, sr.FalseFail), failKey, *maxFail)})
	}
	return out
}

// informativeCalibration applies sliceCalibration to a slice without a
// mandatory rule: it holds, unless the slice is warn_only, which warns.
func (d *decider) informativeCalibration(sr *results.SliceResult, g *group, warnOnly bool) {
	for _, r := range d.sliceCalibration(sr, g, false) {
		if warnOnly {
			sr.Status = StatusWarn
			d.warn(results.Warning{Code: r.Code, Slice: r.Slice, Message: r.Message})
			continue
		}
		sr.Status = results.VerdictHold
		d.hold(r)
	}
}

// heldOn says whether a reason with code holds already.
func (d *decider) heldOn(code string) bool {
	for _, r := range d.reasons {
		if r.Code == code {
			return true
		}
	}
	return false
}
