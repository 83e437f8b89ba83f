package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"

	"github.com/gradegate/gradegate/canary/hosted"
	"github.com/gradegate/gradegate/gate/digest"
	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/gate/stats"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// ResultsSchema is the schema name of a results document.
const ResultsSchema = "gradegate.results/v1"

// Verdicts.
const (
	VerdictPass = "pass"
	VerdictHold = "hold"
)

// Case statuses.
const (
	StatusPass    = "pass"
	StatusFail    = "fail"
	StatusError   = "error"
	StatusOmitted = "omitted"
)

// Omission reasons of a case row, and of intended cases that have no row.
const (
	OmittedMissingSample = "missing_sample"
	OmittedNotInDataset  = "not_in_dataset"
	// OmittedDatasetInvalid is the omission reason of a row that Python
	// would refuse to decode (a dataset_invalid finding names it): it is
	// never sent to the grader.
	OmittedDatasetInvalid = "dataset_invalid"
	// OmittedPreprocessedOut is the omission reason of a row the
	// preprocessor dropped: transform returned None, or transform_batch
	// left it out of the rows it returned.
	OmittedPreprocessedOut = "preprocessed_out"
)

// Reason codes: each hold reason's stable code.
const (
	ReasonDigestMismatch        = "digest_mismatch"
	ReasonCanaryFailed          = "canary_failed"
	ReasonDatasetInvalid        = "dataset_invalid"
	ReasonOmittedCases          = "omitted_cases"
	ReasonUnevaluableCases      = "unevaluable_cases"
	ReasonSliceBelowThreshold   = "slice_below_threshold"
	ReasonSliceTooSmall         = "slice_too_small"
	ReasonOverallBelowThreshold = "overall_below_threshold"
	ReasonFalsePass             = "false_pass"
	ReasonMutantsSurvived       = "mutants_survived"
	ReasonGraderLint            = "grader_lint"
	ReasonSliceInconclusive     = "slice_inconclusive"
)

// Results is the results JSON document, schema gradegate.results/v1.
type Results struct {
	Schema   string             `json:"schema"`
	Verdict  string             `json:"verdict"`
	Reasons  []Reason           `json:"reasons"`
	Warnings []Warning          `json:"warnings"`
	Findings []manifest.Finding `json:"findings"`
	Manifest ManifestRef        `json:"manifest"`
	Digests  digest.Digests     `json:"digests"`
	Versions Versions           `json:"versions"`
	Sandbox  grading.Sandbox    `json:"sandbox"`
	Shard    shard.Shard        `json:"shard"`
	Counts   Counts             `json:"counts"`
	Overall  Overall            `json:"overall"`
	Slices   []SliceResult      `json:"slices"`
	Canaries []CanaryResult     `json:"canaries"`
	Cases    []CaseResult       `json:"cases"`
	// Integrity records the digest of Cases as written, so merge can
	// refuse rows edited afterwards; set by WriteJSON.
	Integrity *Integrity `json:"integrity,omitempty"`
	// MutationScore is the grader's mutation score when the run measured it,
	// kept so that merge can apply gate.min_mutation_score again.
	MutationScore *float64 `json:"mutation_score,omitempty"`
	// MutationExcluded lists the lines no-mutate pragmas kept from the
	// mutation test that measured MutationScore, each with its reason.
	MutationExcluded []MutationExclusion `json:"mutation_excluded,omitempty"`
	// MutationSurvivors lists the mutants no canary or labeled case noticed
	// in the test that measured MutationScore.
	MutationSurvivors []SurvivingMutant `json:"mutation_survivors,omitempty"`
	// Determinism is the determinism check (gate.determinism), when one ran.
	Determinism *Determinism `json:"determinism,omitempty"`
	// Hosted is the local-versus-hosted parity of the canaries when `canary
	// --hosted` ran them on OpenAI's hosted grader, with every attempt.
	Hosted *hosted.Report `json:"hosted,omitempty"`
	// Baseline sets the run beside the base branch's results (run
	// --baseline); nil when none was given.
	Baseline *Baseline `json:"baseline,omitempty"`
	// Policy names what this change weakened against its base (run
	// --base-manifest, --baseline) and the reason the manifest gives.
	Policy *Policy `json:"policy,omitempty"`
	// Confidence is the level of every interval and the rule slices were
	// gated by (gate.confidence).
	Confidence *manifest.Confidence `json:"confidence,omitempty"`
	// Judge is what a model grader's calls cost (calls, cache, tokens,
	// time); nil for a Python grader.
	Judge *JudgeUsage `json:"judge,omitempty"`
	// Metamorphic is what the derived canaries covered and found, grouped
	// by transform; nil when no case was graded (the canary command).
	Metamorphic *MetamorphicReport `json:"metamorphic,omitempty"`
	// Labels holds the cases whose labels are in doubt or do not gate,
	// and the reviewers' agreement; nil when the dataset has no labels.
	Labels *Labels `json:"labels,omitempty"`
	// Metrics are a batch grader's aggregate metrics (MKA1's contract) and
	// gate.metrics's gates; nil when the run has neither.
	Metrics *Metrics `json:"metrics,omitempty"`

	// CasesNotKept counts the case rows that are not in Cases because a
	// streamed run kept in memory only those the reports show; WriteJSON
	// writes every row. 0 when Cases holds every row.
	CasesNotKept int `json:"-"`
	// Rows holds every case row of a streamed run on disk; nil when Cases
	// holds them all.
	Rows *CaseRows `json:"-"`
}

