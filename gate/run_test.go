package gate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gradegate/gradegate/gate/digest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/gradegate/gradegate/gate/blind"
	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/gate/verdict"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// fakeRunner grades from a table: case id (or canary name) -> outcome. A task
// not in the table passes with score 1.
type fakeRunner struct {
	outcomes map[string]grading.Outcome
	err      error
	short    bool // return one outcome too few
	sandbox  grading.Sandbox

	mu    sync.Mutex
	calls [][]string // task ids of each Grade call
}

func (f *fakeRunner) Grade(ctx context.Context, tasks []grading.Task) ([]grading.Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids []string
	for _, t := range tasks {
		ids = append(ids, taskName(t))
	}
	f.calls = append(f.calls, ids)
	if f.err != nil {
		return nil, f.err
	}
	out := make([]grading.Outcome, 0, len(tasks))
	for _, t := range tasks {
		o, ok := f.outcomes[taskName(t)]
		if !ok {
			o = scored(1)
			if r, ok := rejects(taskName(t)); ok {
				o = r
			}
		}
		out = append(out, o)
	}
	if f.short {
		out = out[:len(out)-1]
	}
	return out, nil
}

func (f *fakeRunner) Sandbox() grading.Sandbox { return f.sandbox }

// canarySamples names newSuite's canaries by their samples: a canary
// travels under a made-up case id, and its sample is what tells the fake
// runner which one it is.
var canarySamples = map[string]string{
	`{"output_text":"ok"}`:   "equivalent-serialization",
	`{"output_text":"true"}`: "boolean-total-one-cent",
	`{"output_text":"x"}`:    "corrupt-fixture",
	// The built-in negatives, on rows whose samples hold output_text only.
	`{"output_text":"I can't help with that."}`: blind.BuiltinRefusal,
	`{"output_text":""}`:                        blind.BuiltinEmpty,
}

// rejects is what any grader worth its name gives the built-in negatives.
func rejects(name string) (grading.Outcome, bool) {
	if name == blind.BuiltinRefusal || name == blind.BuiltinEmpty {
		return scored(0), true
	}
	return grading.Outcome{}, false
}

// taskName is a task's case id, or a canary's name.
func taskName(t grading.Task) string {
	if name, ok := canarySamples[string(t.Sample)]; ok {
		return name
	}
	return t.ID
}

// testSeed places canaries the same way in every run of a test.
const testSeed = 7

var _ grading.Runner = (*fakeRunner)(nil)

func scored(s float64) grading.Outcome {
	return grading.Outcome{Class: grading.ClassOK, Score: &s, Scores: map[string]float64{"score": s}, DurationMS: 1.5}
}

