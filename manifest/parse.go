package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Defaults of the manifest keys a manifest may leave out.
const (
	DefaultNearDuplicateThreshold = 0.85
	DefaultContract               = "sample"
	DefaultTimeoutSeconds         = 120
	DefaultLoadTimeoutSeconds     = 30
	DefaultMemoryMB               = 2048
	DefaultMetric                 = "score"
	DefaultPassThreshold          = 1.0
	DefaultIsolation              = "worker"
	DefaultMinPassRate            = 1.0
	DefaultAggregation            = "row"
	DefaultDeterminismSample      = 200
)

// Bounds on grader resources. The memory bounds are there to catch a value
// written in the wrong unit (bytes, GiB), not to judge what a grader needs.
const (
	MaxTimeoutSeconds = 600
	MinMemoryMB       = 64
	MaxMemoryMB       = 65536
)

// Parse decodes a manifest strictly and applies every default. file names the
// manifest in error messages. Every problem found is reported at once, as
// *Error values joined with errors.Join; each matches ErrInput.
//
// Canaries kept in a separate file (canaries: {path: ...}) are not read here:
// the result carries CanariesFile and Load fills Canaries.
func Parse(data []byte, file string) (*Manifest, error) {
	root, err := parseYAML(data, file)
	if err != nil {
		return nil, err
	}
	d := &decoder{file: file, lines: map[string]int{}}
	m := d.manifest(root)
	if err := d.err(); err != nil {
		return nil, err
	}
	m.Lines = d.lines
	return m, nil
}

// parseYAML returns the top node of the single YAML document in data.
func parseYAML(data []byte, file string) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: file, Msg: "manifest is empty"}
		}
		return nil, syntaxError(file, err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, &Error{File: file, Line: extra.Line, Msg: "holds more than one YAML document; a manifest is one"}
	case !errors.Is(err, io.EOF):
		return nil, syntaxError(file, err)
	}
	if len(doc.Content) == 0 {
		return nil, &Error{File: file, Msg: "manifest is empty"}
	}
	if err := checkAliases(doc.Content[0], file); err != nil {
		return nil, err
	}
	return doc.Content[0], nil
}

// syntaxError turns the YAML library's "yaml: line N: msg" into an *Error
// that carries the line as a field.
func syntaxError(file string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, after, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil {
				line, msg = n, after
			}
		}
	}
	return &Error{File: file, Line: line, Msg: "invalid YAML: " + msg, Err: err}
}

func (d *decoder) manifest(root *yaml.Node) *Manifest {
	if root.Kind != yaml.MappingNode {
		d.fail(root.Line, "", "the manifest must be a mapping of keys (version, name, dataset, ...), got %s", describe(root))
		return nil
	}
	top, ok := d.mapping(root, "", root.Line,
		"version", "name", "dataset", "samples", "rubric", "grader", "canaries", "gate",
		"preprocess", "judge_model", "embedding_model")
	if !ok {
		return nil
	}
	top.require("version", "name", "dataset", "grader", "canaries")
	m := &Manifest{}
	if v, ok := top.integer("version", math.MinInt, math.MaxInt); ok {
		if v != 1 {
			d.fail(top.node("version").Line, "version", "must be 1, the only manifest version, got %d", v)
		}
		m.Version = v
	}
	m.Name, _ = top.str("name")
	m.Dataset = d.dataset(top)
	m.Samples = d.samples(top)
	m.Rubric = d.rubric(top)
	m.Grader = d.grader(top)
	m.Preprocess = d.preprocess(top)
	d.checkPreprocess(m)
	m.JudgeModel, m.EmbeddingModel = d.brokerModels(top)
	d.checkCosine(m)
	m.Gate = d.gate(top)
	d.checkRepeats(m)
	d.checkGateMetrics(m)
	if m.Gate.Calibration.CurrentLabelsOnly && (m.Rubric == nil || m.Rubric.Version == "") {
		d.fail(d.lines["gate.calibration.current_labels_only"], "gate.calibration.current_labels_only",
			"needs rubric.version: a label is current when its row's rubric version is rubric.version")
	}
	if mg := m.Grader.Multi; mg != nil && mg.Python == "" && m.Gate.MinMutationScore != nil {
		d.fail(d.lines["gate.min_mutation_score"], "gate.min_mutation_score",
			"mutation testing does not apply to a multi grader without a python sub-grader: it has no source to mutate")
	}
	if m.Grader.Judge != nil && m.Gate.MinMutationScore != nil {
		d.fail(d.lines["gate.min_mutation_score"], "gate.min_mutation_score",
			"mutation testing does not apply to a model grader (%s): it has no source to mutate; its canaries and calibration against human labels are what test it", m.Grader.Type)
	}
	if n := top.node("canaries"); n != nil {
		before := len(d.errs)
		m.Canaries, m.CanariesFile = d.canaries(n, d.lines["canaries"])
		// The set as a whole is judged only once each canary reads well:
		// a canary dropped for a typo would otherwise also report a
		// missing polarity.
		if m.CanariesFile == "" && len(d.errs) == before && !d.failed("grader.pass_threshold", "grader.range") {
			d.errs = append(d.errs, checkCanaries(m.Canaries, m.Grader.PassThreshold, d.file, d.lines["canaries"])...)
		}
	}
	return m
}