// CaseRows are the case rows of a streamed run, on disk.
type CaseRows struct {
	spool *Spool
}

// WriteJSON writes the results document, every case row included, indented
// and with HTML characters as they are.
func (r *Results) WriteJSON(w io.Writer) error {
	if r.Rows == nil {
		return writeResults(w, r, nil)
	}
	if r.Rows.spool == nil {
		return errors.New("writing results: the case rows were released (Results.Close)")
	}
	return writeResults(w, r, r.Rows.spool)
}

// Close releases the disk space of a streamed run's case rows; the results
// can then no longer be written whole.
func (r *Results) Close() error {
	if r.Rows == nil || r.Rows.spool == nil {
		return nil
	}
	err := r.Rows.spool.Close()
	r.Rows.spool = nil
	return err
}

// Reason is one cause of a hold.
type Reason struct {
	Code    string   `json:"code"`
	Slice   string   `json:"slice,omitempty"`
	CaseIDs []string `json:"case_ids,omitempty"`
	File    string   `json:"file,omitempty"`
	Message string   `json:"message"`
}

// Warning is something reported that never holds.
type Warning struct {
	Code    string `json:"code"`
	Slice   string `json:"slice,omitempty"`
	Message string `json:"message"`
}

// ManifestRef names the manifest a run used.
type ManifestRef struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// Versions records what produced the results.
type Versions struct {
	DatasetRevision string `json:"dataset_revision,omitempty"`
	RubricVersion   string `json:"rubric_version,omitempty"`
	GraderName      string `json:"grader_name"`
	ImageTag        string `json:"image_tag,omitempty"`
	Gradegate       string `json:"gradegate"`
	// GraderDigest is the grader's configuration as one digest (the
	// source's for a Python grader, the manifest's grader section for a
	// model grader); JudgeModel the model a model grader asks.
	GraderDigest string `json:"grader_digest,omitempty"`
	JudgeModel   string `json:"judge_model,omitempty"`
	// PreprocessDigest is the preprocessor's source digest, when the
	// manifest has one: rows the grader saw were rewritten by it.
	PreprocessDigest string `json:"preprocess_digest,omitempty"`
	// Candidate is the system whose outputs were graded: samples.candidate,
	// or the model the samples name.
	Candidate *Candidate `json:"candidate,omitempty"`
}

// Candidate names the candidate system of a run.
type Candidate struct {
	Model    string `json:"model"`
	Revision string `json:"revision,omitempty"`
	// Models counts the samples by the model they name, when the samples
	// name more than one (or samples.candidate names another).
	Models []dataset.CandidateModel `json:"models,omitempty"`
}

// Counts are always reported side by side. Intended = Graded + Errored + Omitted
// and Graded = Passed + Failed.
type Counts struct {
	Intended int `json:"intended"`
	Graded   int `json:"graded"`
	Passed   int `json:"passed"`
	Failed   int `json:"failed"`
	Errored  int `json:"errored"`
	Omitted  int `json:"omitted"`
}

