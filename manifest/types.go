// Package manifest reads gradegate's run manifest (gradegate.yaml) and defines
// the values every other package shares: findings and input errors.
package manifest

import (
	"encoding/json"
	"fmt"

	"github.com/gradegate/gradegate/manifest/input"
)

// Manifest is a decoded gradegate.yaml with every default applied.
// Paths inside it are as written in the file, relative to Dir.
type Manifest struct {
	// File is the manifest's path as the user gave it; Dir is its folder.
	File string `json:"-"`
	Dir  string `json:"-"`

	Version  int      `json:"version"`
	Name     string   `json:"name"`
	Dataset  Dataset  `json:"dataset"`
	Samples  *FileRef `json:"samples,omitempty"`
	Rubric   *Rubric  `json:"rubric,omitempty"`
	Grader   Grader   `json:"grader"`
	Canaries []Canary `json:"canaries"`
	// CanariesFile is the canaries file as written (canaries: {path: ...}),
	// relative to Dir; "" when the canaries are inline.
	CanariesFile string `json:"canaries_file,omitempty"`
	Gate         Gate   `json:"gate"`
	// JudgeModel and EmbeddingModel resolve model="auto" (or no model) in
	// a Python grader's ctx.responses_create and ctx.embeddings_create,
	// and EmbeddingModel a text_similarity sub-grader's cosine; "" when
	// not written.
	JudgeModel     string `json:"judge_model,omitempty"`
	EmbeddingModel string `json:"embedding_model,omitempty"`

	// Preprocess is the preprocessor that rewrites each row before the
	// grader sees it; nil when the manifest has none.
	Preprocess *Preprocess `json:"preprocess,omitempty"`

	// Lines maps a dotted key path ("grader.sha256", "gate.slices.tone") to the
	// line it was written on, so later findings can point at the manifest.
	Lines map[string]int `json:"-"`

	// Limits bounds the size of every file the suite reads (the input
	// package's defaults unless raised with --max-input).
	Limits input.Limits `json:"-"`
}

// Line returns the manifest line of a dotted key path, or 0 when unknown.
func (m *Manifest) Line(key string) int {
	if m == nil || m.Lines == nil {
		return 0
	}
	return m.Lines[key]
}

// Dataset is the manifest's dataset section.
type Dataset struct {
	Path           string         `json:"path"`
	SHA256         string         `json:"sha256"`
	Revision       string         `json:"revision,omitempty"`
	Schema         string         `json:"schema,omitempty"`
	Fields         Fields         `json:"fields"`
	IntendedCases  int            `json:"intended_cases,omitempty"` // 0: the number of rows
	NearDuplicates NearDuplicates `json:"near_duplicates"`
	// HiddenFields are item fields removed from the item the grader
	// receives, besides the label field, which is always removed; the
	// results keep them.
	HiddenFields []string `json:"hidden_fields,omitempty"`
}

// Fields names the item fields gradegate reads.
type Fields struct {
	ID     string `json:"id"`     // default case_id
	Slice  string `json:"slice"`  // default slice
	Family string `json:"family"` // default family
	Label  string `json:"label"`  // default human_score
	// RubricVersion is the rubric version a row's label was given under
	// (default rubric_version); a labeled row whose version is not
	// rubric.version is a stale label.
	RubricVersion string `json:"rubric_version"`
	// LabelStatus is a row's label status (default label_status); a row
	// whose status is warn-only (Calibration.WarnOnlyStatuses) is graded
	// and shown but counts toward no threshold and no hold.
	LabelStatus string `json:"label_status"`
	// ReviewerLabels is a row's independent reviewer labels, a list of
	// {reviewer, score, reason} (default reviewer_labels), kept beside the
	// adjudicated label.
	ReviewerLabels string `json:"reviewer_labels"`
	// Reason is the reason given for the adjudicated label (default
	// human_reason).
	Reason string `json:"reason"`
}

// DefaultFields are the item field names of a manifest that names none.
func DefaultFields() Fields {
	return Fields{ID: "case_id", Slice: "slice", Family: "family", Label: "human_score",
		RubricVersion: "rubric_version", LabelStatus: "label_status", ReviewerLabels: "reviewer_labels", Reason: "human_reason"}
}