func (d *decoder) dataset(top *section) Dataset {
	ds := Dataset{
		Fields:         DefaultFields(),
		NearDuplicates: NearDuplicates{Threshold: DefaultNearDuplicateThreshold},
	}
	n := top.node("dataset")
	if n == nil {
		return ds
	}
	s, ok := d.mapping(n, "dataset", d.lines["dataset"],
		"path", "sha256", "revision", "schema", "fields", "intended_cases", "near_duplicates", "hidden_fields")
	if !ok {
		return ds
	}
	s.require("path", "sha256")
	ds.Path, _ = s.relPath("path")
	ds.SHA256, _ = s.digest("sha256")
	ds.Revision, _ = s.str("revision")
	ds.Schema, _ = s.relPath("schema")
	if v, ok := s.integer("intended_cases", 1, math.MaxInt); ok {
		ds.IntendedCases = v
	}
	if n := s.node("fields"); n != nil {
		if f, ok := d.mapping(n, "dataset.fields", d.lines["dataset.fields"], "id", "slice", "family", "label",
			"rubric_version", "label_status", "reviewer_labels", "reason"); ok {
			for _, fd := range []struct {
				key string
				dst *string
			}{{"id", &ds.Fields.ID}, {"slice", &ds.Fields.Slice}, {"family", &ds.Fields.Family}, {"label", &ds.Fields.Label},
				{"rubric_version", &ds.Fields.RubricVersion}, {"label_status", &ds.Fields.LabelStatus},
				{"reviewer_labels", &ds.Fields.ReviewerLabels}, {"reason", &ds.Fields.Reason}} {
				if v, ok := f.str(fd.key); ok {
					*fd.dst = v
				}
			}
		}
	}
	ds.HiddenFields, _ = s.strings("hidden_fields")
	if n := s.node("near_duplicates"); n != nil {
		if nd, ok := d.mapping(n, "dataset.near_duplicates", d.lines["dataset.near_duplicates"], "enabled", "threshold", "fields"); ok {
			if v, ok := nd.boolean("enabled"); ok {
				ds.NearDuplicates.Enabled = &v
			}
			if v, ok := nd.fraction("threshold"); ok {
				ds.NearDuplicates.Threshold = v
			}
			var all bool
			ds.NearDuplicates.Fields, all = nd.strings("fields")
			for i, f := range ds.NearDuplicates.Fields {
				if _, err := ParseFieldPath(f); err != nil && all {
					d.fail(resolve(nd.node("fields").Content[i]).Line, fmt.Sprintf("dataset.near_duplicates.fields.%d", i), "%v", err)
				}
			}
		}
	}
	return ds
}

