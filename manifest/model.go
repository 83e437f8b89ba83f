package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Model grader types, in OpenAI's own names.
const (
	TypeScoreModel = "score_model"
	TypeLabelModel = "label_model"
)

// Endpoints a model grader can be asked through.
const (
	EndpointChatCompletions = "chat_completions"
	EndpointResponses       = "responses"
)

// IsModelType reports whether a grader type is a model grader's.
func IsModelType(t string) bool { return t == TypeScoreModel || t == TypeLabelModel }

// ModelGrader is a score_model or label_model grader in OpenAI's shape,
// plus the two keys gradegate adds: the endpoint to ask and a per-run call
// budget.
type ModelGrader struct {
	// Model is the model to ask, pinned to a dated snapshot.
	Model string `json:"model"`
	// Input is the prompt: chat messages whose content may hold
	// {{item.field}} and {{sample.field}} templates.
	Input []Message `json:"input"`
	// Range bounds a score_model's score; [0, 1] unless written.
	Range [2]float64 `json:"range"`
	// Labels and PassingLabels are a label_model's.
	Labels         []string       `json:"labels,omitempty"`
	PassingLabels  []string       `json:"passing_labels,omitempty"`
	SamplingParams SamplingParams `json:"sampling_params"`
	// Endpoint is chat_completions (default) or responses.
	Endpoint string `json:"endpoint"`
	// MaxCalls bounds the model calls of one run; 0: no bound.
	MaxCalls int `json:"max_calls,omitempty"`
}

// Message is one chat message of a model grader's prompt.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	Line    int    `json:"-"`
}

// SamplingParams are a model grader's sampling parameters, in OpenAI's
// grader names (max_completions_tokens is spelt as the graders API spells
// it).
type SamplingParams struct {
	Seed                 *int64   `json:"seed,omitempty"`
	TopP                 *float64 `json:"top_p,omitempty"`
	Temperature          *float64 `json:"temperature,omitempty"`
	MaxCompletionsTokens *int     `json:"max_completions_tokens,omitempty"`
	ReasoningEffort      string   `json:"reasoning_effort,omitempty"`
}

