package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/gate/verdict"
	"github.com/gradegate/gradegate/manifest"
)

// runShards runs every shard of n over the suite and returns the results as
// a results file would give them back (through JSON).
func runShards(t *testing.T, s suite, n int, outcomes func(k int) map[string]grading.Outcome) []*results.Results {
	t.Helper()
	var parts []*results.Results
	for k := 1; k <= n; k++ {
		r := &fakeRunner{outcomes: outcomes(k), sandbox: grading.Sandbox{UID: 60001, Seccomp: true, LandlockABI: 7, Rlimits: true}}
		res, err := Run(context.Background(), s.inputs(), r, Options{Shard: shard.Shard{Index: k, Count: n}, Version: "1.2.3", CanarySeed: testSeed})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, roundTrip(t, res))
	}
	return parts
}

func roundTrip(t *testing.T, res *results.Results) *results.Results {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var out results.Results
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

func sameOutcomes(int) map[string]grading.Outcome { return suiteOutcomes() }

func TestMergeEqualsOneRun(t *testing.T) {
	for _, tt := range []struct {
		name   string
		change func(s *suite)
	}{
		{name: "passing suite", change: func(s *suite) { s.m.Gate.MaxOmitted = 1 }},
		{name: "holding suite with intended cases beyond the rows", change: func(s *suite) { s.intend(14) }},
		{name: "family aggregation", change: func(s *suite) { s.m.Gate.Aggregation = "family"; s.m.Gate.MinPassRate = 0.95 }},
		{name: "a duplicate row of the dataset stays in its shard", change: func(s *suite) {
			dup := s.set.Cases[4]
			dup.Line = 13
			s.set.Cases = append(s.set.Cases, dup)
			s.set.Intended = len(s.set.Cases) // intended_cases unset: every row
			s.set.Findings = append(s.set.Findings, manifest.Finding{Code: "duplicate_case_id", Severity: manifest.SeverityHold,
				File: "evals/os/cases.jsonl", Line: 13, CaseID: dup.ID, Message: "also on line 5"})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSuite()
			tt.change(&s)
			r := &fakeRunner{outcomes: suiteOutcomes(), sandbox: grading.Sandbox{UID: 60001, Seccomp: true, LandlockABI: 7, Rlimits: true}}
			whole, err := Run(context.Background(), s.inputs(), r, Options{Version: "1.2.3", CanarySeed: testSeed})
			if err != nil {
				t.Fatal(err)
			}
			whole = roundTrip(t, whole)

			parts := runShards(t, s, 3, sameOutcomes)
			slices.Reverse(parts) // merge does not depend on the order of its arguments
			merged, err := Merge(s.m, parts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(whole, roundTrip(t, merged)); diff != "" {
				t.Errorf("merge of 3 shards differs from one run (-one +merged):\n%s", diff)
			}
		})
	}
}

func TestMergeRecomputesTheVerdict(t *testing.T) {
	s := newSuite()
	s.m.Gate.MaxErrors = 1
	s.m.Gate.MaxOmitted = 1
	// Two errors overall, one per shard: each shard is within max_errors,
	// the union is not.
	outcomes := func(k int) map[string]grading.Outcome {
		o := suiteOutcomes()
		delete(o, "case-07")
		for _, id := range []string{"case-04", "case-05", "case-06", "case-08", "case-09", "case-10", "case-11"} {
			if shard.ShardOf(id, 2) == k {
				o[id] = raised("ValueError", "x", 3)
				break
			}
		}
		return o
	}
	parts := runShards(t, s, 2, outcomes)
	for _, p := range parts {
		if p.Verdict != results.VerdictPass {
			t.Fatalf("shard %s holds: %s", p.Shard, dump(p.Reasons))
		}
	}
	merged, err := Merge(s.m, parts)
	if err != nil {
		t.Fatal(err)
	}
	if merged.Verdict != results.VerdictHold || merged.Reasons[0].Code != results.ReasonUnevaluableCases || merged.Counts.Errored != 2 {
		t.Errorf("merged = %s %s %+v", merged.Verdict, dump(merged.Reasons), merged.Counts)
	}
	if merged.Shard != (shard.Shard{Index: 1, Count: 1}) {
		t.Errorf("shard = %+v", merged.Shard)
	}
}

func TestMergeCanaryFailedInOneShard(t *testing.T) {
	s := newSuite()
	s.m.Gate.MaxOmitted = 1
	parts := runShards(t, s, 2, func(k int) map[string]grading.Outcome {
		o := suiteOutcomes()
		if k == 2 {
			o["boolean-total-one-cent"] = scored(1)
		}
		return o
	})
	merged, err := Merge(s.m, parts)
	if err != nil {
		t.Fatal(err)
	}
	if merged.Verdict != results.VerdictHold || merged.Reasons[0].Code != results.ReasonCanaryFailed ||
		!strings.Contains(merged.Reasons[0].Message, "in shard 2/2") {
		t.Errorf("reasons = %s", dump(merged.Reasons))
	}
}

func TestMergeChecksDigestsAgainstTheManifest(t *testing.T) {
	s := newSuite()
	s.m.Gate.MaxOmitted = 1
	parts := runShards(t, s, 2, sameOutcomes)
	m := *s.m
	m.Grader.SHA256 = strings.Repeat("0", 64) // the manifest moved on since the shards ran
	merged, err := Merge(&m, parts)
	if err != nil {
		t.Fatal(err)
	}
	if merged.Verdict != results.VerdictHold || merged.Reasons[0].Code != results.ReasonDigestMismatch {
		t.Errorf("reasons = %s", dump(merged.Reasons))
	}
}

func TestMergeSandboxIsTheWeakest(t *testing.T) {
	s := newSuite()
	s.m.Gate.MaxOmitted = 1
	parts := runShards(t, s, 2, sameOutcomes)
	parts[1].Sandbox = grading.Sandbox{UID: 60002, Seccomp: false, LandlockABI: 3, Rlimits: true, Unsandboxed: true}
	merged, err := Merge(s.m, parts)
	if err != nil {
		t.Fatal(err)
	}
	if want := (grading.Sandbox{UID: -1, Seccomp: false, LandlockABI: 3, Rlimits: true, Unsandboxed: true}); merged.Sandbox != want {
		t.Errorf("sandbox = %+v, want %+v", merged.Sandbox, want)
	}
	if merged.Warnings[0].Code != verdict.WarnUnsandboxed {
		t.Errorf("warnings = %s", dump(merged.Warnings))
	}
}

func TestMergeRejects(t *testing.T) {
	tests := []struct {
		name    string
		change  func(parts []*results.Results) []*results.Results
		message []string
	}{
		{
			name:    "missing shard",
			change:  func(p []*results.Results) []*results.Results { return []*results.Results{p[0], p[2]} },
			message: []string{"missing results of shard 2/3"},
		},
		{
			name:    "shard given twice",
			change:  func(p []*results.Results) []*results.Results { return []*results.Results{p[0], p[1], p[1], p[2]} },
			message: []string{"shard 2 appears twice", "was graded by shard 2 and by shard 2"},
		},
		{
			name: "case graded by two shards",
			change: func(p []*results.Results) []*results.Results {
				p[1].Cases = append(p[1].Cases, p[0].Cases[0])
				return p
			},
			message: []string{"graded by shard 1 and by shard 2", "belongs to shard 1/3"},
		},
		{
			name: "different manifest",
			change: func(p []*results.Results) []*results.Results {
				p[2].Manifest.Name = "other-suite"
				return p
			},
			message: []string{`manifest "other-suite", want "order-summary"`},
		},
		{
			name: "different digests",
			change: func(p []*results.Results) []*results.Results {
				p[1].Digests.Grader = "sha256:00"
				return p
			},
			message: []string{"digests", "the shards graded different files"},
		},
		{
			name: "different versions",
			change: func(p []*results.Results) []*results.Results {
				p[1].Versions.Gradegate = "9.9.9"
				return p
			},
			message: []string{"versions"},
		},
		{
			name: "different shard counts",
			change: func(p []*results.Results) []*results.Results {
				p[2].Shard.Count = 4
				return p
			},
			message: []string{"shard count 4, but results #1 has 3"},
		},
		{
			name: "not a results file",
			change: func(p []*results.Results) []*results.Results {
				p[0].Schema = "gradegate.validate/v1"
				return p
			},
			message: []string{`schema "gradegate.validate/v1"`},
		},
		{
			name: "different canaries",
			change: func(p []*results.Results) []*results.Results {
				p[1].Canaries = p[1].Canaries[:2]
				return p
			},
			message: []string{"its canaries (equivalent-serialization, boolean-total-one-cent) differ"},
		},
		{
			name:    "nothing to merge",
			change:  func([]*results.Results) []*results.Results { return nil },
			message: []string{"no results to merge"},
		},
		{
			name:    "nil part",
			change:  func(p []*results.Results) []*results.Results { return []*results.Results{p[0], nil} },
			message: []string{"results #2 is empty"},
		},
		{
			name: "intended cases disagree with the manifest",
			change: func(p []*results.Results) []*results.Results {
				p[0].Counts.Intended += 5
				return p
			},
			message: []string{"count 17 intended cases", "make 12"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSuite()
			parts := tt.change(runShards(t, s, 3, sameOutcomes))
			res, err := Merge(s.m, parts)
			if err == nil {
				t.Fatalf("no error; verdict %s", res.Verdict)
			}
			if !errors.Is(err, manifest.ErrInput) {
				t.Errorf("error %v is not an input error", err)
			}
			for _, want := range tt.message {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

// Shards written to results files and read back as streams merge to the
// counts and verdict of the unsharded run.
func TestMergeStreamFromFiles(t *testing.T) {
	s := newSuite()
	one, err := Run(context.Background(), s.inputs(), &fakeRunner{outcomes: suiteOutcomes()}, Options{Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	var parts []ShardPart
	for _, p := range runShards(t, s, 3, sameOutcomes) {
		var b bytes.Buffer
		if err := p.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		head, err := results.ReadResultsHeader(bytes.NewReader(b.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if head.Cases != nil || head.Shard != p.Shard || head.Counts != p.Counts {
			t.Fatalf("header %+v lost its fields or kept its rows", head.Shard)
		}
		parts = append(parts, ShardPart{Results: head, Cases: results.NewCaseReader(bytes.NewReader(b.Bytes()))})
	}
	merged, err := MergeStream(s.m, parts, MergeOptions{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer merged.Close()
	if merged.Verdict != one.Verdict || merged.Counts != one.Counts || !slices.EqualFunc(merged.Slices, one.Slices, func(a, b results.SliceResult) bool {
		return a.Name == b.Name && a.Counts == b.Counts && a.Status == b.Status
	}) {
		t.Errorf("merged %s %+v, one run %s %+v", merged.Verdict, merged.Counts, one.Verdict, one.Counts)
	}
	var b bytes.Buffer
	one.Shard = merged.Shard
	if err := merged.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var doc results.Results
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil || len(doc.Cases) != len(one.Cases) {
		t.Fatalf("merged document: %v, %d cases", err, len(doc.Cases))
	}
	for i := range doc.Cases {
		if doc.Cases[i].CaseID != one.Cases[i].CaseID {
			t.Errorf("row %d is %s, want %s (dataset order)", i, doc.Cases[i].CaseID, one.Cases[i].CaseID)
		}
	}
}