func (d *decoder) samples(top *section) *FileRef {
	n := top.node("samples")
	if n == nil {
		return nil
	}
	s, ok := d.mapping(n, "samples", d.lines["samples"], "path", "sha256", "candidate")
	if !ok {
		return nil
	}
	s.require("path")
	ref := &FileRef{}
	ref.Path, _ = s.relPath("path")
	ref.SHA256, _ = s.digest("sha256")
	if n := s.node("candidate"); n != nil {
		if c, ok := d.mapping(n, "samples.candidate", d.lines["samples.candidate"], "model", "revision"); ok {
			c.require("model")
			ref.Candidate = &Candidate{}
			ref.Candidate.Model, _ = c.str("model")
			ref.Candidate.Revision, _ = c.str("revision")
		}
	}
	return ref
}

func (d *decoder) rubric(top *section) *Rubric {
	n := top.node("rubric")
	if n == nil {
		return nil
	}
	s, ok := d.mapping(n, "rubric", d.lines["rubric"], "version", "path", "sha256")
	if !ok {
		return nil
	}
	r := &Rubric{}
	r.Version, _ = s.str("version")
	r.Path, _ = s.relPath("path")
	r.SHA256, _ = s.digest("sha256")
	switch {
	case s.node("path") != nil && s.node("sha256") == nil:
		d.fail(s.line, "rubric.sha256", "required key is missing: rubric.path is set, so its digest must be pinned")
	case s.node("path") == nil && s.node("sha256") != nil:
		d.fail(s.node("sha256").Line, "rubric.sha256", "is set but rubric.path is not; there is no file to check it against")
	}
	return r
}

func (d *decoder) grader(top *section) Grader {
	g := Grader{
		Contract:       DefaultContract,
		TimeoutSeconds: DefaultTimeoutSeconds,
		MemoryMB:       DefaultMemoryMB,
		Metric:         DefaultMetric,
		PassThreshold:  DefaultPassThreshold,
		Isolation:      DefaultIsolation,
	}
	// A grader's imports (numpy, a tokenizer) take seconds, not minutes;
	// one that loops at import is stopped after this.
	g.LoadTimeoutSeconds = DefaultLoadTimeoutSeconds
	n := top.node("grader")
	if n == nil {
		return g
	}
	s, ok := d.mapping(n, "grader", d.lines["grader"],
		"type", "name", "source", "sha256", "contract", "image_tag",
		"timeout_seconds", "load_timeout_seconds", "memory_mb", "metric", "pass_threshold", "isolation", "on_exception",
		"model", "input", "range", "labels", "passing_labels", "sampling_params", "endpoint", "max_calls",
		"calculate_output", "graders",
		"platform", "metric_id", "metrics", "max_model_calls", "model_access", "target_field")
	if !ok {
		return g
	}
	s.require("type")
	g.Type, _ = s.enum("type", "python", TypeScoreModel, TypeLabelModel, TypeMulti)
	if g.Type != "python" {
		// MKA1's contract is a Python grader's; a model or multi grader
		// is OpenAI's shape.
		s.forbid("a "+g.Type+" grader (grader.platform and MKA1's keys are a python grader's)", append([]string{"platform"}, mka1Keys()...)...)
	}
	if g.Type == TypeMulti {
		d.multiGrader(s, &g)
		return g
	}
	if IsModelType(g.Type) {
		d.modelGrader(s, &g)
		return g
	}
	s.forbid("a python grader", pythonForbidden()...)
	s.require("source", "sha256")
	g.Source, _ = s.relPath("source")
	g.SHA256, _ = s.digest("sha256")
	if v, ok := s.str("name"); ok {
		g.Name = v
	} else if g.Source != "" {
		base := path.Base(g.Source)
		g.Name = strings.TrimSuffix(base, path.Ext(base))
	}
	d.platform(s, &g)
	g.ImageTag, _ = s.str("image_tag")
	if v, ok := s.integer("timeout_seconds", 1, MaxTimeoutSeconds); ok {
		g.TimeoutSeconds = v
	}
	if v, ok := s.integer("load_timeout_seconds", 1, MaxTimeoutSeconds); ok {
		g.LoadTimeoutSeconds = v
	}
	if v, ok := s.integer("memory_mb", MinMemoryMB, MaxMemoryMB); ok {
		g.MemoryMB = v
	}
	if v, ok := s.str("metric"); ok {
		g.Metric = v
	}
	d.pythonScale(s, &g)
	if v, ok := s.enum("isolation", "worker", "case"); ok {
		g.Isolation = v
	}
	d.maxModelCalls(s, &g)
	return g
}

