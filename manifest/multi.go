package manifest

import (
	"math"
	"path"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// TypeMulti is OpenAI's multi grader: named sub-graders combined by a
// calculate_output formula.
const TypeMulti = "multi"

// Sub-grader types a multi grader can hold besides the model ones.
const (
	SubPython         = "python"
	SubStringCheck    = "string_check"
	SubTextSimilarity = "text_similarity"
)

// MultiGrader is the part of a multi grader beyond its first Python
// sub-grader, whose source, digest and limits are also the Grader's own
// fields, so a multi grader with one Python part is pinned, digested,
// linted, mutated and shadowed as a Python grader is. Every further Python
// sub-grader carries its own source and digest (see PythonParts).
type MultiGrader struct {
	// CalculateOutput is the formula as written; Formula is its parse.
	CalculateOutput string   `json:"calculate_output"`
	Formula         *Formula `json:"-"`
	// Python names the first Python sub-grader.
	Python string `json:"python"`
	// Graders are every sub-grader, the Python one included, in manifest order.
	Graders []SubGrader `json:"graders"`
	// MaxCalls bounds the model calls of one run over all the model
	// sub-graders; 0: no bound.
	MaxCalls int `json:"max_calls,omitempty"`
}

// Models are the score_model and label_model sub-graders, which the gate
// asks itself.
func (mg *MultiGrader) Models() []SubGrader {
	if mg == nil {
		return nil
	}
	var out []SubGrader
	for _, sg := range mg.Graders {
		if sg.Model != nil {
			out = append(out, sg)
		}
	}
	return out
}

// PythonParts are the python sub-graders, in manifest order: the first is
// the Grader's own source.
func (mg *MultiGrader) PythonParts() []SubGrader {
	if mg == nil {
		return nil
	}
	var out []SubGrader
	for _, sg := range mg.Graders {
		if sg.Type == SubPython {
			out = append(out, sg)
		}
	}
	return out
}

// PartKey is the manifest key of a python sub-grader's section
// ("grader.graders.NAME"): its source and sha256 keys are under it, and
// pin and the digest checks name it.
func PartKey(name string) string { return "grader.graders." + name }

// Part is the grader a python sub-grader runs as: g's settings (contract,
// metric, load timeout, scale) with the sub-grader's source, digest, image
// tag and limits.
func (g Grader) Part(sg SubGrader) Grader {
	p := g
	p.Source, p.SHA256, p.ImageTag = sg.Source, sg.SHA256, sg.ImageTag
	p.TimeoutSeconds, p.MemoryMB, p.Isolation = sg.TimeoutSeconds, sg.MemoryMB, sg.Isolation
	p.Multi = nil
	return p
}

// SubGrader is one named sub-grader of a multi grader.
type SubGrader struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// Source (relative to the manifest's folder), SHA256, ImageTag,
	// TimeoutSeconds, MemoryMB and Isolation are a python sub-grader's,
	// with the defaults of a Python grader applied.
	Source         string `json:"source,omitempty"`
	SHA256         string `json:"sha256,omitempty"`
	ImageTag       string `json:"image_tag,omitempty"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty"`
	MemoryMB       int    `json:"memory_mb,omitempty"`
	Isolation      string `json:"isolation,omitempty"`
	// Input and Reference are templates over the item and the sample
	// ({{sample.output_text}}, {{item.field}}): string_check and
	// text_similarity.
	Input     string `json:"input,omitempty"`
	Reference string `json:"reference,omitempty"`
	// Operation is a string_check's eq, ne, like or ilike.
	Operation string `json:"operation,omitempty"`
	// Metric is a text_similarity's evaluation_metric.
	Metric string `json:"evaluation_metric,omitempty"`
	// Model is a score_model or label_model sub-grader as a grader of its
	// own (its model, prompt, range or labels, sampling parameters); its
	// MaxCalls is the multi grader's.
	Model *Grader `json:"model_grader,omitempty"`
	// PassThreshold is the sub-grader's own, when written (OpenAI's schema
	// makes it optional); the multi grader's pass_threshold gates.
	PassThreshold *float64 `json:"pass_threshold,omitempty"`
	Line          int      `json:"-"`
}