// WithDefaults fills each name left empty with its DefaultFields name, so
// a hand-built manifest behaves like a parsed one.
func (f Fields) WithDefaults() Fields {
	d := DefaultFields()
	for _, p := range []struct {
		name *string
		def  string
	}{
		{&f.ID, d.ID}, {&f.Slice, d.Slice}, {&f.Family, d.Family}, {&f.Label, d.Label},
		{&f.RubricVersion, d.RubricVersion}, {&f.LabelStatus, d.LabelStatus},
		{&f.ReviewerLabels, d.ReviewerLabels}, {&f.Reason, d.Reason},
	} {
		if *p.name == "" {
			*p.name = p.def
		}
	}
	return f
}

// NearDuplicates configures the near-duplicate screen.
type NearDuplicates struct {
	// Enabled is nil when the manifest leaves it out: the screen runs.
	Enabled   *bool    `json:"enabled,omitempty"`
	Threshold float64  `json:"threshold"`        // default 0.85
	Fields    []string `json:"fields,omitempty"` // field paths (see FieldPath)
}

// On reports whether the screen runs: unless enabled is false.
func (n NearDuplicates) On() bool { return n.Enabled == nil || *n.Enabled }

// FileRef is a file pinned by an optional digest.
type FileRef struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256,omitempty"`
	// Candidate is samples.candidate: the system whose outputs the samples
	// are; nil when not written (and always for files other than samples).
	Candidate *Candidate `json:"candidate,omitempty"`
}

// Candidate names the candidate system that produced the samples.
type Candidate struct {
	Model    string `json:"model"`
	Revision string `json:"revision,omitempty"`
}

// Rubric is the manifest's rubric section.
type Rubric struct {
	Version string `json:"version,omitempty"`
	Path    string `json:"path,omitempty"`
	SHA256  string `json:"sha256,omitempty"`
}

// Grader is the manifest's grader section.
type Grader struct {
	Type           string  `json:"type"`     // python | score_model | label_model | multi
	Name           string  `json:"name"`     // default: file stem of Source
	Source         string  `json:"source"`   // path
	SHA256         string  `json:"sha256"`   // digest of Source's bytes
	Contract       string  `json:"contract"` // sample | batch
	ImageTag       string  `json:"image_tag,omitempty"`
	TimeoutSeconds int     `json:"timeout_seconds"` // default 120
	MemoryMB       int     `json:"memory_mb"`       // default 2048
	Metric         string  `json:"metric"`          // default score
	PassThreshold  float64 `json:"pass_threshold"`  // default 1.0
	Isolation      string  `json:"isolation"`       // worker | case
	// OnException is hold ("" reads as hold) or zero: what a case whose
	// grader raised counts as.
	OnException string `json:"on_exception,omitempty"`
	// Range bounds a Python grader's gating score when written: a return
	// outside it is an invalid return. nil: any finite score.
	Range *[2]float64 `json:"range,omitempty"`
	// Judge holds the keys of a model grader (score_model, label_model);
	// nil for a Python grader. The gate asks the model itself: nothing of
	// a model grader runs in Python.
	Judge *ModelGrader `json:"judge,omitempty"`

	// LoadTimeoutSeconds bounds starting a grader process and running the
	// grader's module code (its imports); default 30.
	LoadTimeoutSeconds int `json:"load_timeout_seconds"`
	// Multi holds a multi grader's formula and its local sub-graders; nil
	// otherwise. Its Python sub-grader is this Grader's Source.
	Multi *MultiGrader `json:"multi,omitempty"`

	// Platform is grader.platform: "" for PlatformOpenAI (the default)
	// or PlatformMKA1, whose grader contract the grader follows.
	Platform string `json:"platform,omitempty"`
	// ModelBacked is set under platform mka1 by contract model_backed or
	// model_access: mka1: grade takes ctx, whose model calls the gate
	// makes. Contract then reads "sample".
	ModelBacked bool `json:"model_backed,omitempty"`
	// MaxModelCalls is grader.max_model_calls, on every platform: the ctx
	// calls (ctx.responses_create, ctx.embeddings_create) one grader
	// execution may make (one case under the sample contract, one batch
	// under batch), 0..500; default 64.
	MaxModelCalls int `json:"max_model_calls,omitempty"`
	// Metrics are grader.metrics (platform mka1): the declared aggregate
	// metric ids; grade_batch's other metrics are dropped. nil: every
	// metric is kept.
	Metrics []string `json:"metrics,omitempty"`
	// TargetField is grader.target_field (platform mka1): the dataset
	// field that fills item["target"]; "" for the default order.
	TargetField string `json:"target_field,omitempty"`
}