func (d *decoder) gate(top *section) Gate {
	g := Gate{MinPassRate: DefaultMinPassRate, Aggregation: DefaultAggregation,
		Determinism: Determinism{Sample: DefaultDeterminismSample}, Metamorphic: defaultMetamorphic()}
	g.Confidence, g.Baseline.Alpha, g.Repeats = Confidence{Level: DefaultConfidenceLevel, Rule: DefaultConfidenceRule}, DefaultBaselineAlpha, 1
	n := top.node("gate")
	if n == nil {
		return g
	}
	s, ok := d.mapping(n, "gate", d.lines["gate"],
		"min_pass_rate", "aggregation", "max_errors", "max_omitted", "slices",
		"calibration", "require_controls", "min_mutation_score", "mutation", "determinism", "baseline",
		"confidence", "repeats", "metamorphic", "builtin_canaries", "weakening_reason", "metrics")
	if !ok {
		return g
	}
	if n := s.node("builtin_canaries"); n != nil {
		g.BuiltinCanaries = d.switchOff(n, "gate.builtin_canaries")
	}
	if v, ok := s.str("weakening_reason"); ok {
		if strings.TrimSpace(v) == "" {
			d.fail(d.lines["gate.weakening_reason"], "gate.weakening_reason", "must say why the change weakens the gate, got an empty string")
		}
		g.WeakeningReason = v
	}
	if v, ok := s.fraction("min_pass_rate"); ok {
		g.MinPassRate = v
	}
	if v, ok := s.enum("aggregation", "row", "family"); ok {
		g.Aggregation = v
	}
	g.MaxErrors, _ = s.integer("max_errors", 0, math.MaxInt)
	g.MaxOmitted, _ = s.integer("max_omitted", 0, math.MaxInt)
	g.RequireControls, _ = s.boolean("require_controls")
	if v, ok := s.fraction("min_mutation_score"); ok {
		g.MinMutationScore = &v
	}
	if n := s.node("calibration"); n != nil {
		if c, ok := d.mapping(n, "gate.calibration", d.lines["gate.calibration"], "max_false_pass",
			"mandatory_max_false_pass", "max_false_fail", "mandatory_max_false_fail",
			"current_labels_only", "min_agreement", "require_reasons", "warn_only_statuses"); ok {
			g.Calibration.MaxFalsePass, _ = c.integer("max_false_pass", 0, math.MaxInt)
			g.Calibration.CurrentLabelsOnly, _ = c.boolean("current_labels_only")
			g.Calibration.RequireReasons, _ = c.boolean("require_reasons")
			if c.written("min_agreement") {
				// Cohen's kappa runs from -1 to 1; a minimum below 0 would
				// accept reviewers who agree less than chance.
				if v, ok := c.fraction("min_agreement"); ok {
					g.Calibration.MinAgreement = &v
				}
			}
			g.Calibration.WarnOnlyStatuses, _ = c.strings("warn_only_statuses")
			for _, o := range []struct {
				key string
				to  **int
			}{
				{"mandatory_max_false_pass", &g.Calibration.MandatoryMaxFalsePass},
				{"max_false_fail", &g.Calibration.MaxFalseFail},
				{"mandatory_max_false_fail", &g.Calibration.MandatoryMaxFalseFail},
			} {
				if v, ok := c.integer(o.key, 0, math.MaxInt); ok {
					*o.to = &v
				}
			}
		}
	}
	if n := s.node("determinism"); n != nil {
		if c, ok := d.mapping(n, "gate.determinism", d.lines["gate.determinism"], "sample"); ok {
			if v, ok := c.integer("sample", 0, math.MaxInt); ok {
				g.Determinism.Sample = v
			}
		}
	}
	if n := s.node("mutation"); n != nil {
		if c, ok := d.mapping(n, "gate.mutation", d.lines["gate.mutation"], "timeout_counts_as_kill"); ok {
			g.Mutation.TimeoutCountsAsKill, _ = c.boolean("timeout_counts_as_kill")
		}
	}
	if n := s.node("baseline"); n != nil {
		if c, ok := d.mapping(n, "gate.baseline", d.lines["gate.baseline"], "max_drop", "alpha"); ok {
			g.Baseline.MaxDrop, _ = c.fraction("max_drop")
			if v, ok := c.fraction("alpha"); ok {
				g.Baseline.Alpha = v
			}
		}
	}
	d.confidence(s, &g)
	d.repeats(s, &g)
	if n := s.node("metamorphic"); n != nil {
		g.Metamorphic = d.metamorphic(n)
	}
	if n := s.node("slices"); n != nil {
		g.Slices = d.slices(n, g.MinPassRate)
	}
	if n := s.node("metrics"); n != nil {
		g.Metrics = d.gateMetrics(n)
	}
	return g
}

