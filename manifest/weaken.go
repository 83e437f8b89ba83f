package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Weakening is one way a manifest protects less than its base (the base
// branch's manifest): a slice no longer mandatory, a threshold lowered, a
// canary removed, a check switched off.
type Weakening struct {
	// Key is the manifest key that changed ("gate.slices.refunds.mandatory").
	Key string `json:"key"`
	// Base and Head are its values before and after, as text; "" for none.
	Base string `json:"base"`
	Head string `json:"head"`
	// Slice is the slice the rule is of, when it is a slice's.
	Slice string `json:"slice,omitempty"`
	// Message says it in one sentence.
	Message string `json:"message"`
}

// Weakenings lists every way head protects less than base, in manifest
// order: overall rules, slices, calibration, checks, canaries. A change
// that protects more, or the same, is not listed.
func Weakenings(base, head *Manifest) []Weakening {
	var out []Weakening
	add := func(key, b, h, slice, format string, args ...any) {
		out = append(out, Weakening{Key: key, Base: b, Head: h, Slice: slice, Message: fmt.Sprintf(format, args...)})
	}
	num := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	lowered := func(key string, b, h float64) {
		if h < b {
			add(key, num(b), num(h), "", "%s lowered from %s to %s", key, num(b), num(h))
		}
	}
	raised := func(key string, b, h int) {
		if h > b {
			add(key, strconv.Itoa(b), strconv.Itoa(h), "", "%s raised from %d to %d", key, b, h)
		}
	}
	bg, hg := base.Gate, head.Gate

	if head.Grader.PassThreshold < base.Grader.PassThreshold {
		lowered("grader.pass_threshold", base.Grader.PassThreshold, head.Grader.PassThreshold)
	}
	if bi, hi := base.Dataset.IntendedCases, head.Dataset.IntendedCases; bi > 0 && (hi == 0 || hi < bi) {
		h := strconv.Itoa(hi)
		if hi == 0 {
			h = "the number of rows"
		}
		add("dataset.intended_cases", strconv.Itoa(bi), h, "", "dataset.intended_cases lowered from %d to %s", bi, h)
	}
	lowered("gate.min_pass_rate", bg.MinPassRate, hg.MinPassRate)
	raised("gate.max_errors", bg.MaxErrors, hg.MaxErrors)
	raised("gate.max_omitted", bg.MaxOmitted, hg.MaxOmitted)
	if bg.RequireControls && !hg.RequireControls {
		add("gate.require_controls", "true", "false", "", "gate.require_controls switched off")
	}
	if bg.Baseline.MaxDrop < hg.Baseline.MaxDrop {
		add("gate.baseline.max_drop", num(bg.Baseline.MaxDrop), num(hg.Baseline.MaxDrop), "", "gate.baseline.max_drop raised from %s to %s", num(bg.Baseline.MaxDrop), num(hg.Baseline.MaxDrop))
	}

	for _, bs := range bg.Slices {
		key := "gate.slices." + bs.Name
		hs, ok := hg.Slice(bs.Name)
		if !ok {
			if bs.Mandatory || !bs.WarnOnly {
				add(key, "a rule", "", bs.Name, "slice %q lost its rule (it was %s)", bs.Name, ruleText(bs))
			}
			continue
		}
		if bs.Mandatory && !hs.Mandatory {
			add(key+".mandatory", "true", "false", bs.Name, "slice %q is no longer mandatory", bs.Name)
		}
		if !bs.WarnOnly && hs.WarnOnly {
			add(key+".warn_only", "false", "true", bs.Name, "slice %q became warn_only: it no longer holds", bs.Name)
		}
		if hs.MinPassRate < bs.MinPassRate {
			add(key+".min_pass_rate", num(bs.MinPassRate), num(hs.MinPassRate), bs.Name, "slice %q: min_pass_rate lowered from %s to %s", bs.Name, num(bs.MinPassRate), num(hs.MinPassRate))
		}
		if hs.MinCases < bs.MinCases {
			add(key+".min_cases", strconv.Itoa(bs.MinCases), strconv.Itoa(hs.MinCases), bs.Name, "slice %q: min_cases lowered from %d to %d", bs.Name, bs.MinCases, hs.MinCases)
		}
	}

	bc, hc := bg.Calibration, hg.Calibration
	raised("gate.calibration.max_false_pass", bc.MaxFalsePass, hc.MaxFalsePass)
	optRaised := func(key string, b, h *int, unset int) {
		bv, hv := unset, unset
		if b != nil {
			bv = *b
		}
		if h != nil {
			hv = *h
		}
		if b != nil && h == nil && unset < 0 {
			add(key, strconv.Itoa(bv), "", "", "%s deleted (it was %d)", key, bv)
			return
		}
		raised(key, bv, hv)
	}
	optRaised("gate.calibration.mandatory_max_false_pass", bc.MandatoryMaxFalsePass, hc.MandatoryMaxFalsePass, 0)
	optRaised("gate.calibration.max_false_fail", bc.MaxFalseFail, hc.MaxFalseFail, -1)
	optRaised("gate.calibration.mandatory_max_false_fail", bc.MandatoryMaxFalseFail, hc.MandatoryMaxFalseFail, -1)
	if bc.MinAgreement != nil && (hc.MinAgreement == nil || *hc.MinAgreement < *bc.MinAgreement) {
		h := "deleted"
		if hc.MinAgreement != nil {
			h = num(*hc.MinAgreement)
		}
		add("gate.calibration.min_agreement", num(*bc.MinAgreement), h, "", "gate.calibration.min_agreement %s (it was %s)", h, num(*bc.MinAgreement))
	}

	if b := bg.MinMutationScore; b != nil {
		switch h := hg.MinMutationScore; {
		case h == nil:
			add("gate.min_mutation_score", num(*b), "", "", "gate.min_mutation_score deleted (it was %s): the grader is no longer mutation-tested", num(*b))
		case *h < *b:
			lowered("gate.min_mutation_score", *b, *h)
		}
	}
	if bg.Determinism.Sample > 0 && hg.Determinism.Sample < bg.Determinism.Sample {
		add("gate.determinism.sample", strconv.Itoa(bg.Determinism.Sample), strconv.Itoa(hg.Determinism.Sample), "",
			"gate.determinism.sample lowered from %d to %d", bg.Determinism.Sample, hg.Determinism.Sample)
	}
	bm, hm := bg.Metamorphic, hg.Metamorphic
	if bm.Enabled && !hm.Enabled {
		add("gate.metamorphic.enabled", "true", "false", "", "derived canaries switched off (gate.metamorphic.enabled: false)")
	}
	if bm.Enabled && hm.Enabled {
		if hm.Sample < bm.Sample {
			add("gate.metamorphic.sample", strconv.Itoa(bm.Sample), strconv.Itoa(hm.Sample), "", "gate.metamorphic.sample lowered from %d to %d", bm.Sample, hm.Sample)
		}
		for _, off := range hm.Off {
			if bm.On(off.Name) {
				add("gate.metamorphic.transforms", off.Name+" on", off.Name+" off", "", "derived-canary transform %s switched off", off.Name)
			}
		}
		if bm.Invariance == InvarianceHold && hm.Invariance != InvarianceHold {
			add("gate.metamorphic.invariance", InvarianceHold, hm.Invariance, "", "gate.metamorphic.invariance is no longer hold")
		}
	}
	if !bg.BuiltinCanaries.Off && hg.BuiltinCanaries.Off {
		add("gate.builtin_canaries", "on", "off", "", "the built-in refusal and empty-answer canaries switched off")
	}

	for _, c := range base.Canaries {
		i := slices.IndexFunc(head.Canaries, func(h Canary) bool { return h.Name == c.Name })
		if i < 0 {
			add("canaries", c.Name, "", "", "canary %q removed", c.Name)
			continue
		}
		if what := canaryChange(c, head.Canaries[i]); what != "" {
			add("canaries."+c.Name, "", what, "", "canary %q changed under the same name (%s): what it tested is no longer what the base tested", c.Name, what)
		}
	}
	return out
}

// canaryChange says which parts of a canary differ between base and head
// ("sample, expect"), "" when none does. Its sample and item are compared
// as JSON values, so a re-indented or re-ordered object is no change. A
// canary can be weakened in ways no rule can rank (a negative's wrong
// answer made more obviously wrong, a tolerance widened, an expectation
// moved), so any change to what it sends or expects is named.
func canaryChange(b, h Canary) string {
	var parts []string
	if !sameJSON(b.Sample, h.Sample) {
		parts = append(parts, "sample")
	}
	if !sameJSON(b.Item, h.Item) {
		parts = append(parts, "item")
	}
	if (b.Expect == nil) != (h.Expect == nil) || (b.Expect != nil && *b.Expect != *h.Expect) || b.ExpectError != h.ExpectError {
		parts = append(parts, "expect")
	}
	if h.Tolerance > b.Tolerance {
		parts = append(parts, "tolerance")
	}
	return strings.Join(parts, ", ")
}

// sameJSON reports whether a and b hold the same JSON value; bytes that
// are not JSON compare as bytes.
func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func ruleText(s SliceRule) string {
	switch {
	case s.Mandatory:
		return "mandatory"
	case s.WarnOnly:
		return "warn_only"
	}
	return "min_pass_rate " + strconv.FormatFloat(s.MinPassRate, 'g', -1, 64)
}