// Canary is one known input whose grade is known in advance.
type Canary struct {
	Name        string          `json:"name"`
	Sample      json.RawMessage `json:"sample"`
	Item        json.RawMessage `json:"item"`
	Expect      *float64        `json:"expect,omitempty"`
	ExpectError bool            `json:"expect_error,omitempty"`
	Tolerance   float64         `json:"tolerance,omitempty"`
	// File and Line say where the canary was written (manifest or canaries file).
	File string `json:"-"`
	Line int    `json:"-"`
}

// Positive reports whether the canary expects a pass at threshold.
func (c Canary) Positive(threshold float64) bool {
	return !c.ExpectError && c.Expect != nil && *c.Expect >= threshold
}

// Negative reports whether the canary expects a score below threshold. An
// expect_error canary is neither positive nor negative: a
// grader that raises on a corrupt fixture has still not shown it can fail a
// candidate, so it cannot stand in for the negative a manifest needs.
func (c Canary) Negative(threshold float64) bool {
	return !c.ExpectError && c.Expect != nil && *c.Expect < threshold
}

// Gate is the manifest's gate section.
type Gate struct {
	MinPassRate      float64     `json:"min_pass_rate"` // default 1.0
	Aggregation      string      `json:"aggregation"`   // row | family
	MaxErrors        int         `json:"max_errors"`
	MaxOmitted       int         `json:"max_omitted"`
	Slices           []SliceRule `json:"slices,omitempty"` // in manifest order
	Calibration      Calibration `json:"calibration"`
	RequireControls  bool        `json:"require_controls"`
	MinMutationScore *float64    `json:"min_mutation_score,omitempty"`
	Determinism      Determinism `json:"determinism"`
	// Mutation is gate.mutation: how mutation testing counts a mutant
	// that hung.
	Mutation Mutation `json:"mutation"`
	Baseline Baseline `json:"baseline"`
	// Confidence is gate.confidence: the level of every interval and the
	// rule slices are gated by.
	Confidence Confidence `json:"confidence"`
	// Repeats is gate.repeats: how many times a model grader is asked each
	// case (odd; default 1); the case counts as its majority answer.
	Repeats     int         `json:"repeats"`
	Metamorphic Metamorphic `json:"metamorphic"`
	// BuiltinCanaries is gate.builtin_canaries: the negatives the gate adds
	// itself (a refusal, an empty answer); on unless switched off with a
	// reason.
	BuiltinCanaries Switch `json:"builtin_canaries"`
	// WeakeningReason is gate.weakening_reason: why this change weakens the
	// policy against the base manifest (run --base-manifest). A weakening
	// holds (policy_weakened) unless it is set, and set to other words than
	// the base manifest's, so a reason written for one change does not
	// acknowledge the next.
	WeakeningReason string `json:"weakening_reason,omitempty"`
	// Metrics is gate.metrics: bounds on grade_batch's aggregate metrics
	// (platform mka1, contract batch), sorted by name.
	Metrics []MetricRule `json:"metrics,omitempty"`
}