// Overall is the overall pass rate against its threshold.
type Overall struct {
	PassRate    *float64 `json:"pass_rate"` // nil when nothing was graded
	MinPassRate float64  `json:"min_pass_rate"`
	// Status is pass or hold; warn in a shard of several (merge decides)
	// and skipped when no case was meant to be graded (the canary command).
	Status string `json:"status"`
	// Aggregation says how PassRate was computed: "row" (passed over graded
	// rows) or "family" (each family counts once: the mean of the families'
	// pass fractions). Results written before it was recorded have none,
	// which reads as "row".
	Aggregation string `json:"aggregation,omitempty"`
	// Families is how many families the rate is over when Aggregation is
	// "family" (a graded row without a family is a family of its own).
	Families int `json:"families,omitempty"`
	// CI is the Wilson interval of PassRate at gate.confidence.level, over
	// the graded rows (or the families); nil when nothing was graded. The
	// overall rate is gated at its point value under either rule.
	CI *stats.Interval `json:"ci,omitempty"`
	// RepeatFlips is how often a case's repeated asks of a model grader
	// (gate.repeats) fell on both sides of its pass threshold; nil when no
	// case was asked more than once.
	RepeatFlips *FlipRate `json:"repeat_flips,omitempty"`
}

// Aggregation values of Overall.
const (
	AggregationRow    = "row"
	AggregationFamily = "family"
)

// PerFamily reports whether the pass rates were computed per family.
func (o Overall) PerFamily() bool { return o.Aggregation == AggregationFamily }

// SliceResult is one row of the per-slice table.
type SliceResult struct {
	Name      string `json:"name"`
	Mandatory bool   `json:"mandatory"`
	WarnOnly  bool   `json:"warn_only"`
	Counts
	PassRate    *float64 `json:"pass_rate"`
	MinPassRate float64  `json:"min_pass_rate"`
	MinCases    int      `json:"min_cases"`
	FalsePass   int      `json:"false_pass"`
	FalseFail   int      `json:"false_fail"`
	Status      string   `json:"status"` // pass | hold | warn
	// CI is the Wilson interval of PassRate at gate.confidence.level; nil
	// when nothing was graded.
	CI *stats.Interval `json:"ci,omitempty"`
	// RepeatFlips is how often a case's repeated asks of a model grader
	// (gate.repeats) fell on both sides of its pass threshold; nil when no
	// case was asked more than once.
	RepeatFlips *FlipRate `json:"repeat_flips,omitempty"`
	// Inconclusive: under gate.confidence.rule lower_bound the interval
	// holds min_pass_rate, so the slice neither clears it nor falls below
	// it. FurtherCases is how many more cases at the observed rate would
	// decide it (absent when none would: the rate is the minimum).
	Inconclusive bool `json:"inconclusive,omitempty"`
	FurtherCases *int `json:"further_cases,omitempty"`
	// LeastCases is set when the slice is underpowered: fewer graded cases
	// than the least number whose interval could clear min_pass_rate even
	// if every one passed.
	LeastCases int `json:"least_cases,omitempty"`
	// Confusion is the slice's calibration against the human labels; nil
	// when no graded case of it is labeled.
	Confusion *Confusion `json:"confusion,omitempty"`
	// Agreement is its reviewers' agreement; nil without reviewer labels.
	Agreement *Agreement `json:"agreement,omitempty"`
}

// CanaryResult is one canary's outcome.
type CanaryResult struct {
	Name        string             `json:"name"`
	Expect      *float64           `json:"expect,omitempty"`
	ExpectError bool               `json:"expect_error,omitempty"`
	Got         *float64           `json:"got"`
	Class       grading.Class      `json:"class"`
	Status      string             `json:"status"` // pass | fail
	Message     string             `json:"message,omitempty"`
	Error       *grading.CaseError `json:"error,omitempty"`
	Output      string             `json:"output,omitempty"`
	// Placement says where the canary travelled among the cases; nil when
	// canaries were graded alone (the canary command).
	Placement *CanaryPlacement `json:"placement,omitempty"`
	// File and Line say where the canary is written (the manifest or its
	// canaries file), so a failing canary can be pointed at.
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// ReturnLine is the grader source line whose return produced a failed
	// canary's score, found by replaying it traced.
	ReturnLine int `json:"return_line,omitempty"`
	// DerivedFrom is set on a canary the gate derived (gate.metamorphic):
	// the canary's name, or "case <case_id>", it is a variant of; Transform
	// and Relation say how (canary/metamorphic), Site what was changed, and
	// Variant shows the variant's text, cut.
	DerivedFrom string `json:"derived_from,omitempty"`
	Transform   string `json:"transform,omitempty"`
	Relation    string `json:"relation,omitempty"`
	Site        string `json:"site,omitempty"`
	Variant     string `json:"variant,omitempty"`
	// BuiltIn marks a negative the gate adds itself (a refusal, an empty
	// answer; gate.builtin_canaries), which no manifest writes.
	BuiltIn bool `json:"builtin,omitempty"`
}