// SimilarityMetrics are the text_similarity metrics gradegate computes.
// meteor runs nltk's meteor_score in the sandbox and needs nltk and its
// WordNet data there; cosine asks embedding_model for embeddings.
func SimilarityMetrics() []string {
	return []string{"fuzzy_match", "bleu", "gleu", "meteor", "rouge_1", "rouge_2", "rouge_3", "rouge_4", "rouge_5", "rouge_l", MetricCosine}
}

// MetricCosine is the text_similarity metric the gate computes from the
// embeddings of the input and the reference (embedding_model), asked
// through the same broker as a Python grader's ctx.embeddings_create.
const MetricCosine = "cosine"

// subPassThreshold reads a sub-grader's optional pass_threshold, as
// OpenAI's schema allows it: recorded, while the multi grader's own
// pass_threshold decides a case (calculate_output is what gates).
func subPassThreshold(s *section) *float64 {
	if v, ok := s.number("pass_threshold"); ok {
		return &v
	}
	return nil
}

// checkCosine: a cosine text_similarity needs embedding_model.
func (d *decoder) checkCosine(m *Manifest) {
	if m.Grader.Multi == nil || m.EmbeddingModel != "" {
		return
	}
	for _, sg := range m.Grader.Multi.Graders {
		if sg.Type == SubTextSimilarity && sg.Metric == MetricCosine {
			key := PartKey(sg.Name) + ".evaluation_metric"
			d.fail(d.lines[key], key, "cosine compares embeddings of the input and the reference: name the model at the top of the manifest (embedding_model: text-embedding-3-small)")
		}
	}
}

var subNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// multiGrader decodes a multi grader: calculate_output, graders (one or
// more python sub-graders, and string_check, text_similarity, score_model
// and label_model ones), max_calls (the model sub-graders' budget) and the
// keys that say how its combined score counts.
func (d *decoder) multiGrader(s *section, g *Grader) {
	s.forbid("a multi grader (these belong to its python sub-graders in graders)", "source", "sha256", "contract", "image_tag", "metric", "isolation", "timeout_seconds", "memory_mb")
	s.forbid("a multi grader", "model", "input", "labels", "passing_labels", "sampling_params", "endpoint")
	s.require("graders", "calculate_output")
	mg := &MultiGrader{}
	g.Multi = mg
	g.Name = TypeMulti
	if v, ok := s.str("name"); ok {
		g.Name = v
	}
	var names []string
	if n := s.node("graders"); n != nil {
		mg.Graders = d.subGraders(n, s.key("graders"), g)
		for _, sg := range mg.Graders {
			names = append(names, sg.Name)
			if sg.Type == SubPython && mg.Python == "" {
				mg.Python = sg.Name
			}
		}
		if mg.Python == "" {
			// Written in the manifest alone: string_check, text_similarity
			// and model sub-graders, graded by the gate itself.
			for _, sg := range mg.Graders {
				if sg.Type == SubTextSimilarity && sg.Metric == "meteor" {
					key := PartKey(sg.Name) + ".evaluation_metric"
					d.fail(d.lines[key], key, "meteor runs nltk in the sandbox beside a python sub-grader; this multi grader has none (choose another metric, or add a python sub-grader)")
				}
			}
		}
	}
	if v, ok := s.integer("max_calls", 1, math.MaxInt); ok {
		if len(mg.Models()) == 0 {
			d.fail(s.node("max_calls").Line, s.key("max_calls"), "bounds the model calls of a multi grader's score_model and label_model sub-graders, and this one has none")
		}
		mg.MaxCalls = v
		for _, sg := range mg.Models() {
			sg.Model.Judge.MaxCalls = v
		}
	}
	d.pythonScale(s, g)
	d.maxModelCalls(s, g)
	// Starting a grader process and loading its source: every python part.
	if v, ok := s.integer("load_timeout_seconds", 1, MaxTimeoutSeconds); ok {
		g.LoadTimeoutSeconds = v
	}
	if v, ok := s.str("calculate_output"); ok {
		mg.CalculateOutput = v
		if len(names) > 0 {
			f, err := ParseFormula(v, names)
			if err != nil {
				d.fail(s.node("calculate_output").Line, s.key("calculate_output"), "%v", err)
			}
			mg.Formula = f
		}
	}
}