// switchOff decodes {enabled, reason} of a check that is on by default:
// switched off, it needs a reason.
func (d *decoder) switchOff(n *yaml.Node, key string) Switch {
	var sw Switch
	s, ok := d.mapping(n, key, d.lines[key], "enabled", "reason")
	if !ok {
		return sw
	}
	if v, ok := s.boolean("enabled"); ok {
		sw.Off = !v
	}
	sw.Reason, _ = s.str("reason")
	if sw.Off {
		sw.Line = d.lines[key+".enabled"]
		if strings.TrimSpace(sw.Reason) == "" {
			d.fail(sw.Line, key, "switched off without a reason: write reason: <why>, which the reports show")
		}
	}
	return sw
}

func (d *decoder) slices(n *yaml.Node, overall float64) []SliceRule {
	if n.Kind != yaml.MappingNode {
		d.fail(n.Line, "gate.slices", "must be a mapping of slice name to rule, got %s", describe(n))
		return nil
	}
	var rules []SliceRule
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode || k.Value == "" {
			d.fail(k.Line, "gate.slices", "slice names must be non-empty strings, got %s", describe(k))
			continue
		}
		key := "gate.slices." + k.Value
		if first, dup := seen[k.Value]; dup {
			d.fail(k.Line, key, "duplicate slice (first at line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		d.lines[key] = k.Line
		rule := SliceRule{Name: k.Value, MinPassRate: overall, Line: k.Line}
		if !isNull(v) {
			s, ok := d.mapping(v, key, k.Line, "mandatory", "min_pass_rate", "min_cases", "warn_only")
			if !ok {
				continue
			}
			rule.Mandatory, _ = s.boolean("mandatory")
			rule.WarnOnly, _ = s.boolean("warn_only")
			rule.MinCases, _ = s.integer("min_cases", 0, math.MaxInt)
			if v, ok := s.fraction("min_pass_rate"); ok {
				rule.MinPassRate = v
			}
			if rule.Mandatory && rule.WarnOnly {
				d.fail(k.Line, key, "mandatory and warn_only contradict each other: a warn_only slice never holds")
			}
		}
		rules = append(rules, rule)
	}
	return rules
}