// CaseResult is one intended case's outcome.
type CaseResult struct {
	CaseID string             `json:"case_id"`
	Slices []string           `json:"slices"`
	Family string             `json:"family"`
	Status string             `json:"status"` // pass | fail | error | omitted
	Reason string             `json:"reason,omitempty"`
	Class  grading.Class      `json:"class"` // null for omitted cases
	Score  *float64           `json:"score"`
	Scores map[string]float64 `json:"scores"`
	Judge  json.RawMessage    `json:"judge"`
	// DroppedScores are the score keys MKA1's rules dropped from the
	// grader's return (not finite, not a number), with why.
	DroppedScores []string `json:"dropped_scores,omitempty"`
	// ExtractedOutput is the extracted_output grade_batch replaced the
	// sample's with (MKA1's contract): a JSON string or null.
	ExtractedOutput json.RawMessage    `json:"extracted_output,omitempty"`
	HumanScore      *int               `json:"human_score"`
	Error           *grading.CaseError `json:"error"`
	Output          string             `json:"output,omitempty"`
	DurationMS      float64            `json:"duration_ms"`
	SampleSHA256    string             `json:"sample_sha256"`
	Line            int                `json:"line"`
	// Repeats is how many times a model grader was asked the case
	// (gate.repeats) when more than once, and RepeatsDisagree whether the
	// asks fell on both sides of the pass threshold; the status is the
	// majority's.
	Repeats         int  `json:"repeats,omitempty"`
	RepeatsDisagree bool `json:"repeats_disagree,omitempty"`
	// ModelCalls are the model calls made for the case on the grader's
	// behalf: a Python grader's through ctx, a cosine text_similarity's.
	ModelCalls []grading.ModelCall `json:"model_calls,omitempty"`
	// LabelStatus and RubricVersion are the row's label status and the
	// rubric version of its label, as the dataset writes them.
	LabelStatus   string `json:"label_status,omitempty"`
	RubricVersion string `json:"rubric_version,omitempty"`
	// StaleLabel: the label was given under another rubric version than
	// rubric.version.
	StaleLabel bool `json:"stale_label,omitempty"`
	// ReviewerLabels are the reviewers' independent labels beside the
	// adjudicated HumanScore.
	ReviewerLabels []dataset.ReviewerLabel `json:"reviewer_labels,omitempty"`
}

// MarshalJSON writes every key of a case row for every case, so readers
// need no special cases: an omitted case, which was never graded, has class
// null rather than a missing key.
func (c CaseResult) MarshalJSON() ([]byte, error) {
	type plain CaseResult
	var class *grading.Class
	if c.Class != "" {
		class = &c.Class
	}
	// An encoder without HTML escaping: the caller's encoder decides that
	// for the whole document (it re-escapes when it wants to).
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(struct {
		plain
		Class *grading.Class `json:"class"`
	}{plain(c), class})
	return bytes.TrimRight(buf.Bytes(), "\n"), err
}

// CanaryPlacement records where a canary travelled in a run, so that a
// failure can be reproduced: the run's seed, and the dataset row it was
// sent after (the stream's order; workers may still grade neighbours in
// parallel). Alone is set for a canary graded as a batch of one.
type CanaryPlacement struct {
	Seed     uint64 `json:"seed"`
	AfterRow int    `json:"after_row"`
	Alone    bool   `json:"alone,omitempty"`
}

// FlipRate is how often a case graded more than once got another status:
// the repeats of a model grader, or the determinism check's second
// grading of a Python grader. CI is the Wilson interval of Rate.
type FlipRate struct {
	Cases   int            `json:"cases"`
	Flipped int            `json:"flipped"`
	Rate    float64        `json:"rate"`
	CI      stats.Interval `json:"ci"`
}

// NewFlipRate is the flip rate of flipped of cases at a level; nil when no
// case was graded more than once.
func NewFlipRate(flipped, cases int, level float64) *FlipRate {
	if cases <= 0 {
		return nil
	}
	if !(level > 0 && level < 1) {
		level = stats.DefaultLevel
	}
	r := float64(flipped) / float64(cases)
	return &FlipRate{Cases: cases, Flipped: flipped, Rate: math.Round(r*1e4) / 1e4, CI: stats.Wilson(flipped, cases, level).Round()}
}
