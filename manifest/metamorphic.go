package manifest

import (
	"math"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The names of the metamorphic transforms (gate.metamorphic.transforms),
// in the order variants are derived. canary/metamorphic defines what each
// one does and its relation.
const (
	TransformKeysReordered     = "json_keys_reordered"
	TransformCompact           = "json_compact"
	TransformIndented          = "json_indented"
	TransformEscapedStrings    = "json_escaped_strings"
	TransformTrailingNewline   = "trailing_newline"
	TransformTruncated         = "json_truncated"
	TransformUnbalanced        = "unbalanced_braces"
	TransformEmptyOutput       = "empty_output"
	TransformRefusal           = "refusal"
	TransformNumberAsString    = "number_as_string"
	TransformNumberAsBool      = "number_as_bool"
	TransformKeyDropped        = "key_dropped"
	TransformScalarAsObject    = "scalar_as_object"
	TransformItemFieldRemoved  = "item_field_removed"
	TransformFillerPadding     = "filler_padding"
	TransformReferenceQuoted   = "reference_quoted"
	TransformGraderInstruction = "grader_instruction"
)

// MetamorphicTransforms lists every transform name.
func MetamorphicTransforms() []string {
	return []string{
		TransformKeysReordered, TransformCompact, TransformIndented, TransformEscapedStrings, TransformTrailingNewline,
		TransformTruncated, TransformUnbalanced, TransformEmptyOutput, TransformRefusal,
		TransformNumberAsString, TransformNumberAsBool, TransformKeyDropped, TransformScalarAsObject,
		TransformItemFieldRemoved,
		TransformFillerPadding, TransformReferenceQuoted, TransformGraderInstruction,
	}
}

// DefaultMetamorphicSample is gate.metamorphic.sample's default: how many
// labeled cases variants are derived from, besides the canaries.
const DefaultMetamorphicSample = 50

// Invariance settings.
const (
	InvarianceWarn = "warn"
	InvarianceHold = "hold"
)

// Metamorphic is gate.metamorphic: the canaries the gate derives from the
// written canaries and from a sample of labeled cases.
type Metamorphic struct {
	// Enabled is true unless the manifest says enabled: false.
	Enabled bool `json:"enabled"`
	// EnabledLine is where enabled: false was written; 0 when not written.
	EnabledLine int `json:"-"`
	// Sample is how many labeled cases variants are derived from; 0 derives
	// from the canaries only.
	Sample int `json:"sample"`
	// Off are the transforms switched off, each with its reason, in
	// manifest order.
	Off []TransformOff `json:"transforms_off,omitempty"`
	// Invariance is what an invariant variant scoring differently does:
	// warn (metamorphic_variance) or hold (metamorphic_violation).
	Invariance string `json:"invariance"`
}

// TransformOff is one transform switched off, with the reason the reports
// show.
type TransformOff struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
	Line   int    `json:"line"`
}

// On reports whether a transform runs.
func (m Metamorphic) On(name string) bool {
	if !m.Enabled {
		return false
	}
	for _, o := range m.Off {
		if o.Name == name {
			return false
		}
	}
	return true
}

func defaultMetamorphic() Metamorphic {
	return Metamorphic{Enabled: true, Sample: DefaultMetamorphicSample, Invariance: InvarianceWarn}
}

func (d *decoder) metamorphic(n *yaml.Node) Metamorphic {
	mm := defaultMetamorphic()
	s, ok := d.mapping(n, "gate.metamorphic", d.lines["gate.metamorphic"], "enabled", "sample", "transforms", "invariance")
	if !ok {
		return mm
	}
	if v, ok := s.boolean("enabled"); ok {
		mm.Enabled = v
		if !v {
			mm.EnabledLine = d.lines["gate.metamorphic.enabled"]
		}
	}
	if v, ok := s.integer("sample", 0, math.MaxInt); ok {
		mm.Sample = v
	}
	if v, ok := s.enum("invariance", InvarianceWarn, InvarianceHold); ok {
		mm.Invariance = v
	}
	t := s.scalar("transforms")
	if t == nil {
		return mm
	}
	key := "gate.metamorphic.transforms"
	if t.Kind != yaml.SequenceNode {
		d.fail(t.Line, key, "must be a list of {name, enabled: false, reason}, got %s", describe(t))
		return mm
	}
	names := MetamorphicTransforms()
	seen := map[string]int{}
	for _, e := range t.Content {
		e = resolve(e)
		es, ok := d.mapping(e, key, e.Line, "name", "enabled", "reason")
		if !ok {
			continue
		}
		name, ok := es.str("name")
		if !ok {
			d.fail(e.Line, key+".name", "required key is missing")
			continue
		}
		if !contains(names, name) {
			d.fail(e.Line, key, "unknown transform %q%s; expected one of: %s", name, suggest(name, names), strings.Join(names, ", "))
			continue
		}
		if first, dup := seen[name]; dup {
			d.fail(e.Line, key, "transform %s is listed twice (first at line %d)", name, first)
			continue
		}
		seen[name] = e.Line
		enabled, _ := es.boolean("enabled")
		if es.node("enabled") == nil {
			enabled = true
		}
		reason, _ := es.str("reason")
		if enabled {
			continue
		}
		if strings.TrimSpace(reason) == "" {
			d.fail(e.Line, key, "transform %s is switched off without a reason: write reason: <why>, which the reports show", name)
			continue
		}
		mm.Off = append(mm.Off, TransformOff{Name: name, Reason: reason, Line: e.Line})
	}
	return mm
}