func (d *decoder) subGraders(n *yaml.Node, key string, g *Grader) []SubGrader {
	if n.Kind != yaml.MappingNode || len(n.Content) == 0 {
		d.fail(n.Line, key, "must be a mapping of sub-grader name to grader, got %s", describe(n))
		return nil
	}
	var out []SubGrader
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		name := k.Value
		sk := key + "." + name
		if !subNameRE.MatchString(name) {
			d.fail(k.Line, sk, "a sub-grader name must be a plain identifier (letters, digits, _), so calculate_output can name it")
			continue
		}
		d.lines[sk] = k.Line
		s, ok := d.mapping(v, sk, k.Line, "type", "name", "source", "sha256", "image_tag", "timeout_seconds", "memory_mb", "isolation",
			"input", "reference", "operation", "evaluation_metric", "model", "labels", "passing_labels", "range", "sampling_params", "pass_threshold", "endpoint")
		if !ok {
			continue
		}
		s.require("type")
		sg := SubGrader{Name: name, Line: k.Line}
		sg.Type, _ = s.enum("type", SubPython, SubStringCheck, SubTextSimilarity, TypeScoreModel, TypeLabelModel)
		switch sg.Type {
		case SubPython:
			s.forbid("a python sub-grader", "input", "reference", "operation", "evaluation_metric", "model", "labels", "passing_labels", "range", "sampling_params", "endpoint")
			sg.PassThreshold = subPassThreshold(s)
			s.require("source", "sha256")
			sg.Source, _ = s.relPath("source")
			sg.SHA256, _ = s.digest("sha256")
			sg.ImageTag, _ = s.str("image_tag")
			sg.TimeoutSeconds, sg.MemoryMB, sg.Isolation = DefaultTimeoutSeconds, DefaultMemoryMB, DefaultIsolation
			if v, ok := s.integer("timeout_seconds", 1, MaxTimeoutSeconds); ok {
				sg.TimeoutSeconds = v
			}
			if v, ok := s.integer("memory_mb", MinMemoryMB, MaxMemoryMB); ok {
				sg.MemoryMB = v
			}
			if v, ok := s.enum("isolation", "worker", "case"); ok {
				sg.Isolation = v
			}
			if g.Source != "" {
				break // a further python part: its own fields only
			}
			// The first python part is the grader's own source and limits;
			// digest checks and pin point at its lines.
			g.Source, g.SHA256, g.ImageTag = sg.Source, sg.SHA256, sg.ImageTag
			g.TimeoutSeconds, g.MemoryMB, g.Isolation = sg.TimeoutSeconds, sg.MemoryMB, sg.Isolation
			for _, f := range []string{"source", "sha256"} {
				d.lines["grader."+f] = d.lines[sk+"."+f]
			}
		case SubStringCheck, SubTextSimilarity:
			s.forbid("a "+sg.Type+" sub-grader", "source", "sha256", "image_tag", "timeout_seconds", "memory_mb", "isolation", "model", "labels", "passing_labels", "range", "sampling_params", "endpoint")
			sg.PassThreshold = subPassThreshold(s)
			s.require("input", "reference")
			for _, f := range []struct {
				key string
				dst *string
			}{{"input", &sg.Input}, {"reference", &sg.Reference}} {
				if v, ok := s.str(f.key); ok {
					*f.dst = v
					for _, bad := range TemplateErrors(v) {
						d.fail(s.node(f.key).Line, s.key(f.key), "%s", bad)
					}
				}
			}
			if sg.Type == SubStringCheck {
				s.forbid("a string_check sub-grader", "evaluation_metric")
				s.require("operation")
				sg.Operation, _ = s.enum("operation", "eq", "ne", "like", "ilike")
			} else {
				s.forbid("a text_similarity sub-grader", "operation")
				s.require("evaluation_metric")
				if v, ok := s.str("evaluation_metric"); ok {
					sg.Metric = v
					if !contains(SimilarityMetrics(), v) {
						d.fail(s.node("evaluation_metric").Line, s.key("evaluation_metric"),
							"%q is not built: gradegate computes text_similarity with %s",
							v, strings.Join(SimilarityMetrics(), ", "))
					}
				}
			}
		case TypeScoreModel, TypeLabelModel:
			// The same keys, defaults and checks as a model grader of its
			// own; the gate asks it as it asks one.
			s.forbid("a "+sg.Type+" sub-grader", "reference", "operation", "evaluation_metric")
			mg := &Grader{Type: sg.Type, TimeoutSeconds: DefaultTimeoutSeconds}
			d.modelGrader(s, mg)
			mg.Name = name
			sg.Model = mg
		}
		out = append(out, sg)
	}
	if g.Source != "" && g.Name == "" {
		base := path.Base(g.Source)
		g.Name = strings.TrimSuffix(base, path.Ext(base))
	}
	return out
}