func raised(typ, msg string, line int) grading.Outcome {
	return grading.Outcome{Class: grading.ClassGraderException, Error: &grading.CaseError{Type: typ, Message: msg, Line: line}, Output: "traceback…"}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// suite is a small eval suite: files, manifest and loaded dataset.
type suite struct {
	fsys fstest.MapFS
	m    *manifest.Manifest
	set  *dataset.Set
	lint []manifest.Finding
}

func newSuite() suite {
	files := map[string]string{
		"cases.jsonl":   "…cases…\n",
		"samples.jsonl": "…samples…\n",
		"grader.py":     "def grade(sample, item):\n    return 1.0\n",
		"rubric.md":     "# rubric\n",
	}
	fsys := fstest.MapFS{}
	for name, body := range files {
		fsys["evals/os/"+name] = &fstest.MapFile{Data: []byte(body)}
	}
	m := &manifest.Manifest{
		File:    "evals/os/gradegate.yaml",
		Dir:     "evals/os",
		Version: 1,
		Name:    "order-summary",
		Dataset: manifest.Dataset{Path: "cases.jsonl", SHA256: sha256Hex(files["cases.jsonl"]), Revision: "2026-11-29"},
		Samples: &manifest.FileRef{Path: "samples.jsonl", SHA256: "sha256:" + sha256Hex(files["samples.jsonl"])},
		Rubric:  &manifest.Rubric{Version: "order-rubric-2", Path: "rubric.md", SHA256: strings.ToUpper(sha256Hex(files["rubric.md"]))},
		Grader: manifest.Grader{Type: "python", Source: "grader.py", SHA256: sha256Hex(files["grader.py"]),
			Contract: "sample", ImageTag: "2025-05-08", Metric: "score", PassThreshold: 1},
		Canaries: []manifest.Canary{
			{Name: "equivalent-serialization", Sample: json.RawMessage(`{"output_text":"ok"}`), Item: json.RawMessage(`{}`), Expect: ptr(1.0)},
			{Name: "boolean-total-one-cent", Sample: json.RawMessage(`{"output_text":"true"}`), Item: json.RawMessage(`{}`), Expect: ptr(0.0)},
			{Name: "corrupt-fixture", Sample: json.RawMessage(`{"output_text":"x"}`), Item: json.RawMessage(`{}`), ExpectError: true},
		},
		Gate: manifest.Gate{MinPassRate: 0.5, Aggregation: "row", MaxErrors: 1,
			Slices: []manifest.SliceRule{{Name: "ship", Mandatory: true, MinPassRate: 0.5, MinCases: 2}}},
	}
	set := &dataset.Set{Intended: 12}
	for i := 1; i <= 12; i++ {
		c := dataset.Case{
			ID:           fmt.Sprintf("case-%02d", i),
			Item:         json.RawMessage(fmt.Sprintf(`{"case_id":"case-%02d"}`, i)),
			Sample:       json.RawMessage(`{"output_text":"…"}`),
			SampleSHA256: sha256Hex(fmt.Sprint(i)),
			File:         "evals/os/cases.jsonl",
			Line:         i,
		}
		if i <= 3 {
			c.Slices = []string{"ship"}
			c.Family = "refunds"
			c.Label = ptr(1)
		}
		set.Cases = append(set.Cases, c)
	}
	// case-12 has no stored sample.
	set.Cases[11].Sample, set.Cases[11].SampleSHA256 = nil, ""
	set.Findings = []manifest.Finding{{Code: "near_duplicate", Severity: manifest.SeverityWarn,
		File: "evals/os/cases.jsonl", Line: 5, CaseID: "case-05", Message: "near case-04"}}
	return suite{fsys: fsys, m: m, set: set}
}

// outcomes of newSuite's graded cases and canaries: case-02 fails, case-07
// raises, every other one passes; the canaries behave.
func suiteOutcomes() map[string]grading.Outcome {
	return map[string]grading.Outcome{
		"boolean-total-one-cent": scored(0),
		"corrupt-fixture":        raised("KeyError", "'expected_total_cents'", 7),
		"case-02":                scored(0),
		"case-07":                raised("ValueError", "bad total", 12),
	}
}

// intend sets dataset.intended_cases, as the manifest and dataset.Load would.
func (s *suite) intend(n int) {
	s.m.Dataset.IntendedCases = n
	s.set.Intended = n
}

func (s suite) inputs() Inputs {
	return Inputs{Manifest: s.m, FS: s.fsys, Dataset: s.set, Findings: s.lint}
}

func TestRun(t *testing.T) {
	s := newSuite()
	s.m.Gate.MaxOmitted = 1
	r := &fakeRunner{outcomes: suiteOutcomes(), sandbox: grading.Sandbox{UID: 60001, Seccomp: true, LandlockABI: 7, Rlimits: true}}
	res, err := Run(context.Background(), s.inputs(), r, Options{Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}

	// The canaries travel among the cases: one stream, here one call,
	// holding the 11 cases with a sample, the 3 canaries and the 4
	// built-in negatives (two of them on real cases' ids).
	if len(r.calls) != 1 {
		t.Fatalf("Grade calls = %v, want 1", r.calls)
	}
	if len(r.calls[0]) != 18 || slices.Contains(r.calls[0], "case-12") {
		t.Errorf("call = %v, want the 11 cases with a sample and the canaries", r.calls[0])
	}
	for _, name := range []string{"equivalent-serialization", "boolean-total-one-cent", "corrupt-fixture", blind.BuiltinRefusal, blind.BuiltinEmpty} {
		if !slices.Contains(r.calls[0], name) {
			t.Errorf("call = %v lacks canary %s", r.calls[0], name)
		}
	}

	if res.Verdict != results.VerdictPass {
		t.Errorf("verdict = %s: %s", res.Verdict, dump(res.Reasons))
	}
	if want := (results.Counts{Intended: 12, Graded: 10, Passed: 9, Failed: 1, Errored: 1, Omitted: 1}); res.Counts != want {
		t.Errorf("counts = %+v, want %+v", res.Counts, want)
	}
	if res.Schema != results.ResultsSchema || res.Manifest != (results.ManifestRef{Name: "order-summary", Path: "evals/os/gradegate.yaml"}) {
		t.Errorf("schema/manifest = %q %+v", res.Schema, res.Manifest)
	}
	if want := (digest.Digests{
		Dataset: "sha256:" + sha256Hex("…cases…\n"), Samples: "sha256:" + sha256Hex("…samples…\n"),
		Grader: "sha256:" + s.m.Grader.SHA256, Rubric: "sha256:" + sha256Hex("# rubric\n"),
	}); !res.Digests.Equal(want) {
		t.Errorf("digests = %+v, want %+v", res.Digests, want)
	}
	if want := (results.Versions{DatasetRevision: "2026-11-29", RubricVersion: "order-rubric-2", GraderName: "grader",
		ImageTag: "2025-05-08", Gradegate: "1.2.3", GraderDigest: "sha256:" + s.m.Grader.SHA256}); res.Versions != want {
		t.Errorf("versions = %+v, want %+v", res.Versions, want)
	}
	if res.Sandbox != r.sandbox || res.Shard != (shard.Shard{Index: 1, Count: 1}) {
		t.Errorf("sandbox/shard = %+v %+v", res.Sandbox, res.Shard)
	}
	for _, c := range res.Canaries {
		if c.Status != results.StatusPass {
			t.Errorf("canary %s = %+v", c.Name, c)
		}
	}
	if c := res.Canaries[2]; c.Class != grading.ClassGraderException || c.Error == nil || c.Got != nil {
		t.Errorf("expect_error canary = %+v", c)
	}
	if len(res.Findings) != 1 || !slices.ContainsFunc(res.Warnings, func(w results.Warning) bool { return w.Code == "near_duplicate" }) {
		t.Errorf("findings = %v, warnings = %v", res.Findings, res.Warnings)
	}

	byID := map[string]results.CaseResult{}
	for _, c := range res.Cases {
		byID[c.CaseID] = c
	}
	if len(res.Cases) != 12 {
		t.Fatalf("%d case rows, want 12 (omitted ones included)", len(res.Cases))
	}
	if c := byID["case-01"]; c.Status != results.StatusPass || *c.Score != 1 || c.Class != grading.ClassOK || c.Family != "refunds" ||
		*c.HumanScore != 1 || c.Line != 1 || c.SampleSHA256 == "" || c.DurationMS != 1.5 {
		t.Errorf("case-01 = %+v", c)
	}
	if c := byID["case-02"]; c.Status != results.StatusFail || *c.Score != 0 {
		t.Errorf("case-02 = %+v", c)
	}
	if c := byID["case-07"]; c.Status != results.StatusError || c.Score != nil || c.Error == nil ||
		c.Error.Class != grading.ClassGraderException || c.Error.Line != 12 || c.Output != "traceback…" {
		t.Errorf("case-07 = %+v", c)
	}
	if c := byID["case-12"]; c.Status != results.StatusOmitted || c.Reason != results.OmittedMissingSample || c.Class != "" {
		t.Errorf("case-12 = %+v", c)
	}
	ship := res.Slices[0]
	if ship.Name != "ship" || ship.Intended != 3 || ship.Passed != 2 || ship.Failed != 1 || ship.Status != results.VerdictPass {
		t.Errorf("ship = %+v", ship)
	}

	// The JSON has the results document's shape: lists are [], never null.
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"schema":"gradegate.results/v1"`, `"reasons":[]`, `"slices":[{"name":"ship"`,
		`"case_id":"case-12"`, `"reason":"missing_sample"`, `"judge":null`, `"sandbox":{"uid":60001`, `"shard":{"index":1,"count":1}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("results JSON lacks %s", want)
		}
	}
}

func TestRunHolds(t *testing.T) {
	tests := []struct {
		name    string
		change  func(s *suite, outcomes map[string]grading.Outcome)
		reasons []string
		check   func(t *testing.T, res *results.Results, r *fakeRunner)
	}{
		{
			name: "digest mismatch holds and grading still runs",
			change: func(s *suite, _ map[string]grading.Outcome) {
				s.fsys["evals/os/grader.py"] = &fstest.MapFile{Data: []byte("def grade(sample, item):\n    return 0.5\n")}
			},
			reasons: []string{results.ReasonDigestMismatch, results.ReasonOmittedCases},
			check: func(t *testing.T, res *results.Results, r *fakeRunner) {
				if !strings.Contains(res.Reasons[0].Message, "evals/os/grader.py") || res.Reasons[0].File != "evals/os/grader.py" {
					t.Errorf("reason = %+v", res.Reasons[0])
				}
				if len(r.calls) != 1 || res.Counts.Graded != 10 {
					t.Errorf("calls = %v, counts = %+v: grading must go on", r.calls, res.Counts)
				}
			},
		},
		{
			name: "unpinned samples are not compared",
			change: func(s *suite, _ map[string]grading.Outcome) {
				s.m.Samples.SHA256 = ""
				s.m.Gate.MaxOmitted = 1
			},
			reasons: nil,
		},
		{
			name: "canary failure holds and grading still runs",
			change: func(_ *suite, o map[string]grading.Outcome) {
				o["boolean-total-one-cent"] = scored(1) // the isinstance(True, int) bug
			},
			reasons: []string{results.ReasonCanaryFailed, results.ReasonOmittedCases},
			check: func(t *testing.T, res *results.Results, r *fakeRunner) {
				if !strings.Contains(res.Reasons[0].Message, "boolean-total-one-cent") {
					t.Errorf("reason = %+v", res.Reasons[0])
				}
				// The stream, then the failed canary's traced replay alone.
				if len(r.calls) != 2 || res.Counts.Graded != 10 || fmt.Sprint(r.calls[1]) != "[boolean-total-one-cent]" {
					t.Errorf("calls = %v, counts = %+v: grading must go on", r.calls, res.Counts)
				}
			},
		},
		{
			name: "expect_error canary that scores fails",
			change: func(_ *suite, o map[string]grading.Outcome) {
				o["corrupt-fixture"] = scored(1) // except Exception: return 1.0
			},
			reasons: []string{results.ReasonCanaryFailed, results.ReasonOmittedCases},
		},
		{
			name: "intended beyond the rows is omitted, counted, and said",
			change: func(s *suite, _ map[string]grading.Outcome) {
				s.intend(15)
			},
			reasons: []string{results.ReasonOmittedCases},
			check: func(t *testing.T, res *results.Results, _ *fakeRunner) {
				if res.Counts.Intended != 15 || res.Counts.Omitted != 4 || len(res.Cases) != 12 {
					t.Errorf("counts = %+v, %d rows", res.Counts, len(res.Cases))
				}
				if !strings.Contains(res.Reasons[0].Message, "3 not_in_dataset") {
					t.Errorf("message = %q", res.Reasons[0].Message)
				}
			},
		},
		{
			name: "error in a mandatory slice",
			change: func(_ *suite, o map[string]grading.Outcome) {
				o["case-03"] = grading.Outcome{Class: grading.ClassTimeout}
			},
			reasons: []string{results.ReasonOmittedCases, results.ReasonUnevaluableCases, results.ReasonUnevaluableCases},
			check: func(t *testing.T, res *results.Results, _ *fakeRunner) {
				for _, c := range res.Cases {
					if c.CaseID == "case-03" && (c.Error == nil || c.Error.Class != grading.ClassTimeout || c.Error.Message == "") {
						t.Errorf("case-03 = %+v", c)
					}
				}
			},
		},
		{
			name: "dataset hold finding",
			change: func(s *suite, _ map[string]grading.Outcome) {
				s.m.Gate.MaxOmitted = 1
				s.set.Findings = append(s.set.Findings, manifest.Finding{Code: "duplicate_case_id", Severity: manifest.SeverityHold,
					File: "evals/os/cases.jsonl", Line: 9, CaseID: "case-09", Message: "also on line 8"})
			},
			reasons: []string{results.ReasonDatasetInvalid},
		},
		{
			name: "grader lint hold finding",
			change: func(s *suite, _ map[string]grading.Outcome) {
				s.m.Gate.MaxOmitted = 1
				s.lint = []manifest.Finding{{Code: "grade_signature", Severity: manifest.SeverityHold,
					File: "evals/os/grader.py", Line: 1, Message: "grade must take exactly two positional parameters"}}
			},
			reasons: []string{results.ReasonGraderLint},
			check: func(t *testing.T, res *results.Results, _ *fakeRunner) {
				if len(res.Findings) != 2 {
					t.Errorf("findings = %s", dump(res.Findings))
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSuite()
			outcomes := suiteOutcomes()
			tt.change(&s, outcomes)
			r := &fakeRunner{outcomes: outcomes}
			res, err := Run(context.Background(), s.inputs(), r, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var codes []string
			for _, r := range res.Reasons {
				codes = append(codes, r.Code)
			}
			if !slices.Equal(codes, tt.reasons) {
				t.Errorf("reasons = %v, want %v\n%s", codes, tt.reasons, dump(res.Reasons))
			}
			if (res.Verdict == results.VerdictHold) != (len(tt.reasons) > 0) {
				t.Errorf("verdict = %s", res.Verdict)
			}
			if tt.check != nil {
				tt.check(t, res, r)
			}
		})
	}
}

func TestRunToolFailures(t *testing.T) {
	tests := []struct {
		name    string
		change  func(s *suite, r *fakeRunner, opts *Options)
		input   bool   // errors.Is(err, manifest.ErrInput)
		message string // the error contains it
	}{
		{
			name:    "runner error",
			change:  func(_ *suite, r *fakeRunner, _ *Options) { r.err = errors.New("pool died") },
			message: "grading cases: grading tasks 0 to 17: pool died",
		},
		{
			name:    "runner returns too few outcomes",
			change:  func(_ *suite, r *fakeRunner, _ *Options) { r.short = true },
			message: "returned 17 outcomes for 18 tasks",
		},
		{
			name: "runner says ok without a score",
			change: func(_ *suite, r *fakeRunner, _ *Options) {
				r.outcomes["case-04"] = grading.Outcome{Class: grading.ClassOK}
			},
			message: "case-04: the runner returned class ok without a finite score",
		},
		{
			name: "runner gives no class",
			change: func(_ *suite, r *fakeRunner, _ *Options) {
				r.outcomes["case-04"] = grading.Outcome{}
			},
			message: "case-04: the runner returned an outcome without a class",
		},
		{
			name:    "pinned file missing",
			change:  func(s *suite, _ *fakeRunner, _ *Options) { delete(s.fsys, "evals/os/rubric.md") },
			input:   true,
			message: "evals/os/rubric.md",
		},
		{
			name:    "bad shard",
			change:  func(_ *suite, _ *fakeRunner, o *Options) { o.Shard = shard.Shard{Index: 3, Count: 2} },
			input:   true,
			message: "shard 3/2",
		},
		{
			name:    "no dataset",
			change:  func(s *suite, _ *fakeRunner, _ *Options) { s.set = nil },
			message: "no dataset",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSuite()
			r := &fakeRunner{outcomes: suiteOutcomes()}
			var opts Options
			tt.change(&s, r, &opts)
			res, err := Run(context.Background(), s.inputs(), r, opts)
			if err == nil {
				t.Fatalf("no error; verdict %s", res.Verdict)
			}
			if !strings.Contains(err.Error(), tt.message) {
				t.Errorf("error %q lacks %q", err, tt.message)
			}
			if errors.Is(err, manifest.ErrInput) != tt.input {
				t.Errorf("errors.Is(err, ErrInput) = %v, want %v", !tt.input, tt.input)
			}
		})
	}
}

func TestRunCanariesOnly(t *testing.T) {
	s := newSuite()
	s.set = nil // the canary command needs no dataset
	delete(s.fsys, "evals/os/cases.jsonl")
	r := &fakeRunner{outcomes: suiteOutcomes()}
	res, err := Run(context.Background(), s.inputs(), r, Options{CanariesOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.calls) != 2 || len(r.calls[0]) != 3 || len(r.calls[1]) != 2 {
		t.Errorf("calls = %v, want the canaries, then the built-in negatives, only", r.calls)
	}
	if res.Verdict != results.VerdictPass || res.Overall.Status != verdict.StatusSkipped || len(res.Cases) != 0 || res.Cases == nil {
		t.Errorf("results = %s", dump(res))
	}
	if res.Digests.Dataset != "" || res.Digests.Grader == "" {
		t.Errorf("digests = %+v", res.Digests)
	}

	r = &fakeRunner{outcomes: suiteOutcomes()}
	r.outcomes["equivalent-serialization"] = scored(0)
	res, err = Run(context.Background(), s.inputs(), r, Options{CanariesOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != results.VerdictHold || len(res.Reasons) != 1 || res.Reasons[0].Code != results.ReasonCanaryFailed {
		t.Errorf("reasons = %s", dump(res.Reasons))
	}
}

func TestRunUnsandboxed(t *testing.T) {
	s := newSuite()
	s.m.Gate.MaxOmitted = 1
	r := &fakeRunner{outcomes: suiteOutcomes(), sandbox: grading.Sandbox{UID: -1, Unsandboxed: true}}
	res, err := Run(context.Background(), s.inputs(), r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Sandbox.Unsandboxed || len(res.Warnings) == 0 || res.Warnings[0].Code != verdict.WarnUnsandboxed {
		t.Errorf("sandbox = %+v, warnings = %s", res.Sandbox, dump(res.Warnings))
	}
}

func TestRunShards(t *testing.T) {
	s := newSuite()
	s.intend(13) // one intended case has no row: shard 1 counts it
	const n = 3
	seen := map[string]int{}
	var intended int
	for k := 1; k <= n; k++ {
		r := &fakeRunner{outcomes: suiteOutcomes()}
		res, err := Run(context.Background(), s.inputs(), r, Options{Shard: shard.Shard{Index: k, Count: n}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Shard != (shard.Shard{Index: k, Count: n}) {
			t.Errorf("shard = %+v", res.Shard)
		}
		for _, name := range []string{"equivalent-serialization", "boolean-total-one-cent", "corrupt-fixture", blind.BuiltinRefusal, blind.BuiltinEmpty} {
			if len(r.calls) != 1 || !slices.Contains(r.calls[0], name) {
				t.Errorf("shard %d: canaries must run in every shard: %v", k, r.calls)
			}
		}
		for _, c := range res.Cases {
			seen[c.CaseID]++
			if shard.ShardOf(c.CaseID, n) != k {
				t.Errorf("case %s in shard %d, ShardOf says %d", c.CaseID, k, shard.ShardOf(c.CaseID, n))
			}
		}
		intended += res.Counts.Intended
		if (k == 1) != strings.Contains(dump(res), "not_in_dataset") {
			t.Errorf("shard %d: only shard 1 counts intended cases that have no row", k)
		}
	}
	if len(seen) != 12 || intended != 13 {
		t.Errorf("shards graded %d distinct cases and count %d intended, want 12 and 13", len(seen), intended)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("case %s graded by %d shards", id, n)
		}
	}
}