// GraderDigest is the "sha256:<hex>" digest of what decides a model
// grader's verdicts: type, model, prompt, range, threshold, labels,
// sampling parameters and endpoint. Two manifests whose model graders have
// the same digest send the same requests and judge replies alike; the name,
// the timeout and the budget do not count. "" for a Python grader.
//
// A multi grader without a python sub-grader is written in the manifest
// too: its digest is of its formula and its sub-graders' keys.
func GraderDigest(g Grader) string {
	if g.Multi != nil && g.Multi.Python == "" && g.Judge == nil {
		b, _ := json.Marshal(struct {
			CalculateOutput string      `json:"calculate_output"`
			Graders         []SubGrader `json:"graders"`
			PassThreshold   float64     `json:"pass_threshold"`
			Range           *[2]float64 `json:"range"`
		}{g.Multi.CalculateOutput, g.Multi.Graders, g.PassThreshold, g.Range})
		sum := sha256.Sum256(b)
		return "sha256:" + hex.EncodeToString(sum[:])
	}
	if g.Judge == nil {
		return ""
	}
	b, _ := json.Marshal(CanonicalModelGrader(g))
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// CanonicalModelGrader is the part of a model grader that decides its
// verdicts, as one value whose JSON encoding is stable.
func CanonicalModelGrader(g Grader) any {
	j := g.Judge
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	input := make([]message, len(j.Input))
	for i, m := range j.Input {
		input[i] = message{m.Role, m.Content}
	}
	return struct {
		Type           string         `json:"type"`
		Model          string         `json:"model"`
		Input          []message      `json:"input"`
		Range          [2]float64     `json:"range"`
		PassThreshold  float64        `json:"pass_threshold"`
		Labels         []string       `json:"labels"`
		PassingLabels  []string       `json:"passing_labels"`
		SamplingParams SamplingParams `json:"sampling_params"`
		Endpoint       string         `json:"endpoint"`
	}{g.Type, j.Model, input, j.Range, g.PassThreshold, nonNilStrings(j.Labels), nonNilStrings(j.PassingLabels), j.SamplingParams, j.Endpoint}
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// failed reports whether a problem was reported at one of keys: the
// canaries' polarity is not judged against a threshold that did not read.
func (d *decoder) failed(keys ...string) bool {
	for _, e := range d.errs {
		if slices.Contains(keys, e.Key) {
			return true
		}
	}
	return false
}

// modelKeys are the grader keys only a model grader has.
func modelKeys() []string {
	return []string{"model", "input", "range", "labels", "passing_labels", "sampling_params", "endpoint", "max_calls"}
}

// pythonKeys are the grader keys only a Python grader has.
func pythonKeys() []string {
	return []string{"source", "sha256", "contract", "image_tag", "memory_mb", "metric", "isolation", "load_timeout_seconds", "on_exception", "max_model_calls"}
}

// forbid reports each present key as not belonging to what.
func (s *section) forbid(what string, keys ...string) {
	for _, k := range keys {
		if n := s.vals[k]; n != nil {
			s.d.fail(nodeLine(n, s.line), s.key(k), "does not apply to %s", what)
		}
	}
}

// modelGrader decodes the keys of a score_model or label_model grader.
func (d *decoder) modelGrader(s *section, g *Grader) {
	what := "a model grader (" + g.Type + ")"
	s.forbid(what, pythonKeys()...)
	s.forbid(what, multiKeys()...)
	s.require("model", "input")
	j := &ModelGrader{Range: [2]float64{0, 1}, Endpoint: EndpointChatCompletions}
	g.Judge = j
	g.Name = g.Type
	if v, ok := s.str("name"); ok {
		g.Name = v
	}
	j.Model, _ = s.str("model")
	if v, ok := s.integer("timeout_seconds", 1, MaxTimeoutSeconds); ok {
		g.TimeoutSeconds = v
	}
	if v, ok := s.enum("endpoint", EndpointChatCompletions, EndpointResponses); ok {
		j.Endpoint = v
	}
	if v, ok := s.integer("max_calls", 1, math.MaxInt); ok {
		j.MaxCalls = v
	}
	if n := s.scalar("input"); n != nil {
		j.Input = d.messages(n, s.key("input"))
	}
	if n := s.node("sampling_params"); n != nil {
		j.SamplingParams = d.samplingParams(n, s.key("sampling_params"))
	}
	if j.Endpoint == EndpointResponses && j.SamplingParams.Seed != nil {
		d.fail(d.lines[s.key("sampling_params.seed")], s.key("sampling_params.seed"), "the responses endpoint takes no seed; use endpoint: chat_completions, or drop the seed")
	}
	switch g.Type {
	case TypeScoreModel:
		s.forbid("a score_model grader (labels are a label_model's)", "labels", "passing_labels")
		s.require("pass_threshold")
		if n := s.scalar("range"); n != nil {
			if r, ok := d.scoreRange(n, s.key("range")); ok {
				j.Range = r
			}
		}
		if v, ok := s.number("pass_threshold"); ok {
			if v < j.Range[0] || v > j.Range[1] {
				d.fail(s.node("pass_threshold").Line, s.key("pass_threshold"), "must be within range [%g, %g], got %g", j.Range[0], j.Range[1], v)
			}
			g.PassThreshold = v
		}
	case TypeLabelModel:
		// A label_model case scores 1 when the model's label is passing and
		// 0 otherwise, so the threshold is fixed at 1.
		s.forbid("a label_model grader (a passing label scores 1, any other 0)", "range", "pass_threshold")
		s.require("labels", "passing_labels")
		g.PassThreshold = 1
		j.Range = [2]float64{0, 1}
		j.Labels, _ = s.strings("labels")
		j.PassingLabels, _ = s.strings("passing_labels")
		d.checkLabels(s, j)
	}
}

func (d *decoder) checkLabels(s *section, j *ModelGrader) {
	seen := map[string]bool{}
	for _, l := range j.Labels {
		if seen[l] {
			d.fail(s.node("labels").Line, s.key("labels"), "label %q is listed twice", l)
		}
		seen[l] = true
	}
	if j.Labels != nil && len(j.Labels) < 2 {
		d.fail(s.node("labels").Line, s.key("labels"), "needs at least two labels: a judge with one label can only ever give it")
	}
	for _, l := range j.PassingLabels {
		if !seen[l] && j.Labels != nil {
			d.fail(s.node("passing_labels").Line, s.key("passing_labels"), "%q is not one of labels (%s)", l, strings.Join(j.Labels, ", "))
		}
	}
	if j.PassingLabels != nil && len(j.PassingLabels) == 0 {
		d.fail(s.node("passing_labels").Line, s.key("passing_labels"), "must name at least one label")
	}
	if j.Labels != nil && len(j.PassingLabels) >= len(seen) && len(seen) > 0 {
		all := true
		for l := range seen {
			all = all && slices.Contains(j.PassingLabels, l)
		}
		if all {
			d.fail(s.node("passing_labels").Line, s.key("passing_labels"), "names every label: such a judge can never fail a case")
		}
	}
}

// messages decodes a model grader's input: a list of {role, content}.
func (d *decoder) messages(n *yaml.Node, key string) []Message {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		d.fail(n.Line, key, "must be a non-empty list of messages {role, content}, got %s", describe(n))
		return nil
	}
	var out []Message
	for i, e := range n.Content {
		k := fmt.Sprintf("%s.%d", key, i)
		s, ok := d.mapping(e, k, nodeLine(e, n.Line), "role", "content")
		if !ok {
			continue
		}
		s.require("role", "content")
		m := Message{Line: nodeLine(e, n.Line)}
		m.Role, _ = s.enum("role", "system", "developer", "user", "assistant")
		if c := s.node("content"); c != nil {
			if c.Kind != yaml.ScalarNode || c.ShortTag() != "!!str" || strings.TrimSpace(c.Value) == "" {
				d.fail(c.Line, s.key("content"), "must be non-empty text, got %s", describe(c))
			} else {
				m.Content = c.Value
				for _, bad := range TemplateErrors(c.Value) {
					d.fail(c.Line, s.key("content"), "%s", bad)
				}
			}
		}
		out = append(out, m)
	}
	return out
}

func (d *decoder) samplingParams(n *yaml.Node, key string) SamplingParams {
	var p SamplingParams
	s, ok := d.mapping(n, key, n.Line, "seed", "top_p", "temperature", "max_completions_tokens", "reasoning_effort")
	if !ok {
		return p
	}
	if n := s.scalar("seed"); n != nil {
		var v int64
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil {
			d.fail(n.Line, s.key("seed"), "must be an integer, got %s", describe(n))
		} else {
			p.Seed = &v
		}
	}
	if v, ok := s.fraction("top_p"); ok {
		p.TopP = &v
	}
	if v, ok := s.number("temperature"); ok {
		if v < 0 || v > 2 {
			d.fail(s.node("temperature").Line, s.key("temperature"), "must be between 0 and 2, got %g", v)
		} else {
			p.Temperature = &v
		}
	}
	if v, ok := s.integer("max_completions_tokens", 1, math.MaxInt32); ok {
		p.MaxCompletionsTokens = &v
	}
	if v, ok := s.enum("reasoning_effort", "minimal", "low", "medium", "high"); ok {
		p.ReasoningEffort = v
	}
	return p
}

func (d *decoder) scoreRange(n *yaml.Node, key string) ([2]float64, bool) {
	if n.Kind != yaml.SequenceNode || len(n.Content) != 2 {
		d.fail(n.Line, key, "must be a list of two numbers [min, max], got %s", describe(n))
		return [2]float64{}, false
	}
	var r [2]float64
	for i, e := range n.Content {
		f, msg := yamlNumber(resolve(e))
		if msg != "" {
			d.fail(nodeLine(e, n.Line), key, "%s", msg)
			return r, false
		}
		r[i] = f
	}
	if r[0] >= r[1] {
		d.fail(n.Line, key, "min must be below max, got [%g, %g]", r[0], r[1])
		return r, false
	}
	return r, true
}

// templateRE finds {{ ... }} templates in a message's content.
var templateRE = regexp.MustCompile(`\{\{(.*?)\}\}`)

// templatePathRE is a template's variable: a namespace (item or sample)
// followed by field names and list indexes, JSON-path style.
var templatePathRE = regexp.MustCompile(`^(item|sample)((\.[A-Za-z_][A-Za-z0-9_\-]*)|(\[[0-9]+\]))*$`)

// TemplateErrors lists what is wrong with the templates in text: each
// {{ }} must name a variable in the item or sample namespace.
func TemplateErrors(text string) []string {
	var out []string
	for _, m := range templateRE.FindAllStringSubmatch(text, -1) {
		v := strings.TrimSpace(m[1])
		if !templatePathRE.MatchString(v) {
			out = append(out, fmt.Sprintf("template %s must name a variable of the item or sample namespace, such as {{item.reference_answer}} or {{sample.output_text}}", clip(m[0])))
		}
	}
	if strings.Count(text, "{{") != len(templateRE.FindAllString(text, -1)) {
		out = append(out, "has a {{ without its closing }}")
	}
	return out
}