// multiKeys are the grader keys only a multi grader has.
func multiKeys() []string { return []string{"calculate_output", "graders"} }

// pythonGraderNode is the mapping that holds the grader's source and
// sha256: the grader section itself, or for a multi grader its python
// sub-grader. Anything else is returned as it is, for the caller to refuse.
func pythonGraderNode(grader *yaml.Node) *yaml.Node {
	if grader == nil || grader.Kind != yaml.MappingNode {
		return grader
	}
	t := mappingValue(grader, "type")
	if t == nil || t.Value != TypeMulti {
		return grader
	}
	subs := mappingValue(grader, "graders")
	if subs == nil || subs.Kind != yaml.MappingNode {
		return grader
	}
	for i := 1; i < len(subs.Content); i += 2 {
		sub := resolve(subs.Content[i])
		if sub.Kind == yaml.MappingNode {
			if st := mappingValue(sub, "type"); st != nil && st.Value == SubPython {
				return sub
			}
		}
	}
	return grader
}

// isPartKey reports whether a pin section names a python sub-grader.
func isPartKey(section string) bool {
	name, ok := strings.CutPrefix(section, PartKey(""))
	return ok && subNameRE.MatchString(name)
}

// partNode is the mapping of the sub-grader a PartKey names, or nil.
func partNode(root *yaml.Node, key string) *yaml.Node {
	grader := mappingValue(root, "grader")
	if grader == nil || grader.Kind != yaml.MappingNode {
		return nil
	}
	subs := mappingValue(grader, "graders")
	if subs == nil || subs.Kind != yaml.MappingNode {
		return nil
	}
	sub := mappingValue(subs, strings.TrimPrefix(key, PartKey("")))
	if sub == nil {
		return nil
	}
	return resolve(sub)
}

// furtherPythonParts names the python sub-graders of a multi grader's
// section after the first, which pythonGraderNode stands for.
func furtherPythonParts(grader *yaml.Node) []string {
	if grader == nil || grader.Kind != yaml.MappingNode {
		return nil
	}
	if t := mappingValue(grader, "type"); t == nil || t.Value != TypeMulti {
		return nil
	}
	subs := mappingValue(grader, "graders")
	if subs == nil || subs.Kind != yaml.MappingNode {
		return nil
	}
	var out []string
	first := true
	for i := 0; i+1 < len(subs.Content); i += 2 {
		sub := resolve(subs.Content[i+1])
		if sub.Kind != yaml.MappingNode {
			continue
		}
		if st := mappingValue(sub, "type"); st == nil || st.Value != SubPython {
			continue
		}
		if first {
			first = false
			continue
		}
		out = append(out, subs.Content[i].Value)
	}
	return out
}
