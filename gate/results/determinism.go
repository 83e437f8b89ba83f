package results

import (
	"github.com/gradegate/gradegate/gate/grading"
)

// ReasonNondeterministicGrader: a canary or a case graded twice got another
// score or class the second time.
const ReasonNondeterministicGrader = "nondeterministic_grader"

// Determinism is the determinism check of one run: every canary and a
// sample of the cases graded twice, each time by freshly started grader
// processes with their own hash seed, the second time in another order. A
// grader that depends on set order, random, the clock or state kept between
// calls shows up as a case whose score or class differed.
type Determinism struct {
	// Seed chose the case sample, the second order and the hash seeds; the
	// same seed on the same dataset picks the same cases again.
	Seed uint64 `json:"seed"`
	// HashSeeds are the PYTHONHASHSEED of the first and second grading.
	HashSeeds [2]uint32 `json:"hash_seeds"`
	// Sample is gate.determinism.sample; Cases is how many cases were graded
	// twice (fewer when the shard has fewer cases with a sample).
	Sample   int `json:"sample"`
	Canaries int `json:"canaries"`
	Cases    int `json:"cases"`
	// Differed lists every canary and case whose score or class differed.
	Differed []Difference `json:"differed"`
	// ComparedWithRun counts the sampled cases whose two gradings were
	// also compared with the main grading's outcome (every sampled case
	// of a run; none for the canary command, which grades no case).
	ComparedWithRun int `json:"compared_with_run"`
	// FlipRate is how many of the Cases graded twice got another status
	// the second time, with its interval: the figure gate.repeats gives a
	// model grader, for the grader's own noise.
	FlipRate *FlipRate `json:"flip_rate,omitempty"`
	// DurationMS is the wall time of the check, both gradings included.
	DurationMS float64 `json:"duration_ms"`
	// Status is "pass" when nothing differed, "hold" otherwise.
	Status string `json:"status"`
	// Asked says what was graded twice: "" the Python grader (other
	// processes, another hash seed); "model" a model grader, asked again
	// with the judge cache off; "python+model" a multi grader's Python
	// part and its model sub-graders, asked again with the cache off.
	Asked string `json:"asked,omitempty"`
}

// What a determinism check graded twice, besides a Python grader alone.
const (
	DeterminismModel       = "model"
	DeterminismPythonModel = "python+model"
)

// Difference is one task whose two gradings disagree.
type Difference struct {
	ID     string `json:"id"`
	Canary bool   `json:"canary,omitempty"`
	First  Graded `json:"first"`
	Second Graded `json:"second"`
	// Run is the main grading's outcome, set when it differs from either
	// of the check's.
	Run *Graded `json:"run,omitempty"`
}

// Graded is what one grading of a task gave.
type Graded struct {
	Class grading.Class `json:"class"`
	Score *float64      `json:"score,omitempty"`
}