// Switch is a check that is on by default (the zero Switch) and switched
// off only with a reason, which the reports show.
type Switch struct {
	Off    bool   `json:"off,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Line is where enabled: false was written; 0 when not written.
	Line int `json:"-"`
}

// Baseline is gate.baseline: how a run given a base branch's results
// (run --baseline) may differ from them on the cases both graded.
type Baseline struct {
	// MaxDrop is the drop of the pass rate on the cases graded in both runs
	// that is allowed, 0..1; default 0 (any drop holds).
	MaxDrop float64 `json:"max_drop"`
	// Alpha is the significance level of the McNemar test a drop must
	// also pass to hold, 0..1; default 0.05. 1 holds on the drop alone.
	Alpha float64 `json:"alpha"`
}

// Mutation is gate.mutation.
type Mutation struct {
	// TimeoutCountsAsKill makes a mutant that hung (a check timed out
	// where the unmutated grader's did not, or the time budget stopped
	// it) count as killed in the mutation score; default false: a hang
	// depends on the machine as much as on the mutant, so it is reported
	// (timeout_killed, not_graded) and counted as not killed. Setting it
	// weakens the test, and every report of the score says so.
	TimeoutCountsAsKill bool `json:"timeout_counts_as_kill"`
}

// Determinism is gate.determinism: every canary and a sample of the cases
// are graded a second time, in other processes, with another hash seed and
// in another order; any score or class that differs holds the gate.
type Determinism struct {
	// Sample is how many cases are graded twice (all of them when there are
	// fewer); 0 checks the canaries only. Default DefaultDeterminismSample.
	Sample int `json:"sample"`
}

// SliceRule is one entry of gate.slices, with defaults resolved.
type SliceRule struct {
	Name        string  `json:"name"`
	Mandatory   bool    `json:"mandatory"`
	MinPassRate float64 `json:"min_pass_rate"` // default gate.min_pass_rate
	MinCases    int     `json:"min_cases"`
	WarnOnly    bool    `json:"warn_only"`
	Line        int     `json:"-"`
}

// Slice returns the rule for a slice name, if the manifest has one.
func (g Gate) Slice(name string) (SliceRule, bool) {
	for _, s := range g.Slices {
		if s.Name == name {
			return s, true
		}
	}
	return SliceRule{}, false
}

// Calibration is gate.calibration.
//
// MaxFalsePass bounds the passes whose human_score is 0, overall and in
// every slice; a mandatory slice is held to MandatoryMaxFalsePass, 0 unless
// set. MaxFalseFail, when set, bounds the fails whose human_score is 1 the
// same way (a mandatory slice to MandatoryMaxFalseFail when that is set).
type Calibration struct {
	MaxFalsePass          int  `json:"max_false_pass"`
	MandatoryMaxFalsePass *int `json:"mandatory_max_false_pass,omitempty"`
	MaxFalseFail          *int `json:"max_false_fail,omitempty"`
	MandatoryMaxFalseFail *int `json:"mandatory_max_false_fail,omitempty"`
	// CurrentLabelsOnly leaves out of calibration every label given under
	// another rubric version than rubric.version (a stale label).
	CurrentLabelsOnly bool `json:"current_labels_only,omitempty"`
	// MinAgreement is the least Cohen's kappa of the reviewer labels a
	// mandatory slice needs for its labels to gate; nil: not checked.
	MinAgreement *float64 `json:"min_agreement,omitempty"`
	// RequireReasons makes a label without a reason of at least
	// MinReasonWords words a hold (label_without_reason).
	RequireReasons bool `json:"require_reasons,omitempty"`
	// WarnOnlyStatuses are the label statuses whose rows count toward no
	// threshold and no hold: DefaultWarnOnlyStatuses and those the manifest
	// adds.
	WarnOnlyStatuses []string `json:"warn_only_statuses,omitempty"`
}

// DefaultWarnOnlyStatuses are the label statuses that are always warn-only:
// a disputed label, and a newly mined case whose label has not been
// reviewed yet.
var DefaultWarnOnlyStatuses = []string{"disputed", "novel"}

// MinReasonWords is how many words a label's reason needs to count as one
// under gate.calibration.require_reasons.
const MinReasonWords = 5

// WarnOnlyStatus reports whether rows of a label status are warn-only.
func (c Calibration) WarnOnlyStatus(status string) bool {
	if status == "" {
		return false
	}
	for _, s := range DefaultWarnOnlyStatuses {
		if s == status {
			return true
		}
	}
	for _, s := range c.WarnOnlyStatuses {
		if s == status {
			return true
		}
	}
	return false
}

// Severity of a finding.
type Severity string

// Severities.
const (
	SeverityHold Severity = "hold"
	SeverityWarn Severity = "warn"
)

// Finding is one thing a check found in the user's inputs: a value, not a
// failure of the tool.
type Finding struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	File     string   `json:"file,omitempty"`
	Line     int      `json:"line,omitempty"`
	CaseID   string   `json:"case_id,omitempty"`
	Message  string   `json:"message"`
}

// ErrInput marks an error caused by input the user gave that cannot be used
// (exit code 2). Test with errors.Is.
var ErrInput = input.ErrUnusable

// Error is an input error at a position in a user's file.
type Error struct {
	File string
	Line int    // 0 when the problem has no line
	Key  string // dotted key path, or "" when the problem is not about a key
	Msg  string
	Err  error // the underlying cause (a read or syntax error), if any
}

func (e *Error) Error() string {
	msg := e.Msg
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if e.Key != "" {
		msg = e.Key + ": " + msg
	}
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, msg)
	case e.File != "":
		return fmt.Sprintf("%s: %s", e.File, msg)
	case e.Line > 0:
		return fmt.Sprintf("line %d: %s", e.Line, msg)
	}
	return msg
}

// Unwrap returns the underlying cause, so errors.Is(err, fs.ErrNotExist) works.
func (e *Error) Unwrap() error { return e.Err }

// Is makes every *Error match ErrInput.
func (e *Error) Is(target error) bool { return target == ErrInput }
