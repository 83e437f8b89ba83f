package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gradegate/gradegate/gate/digest"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/manifest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// kase is a case row: id, status, sample digest and optional human label.
func kase(id, status, sha string, label ...int) results.CaseResult {
	c := results.CaseResult{CaseID: id, Status: status, SampleSHA256: sha}
	if len(label) > 0 {
		c.HumanScore = &label[0]
	}
	return c
}

// run builds a results document whose counts agree with its cases.
func run(cases ...results.CaseResult) *results.Results {
	res := &results.Results{Schema: results.ResultsSchema, Cases: cases, Shard: shard.Shard{Index: 1, Count: 1}}
	for _, c := range cases {
		res.Counts.Intended++
		switch c.Status {
		case results.StatusPass:
			res.Counts.Passed++
			res.Counts.Graded++
		case results.StatusFail:
			res.Counts.Failed++
			res.Counts.Graded++
		case results.StatusError:
			res.Counts.Errored++
		case results.StatusOmitted:
			res.Counts.Omitted++
		}
	}
	return res
}

func f(v float64) *float64 { return &v }

const (
	pass    = results.StatusPass
	fail    = results.StatusFail
	errored = results.StatusError
	omitted = results.StatusOmitted
)

func TestCompare(t *testing.T) {
	tests := []struct {
		name       string
		base, head *results.Results
		want       *Report
	}{
		{
			name: "identical runs",
			base: run(kase("a", pass, "s1", 1), kase("b", fail, "s2", 0)),
			head: run(kase("a", pass, "s1", 1), kase("b", fail, "s2", 0)),
			want: &Report{
				Matched: 2, Cohort: 2,
				PassRate: PassRate{Base: f(0.5), Head: f(0.5), MatchedEffect: f(0), CompositionEffect: f(0)},
			},
		},
		{
			// The same output now fails: the grader or the rules moved.
			name: "grader change flips a case with the same output",
			base: run(kase("a", pass, "s1"), kase("b", pass, "s2")),
			head: run(kase("a", fail, "s1"), kase("b", pass, "s2")),
			want: &Report{
				Matched: 2, Cohort: 2,
				Flipped:  []Flip{{CaseID: "a", Base: pass, Head: fail, OutputChanged: false}},
				PassRate: PassRate{Base: f(1), Head: f(0.5), MatchedEffect: f(-0.5), CompositionEffect: f(0)},
			},
		},
		{
			name: "new candidate output flips a case",
			base: run(kase("a", fail, "s1"), kase("b", pass, "s2")),
			head: run(kase("a", pass, "s1-new"), kase("b", pass, "s2")),
			want: &Report{
				Matched: 1, Cohort: 2,
				Flipped:  []Flip{{CaseID: "a", Base: fail, Head: pass, OutputChanged: true}},
				PassRate: PassRate{Base: f(0.5), Head: f(1), MatchedEffect: f(0.5), CompositionEffect: f(0)},
			},
		},
		{
			name: "a changed or missing human label is not matched",
			base: run(kase("a", pass, "s1", 1), kase("b", pass, "s2", 0), kase("c", pass, "s3")),
			head: run(kase("a", pass, "s1", 0), kase("b", pass, "s2"), kase("c", pass, "s3")),
			want: &Report{
				Matched: 1, Cohort: 3,
				PassRate: PassRate{Base: f(1), Head: f(1), MatchedEffect: f(0), CompositionEffect: f(0)},
			},
		},
		{
			name: "no recorded sample digest never matches",
			base: run(kase("a", pass, "")),
			head: run(kase("a", pass, "")),
			want: &Report{
				Cohort:   1,
				PassRate: PassRate{Base: f(1), Head: f(1), MatchedEffect: f(0), CompositionEffect: f(0)},
			},
		},
		{
			// The rate rises from 50% to 100% with no case getting better:
			// the hard cases were dropped and an easy one added.
			name: "pass rate rises through composition only",
			base: run(kase("hard-1", fail, "h1"), kase("hard-2", fail, "h2"), kase("easy-1", pass, "e1"), kase("easy-2", pass, "e2")),
			head: run(kase("easy-1", pass, "e1"), kase("easy-2", pass, "e2"), kase("easy-3", pass, "e3")),
			want: &Report{
				Matched: 2, Cohort: 2,
				Added:    []string{"easy-3"},
				Removed:  []string{"hard-1", "hard-2"},
				PassRate: PassRate{Base: f(0.5), Head: f(1), MatchedEffect: f(0), CompositionEffect: f(0.5)},
			},
		},
		{
			// A grader crash that leaves the denominator raises the rate;
			// compare shows it as newly unevaluable and as composition.
			name: "failures turned into errors",
			base: run(kase("a", fail, "s1"), kase("b", pass, "s2"), kase("c", errored, "s3"), kase("d", omitted, "")),
			head: run(kase("a", errored, "s1"), kase("b", pass, "s2"), kase("c", errored, "s3"), kase("d", errored, "s4")),
			want: &Report{
				Matched: 3, Cohort: 1,
				Flipped: []Flip{
					{CaseID: "a", Base: fail, Head: errored, OutputChanged: false},
					{CaseID: "d", Base: omitted, Head: errored, OutputChanged: true},
				},
				NewlyUnevaluable: []string{"a", "d"},
				PassRate:         PassRate{Base: f(0.5), Head: f(1), MatchedEffect: f(0), CompositionEffect: f(0.5)},
			},
		},
		{
			name: "error recovered to pass is a flip but not newly unevaluable",
			base: run(kase("a", errored, "s1"), kase("b", pass, "s2")),
			head: run(kase("a", pass, "s1"), kase("b", pass, "s2")),
			want: &Report{
				Matched: 2, Cohort: 1,
				Flipped:  []Flip{{CaseID: "a", Base: errored, Head: pass}},
				PassRate: PassRate{Base: f(1), Head: f(1), MatchedEffect: f(0), CompositionEffect: f(0)},
			},
		},
		{
			name: "lists are sorted by case_id",
			base: run(kase("z", pass, "1"), kase("m", pass, "2"), kase("b", pass, "3"), kase("r2", pass, "4"), kase("r1", pass, "5")),
			head: run(kase("z", fail, "1"), kase("m", pass, "2"), kase("b", fail, "3"), kase("a2", pass, "6"), kase("a1", pass, "7")),
			want: &Report{
				Matched: 3, Cohort: 3,
				Flipped: []Flip{
					{CaseID: "b", Base: pass, Head: fail},
					{CaseID: "z", Base: pass, Head: fail},
				},
				Added:    []string{"a1", "a2"},
				Removed:  []string{"r1", "r2"},
				PassRate: PassRate{Base: f(1), Head: f(0.6), MatchedEffect: f(-0.6667), CompositionEffect: f(0.2667)},
			},
		},
		{
			// Duplicated easy rows must not hide: the second copy is added.
			name: "a duplicated case_id keeps every copy",
			base: run(kase("easy", pass, "e"), kase("hard", fail, "h")),
			head: run(kase("easy", pass, "e"), kase("easy", pass, "e"), kase("easy", pass, "e"), kase("hard", fail, "h")),
			want: &Report{
				Matched: 2, Cohort: 2,
				Added:    []string{"easy#2", "easy#3"},
				PassRate: PassRate{Base: f(0.5), Head: f(0.75), MatchedEffect: f(0), CompositionEffect: f(0.25)},
			},
		},
		{
			name: "nothing graded in base",
			base: run(kase("a", omitted, ""), kase("b", errored, "s2")),
			head: run(kase("a", pass, "s1"), kase("b", pass, "s2")),
			want: &Report{
				Matched: 1,
				Flipped: []Flip{
					{CaseID: "a", Base: omitted, Head: pass, OutputChanged: true},
					{CaseID: "b", Base: errored, Head: pass},
				},
				PassRate: PassRate{Head: f(1)},
			},
		},
		{
			name: "no case in common",
			base: run(kase("a", pass, "s1")),
			head: run(kase("b", fail, "s2")),
			want: &Report{
				Added:    []string{"b"},
				Removed:  []string{"a"},
				PassRate: PassRate{Base: f(1), Head: f(0)},
			},
		},
		{
			name: "two empty runs",
			base: run(),
			head: run(),
			want: &Report{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := *tt.want
			want.Schema = Schema
			for _, l := range []*[]string{&want.Added, &want.Removed, &want.NewlyUnevaluable} {
				if *l == nil {
					*l = []string{}
				}
			}
			if want.Flipped == nil {
				want.Flipped = []Flip{}
			}
			got := Compare(tt.base, tt.head)
			if diff := cmp.Diff(&want, got, cmpopts.IgnoreFields(Report{}, "Base", "Head", "Test", "Pairs", "VersionsChanged", "Labels", "LabelsChanged", "RemovedCases")); diff != "" {
				t.Errorf("Compare (-want +got):\n%s", diff)
			}
			// The removed cases carry their base status, in Removed's order.
			var removed []string
			for _, c := range got.RemovedCases {
				removed = append(removed, c.CaseID)
				if c.Status == "" {
					t.Errorf("removed case %s has no base status", c.CaseID)
				}
			}
			if !slices.Equal(removed, want.Removed) && len(removed)+len(want.Removed) > 0 {
				t.Errorf("removed cases %v, want %v", removed, want.Removed)
			}
			// The test's pairs are the cohort, and its flips are the
			// cohort's flips each way.
			pf, fp := 0, 0
			for _, f := range got.Flipped {
				switch {
				case f.Base == results.StatusPass && f.Head == results.StatusFail:
					pf++
				case f.Base == results.StatusFail && f.Head == results.StatusPass:
					fp++
				}
			}
			pr := got.Pairs
			if pr.BothPass+pr.PassFail+pr.FailPass+pr.BothFail != got.Cohort || got.Test.PassToFail != pf || got.Test.FailToPass != fp {
				t.Errorf("test %+v, pairs %+v; want %d cohort cases, %d pass→fail, %d fail→pass", got.Test, pr, got.Cohort, pf, fp)
			}
			// The decomposition adds up (to rounding).
			p := got.PassRate
			if p.Base != nil && p.Head != nil && p.MatchedEffect != nil && p.CompositionEffect != nil {
				if d := *p.Head - *p.Base - *p.MatchedEffect - *p.CompositionEffect; d > 2e-4 || d < -2e-4 {
					t.Errorf("head − base − matched − composition = %v, want 0", d)
				}
			}
		})
	}
}

// TestCompareUsesFileCounts checks that the overall rates come from the
// files' counts, not from the case rows: with family aggregation, or a file
// whose rows were cut, the counts are what the run reported.
func TestCompareUsesFileCounts(t *testing.T) {
	base := run(kase("a", pass, "s1"))
	base.Counts = results.Counts{Intended: 10, Graded: 10, Passed: 8, Failed: 2}
	head := run(kase("a", pass, "s1"))
	head.Counts = results.Counts{Intended: 10, Graded: 10, Passed: 9, Failed: 1}
	got := Compare(base, head).PassRate
	want := PassRate{Base: f(0.8), Head: f(0.9), MatchedEffect: f(0), CompositionEffect: f(0.1)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PassRate (-want +got):\n%s", diff)
	}
}

// TestReportJSON pins the compare document's shape (gradegate.compare/v1).
func TestReportJSON(t *testing.T) {
	tests := []struct {
		name       string
		base, head *results.Results
		want       string
	}{
		{
			name: "flip, add, remove, newly unevaluable",
			base: run(kase("a", pass, "s1", 1), kase("b", pass, "s2"), kase("gone", fail, "s3")),
			head: run(kase("a", fail, "s1", 1), kase("b", errored, "s2-new"), kase("new", pass, "s4")),
			want: `{
  "schema": "gradegate.compare/v1",
  "matched": 1,
  "flipped": [
    {
      "case_id": "a",
      "base": "pass",
      "head": "fail",
      "output_changed": false
    },
    {
      "case_id": "b",
      "base": "pass",
      "head": "error",
      "output_changed": true
    }
  ],
  "added": [
    "new"
  ],
  "removed": [
    "gone"
  ],
  "newly_unevaluable": [
    "b"
  ],
  "pass_rate": {
    "base": 0.6667,
    "head": 0.5,
    "matched_effect": -1,
    "composition_effect": 0.8333
  },
  "test": {
    "pass_to_fail": 1,
    "fail_to_pass": 0,
    "p_value": 1,
    "ci": [
      -1,
      0.1222
    ],
    "level": 0.95
  },
  "versions_changed": [],
  "labels": 1,
  "labels_changed": 0
}
`,
		},
		{
			name: "empty lists and unknown rates",
			base: run(),
			head: run(),
			want: `{
  "schema": "gradegate.compare/v1",
  "matched": 0,
  "flipped": [],
  "added": [],
  "removed": [],
  "newly_unevaluable": [],
  "pass_rate": {
    "base": null,
    "head": null,
    "matched_effect": null,
    "composition_effect": null
  },
  "test": {
    "pass_to_fail": 0,
    "fail_to_pass": 0,
    "p_value": 1,
    "ci": [
      -1,
      1
    ],
    "level": 0.95
  },
  "versions_changed": [],
  "labels": 0,
  "labels_changed": 0
}
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Compare(tt.base, tt.head).WriteJSON(&b); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, b.String()); diff != "" {
				t.Errorf("JSON (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		wantErr string // "" for success; else a substring of an ErrInput error
	}{
		{
			name:  "results document",
			input: `{"schema": "gradegate.results/v1", "verdict": "pass", "counts": {"graded": 1, "passed": 1}, "cases": [{"case_id": "a", "status": "pass"}]}`,
		},
		{
			name:  "unknown fields are kept for later versions",
			input: `{"schema": "gradegate.results/v1", "new_field": 1, "cases": []}` + "\n",
		},
		{name: "wrong schema", input: `{"schema": "gradegate.compare/v1"}`, wantErr: `schema is "gradegate.compare/v1"`},
		{name: "no schema", input: `{"cases": []}`, wantErr: `schema is ""`},
		{name: "not JSON", input: `schema: gradegate.results/v1`, wantErr: "reading results"},
		{name: "empty", input: ``, wantErr: "reading results"},
		{name: "two documents", input: `{"schema": "gradegate.results/v1"} {}`, wantErr: "data after"},
		{name: "case without case_id", input: `{"schema": "gradegate.results/v1", "cases": [{"status": "pass"}]}`, wantErr: "cases[0] has no case_id"},
		{name: "unknown status", input: `{"schema": "gradegate.results/v1", "cases": [{"case_id": "a", "status": "passed"}]}`, wantErr: `cases[0] (a) has status "passed"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Load(strings.NewReader(tt.input))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				if res.Schema != results.ResultsSchema {
					t.Errorf("Schema = %q", res.Schema)
				}
				return
			}
			if err == nil {
				t.Fatal("Load: no error")
			}
			if !errors.Is(err, manifest.ErrInput) {
				t.Errorf("error %v does not wrap manifest.ErrInput", err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestLoadRoundTrip(t *testing.T) {
	res := run(kase("a", pass, "s1", 1), kase("b", errored, "s2"))
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Load(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	// A nil judge is written as null and read back as the raw null.
	for i := range res.Cases {
		res.Cases[i].Judge = json.RawMessage("null")
	}
	if diff := cmp.Diff(res, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestLoadManyProblems(t *testing.T) {
	var cases []string
	for range 25 {
		cases = append(cases, `{"status": "pass"}`)
	}
	_, err := Load(strings.NewReader(`{"schema": "gradegate.results/v1", "cases": [` + strings.Join(cases, ",") + `]}`))
	if err == nil || !strings.Contains(err.Error(), "and 15 more") {
		t.Errorf("Load: err = %v, want the first 10 problems and a count of the rest", err)
	}
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

// sampleRuns are a base and a head with a bit of everything: a grader flip,
// an output flip, a new error, cases added and removed, a changed grader.
func sampleRuns() (base, head *results.Results) {
	base = run(
		kase("cancel-shipped-001", pass, "a1", 1),
		kase("cancel-shipped-002", fail, "a2", 0),
		kase("conflict_003", pass, "a3", 1),
		kase("happy-001", pass, "a4"),
		kase("happy-002", fail, "a5"),
		kase("hard-legacy-009", fail, "a6"),
	)
	base.Manifest.Name = "order-summary"
	base.Verdict = results.VerdictHold
	base.Digests = digest.Digests{Dataset: "sha256:" + strings.Repeat("d", 64), Grader: "sha256:" + strings.Repeat("1", 64)}
	head = run(
		kase("cancel-shipped-001", fail, "a1", 1),
		kase("cancel-shipped-002", fail, "a2", 0),
		kase("conflict_003", errored, "a3", 1),
		kase("happy-001", pass, "a4"),
		kase("happy-002", pass, "b5"),
		kase("happy-010", pass, "b7"),
		kase("happy-011|odd", pass, "b8"),
	)
	head.Manifest.Name = "order-summary"
	head.Verdict = results.VerdictHold
	head.Digests = digest.Digests{Dataset: "sha256:" + strings.Repeat("d", 64), Grader: "sha256:" + strings.Repeat("2", 64)}
	return base, head
}

func TestWriteText(t *testing.T) {
	tests := []struct {
		name       string
		base, head *results.Results
		golden     string
	}{
		{name: "changes", golden: "text_changes.golden"},
		{name: "no change", base: run(kase("a", pass, "s")), head: run(kase("a", pass, "s")), golden: "text_same.golden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, head := tt.base, tt.head
			if base == nil {
				base, head = sampleRuns()
			}
			var b bytes.Buffer
			if err := Compare(base, head).WriteText(&b); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.golden, b.Bytes())
		})
	}
}

func TestWriteMarkdown(t *testing.T) {
	many := run()
	for i := range maxMarkdownRows + 5 {
		many.Cases = append(many.Cases, kase(fmt.Sprintf("case-%03d", i), pass, "s"))
	}
	tests := []struct {
		name       string
		base, head *results.Results
		golden     string
	}{
		{name: "changes", golden: "markdown_changes.golden"},
		{name: "long lists are cut", base: run(), head: many, golden: "markdown_cut.golden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, head := tt.base, tt.head
			if base == nil {
				base, head = sampleRuns()
			}
			var b bytes.Buffer
			if err := Compare(base, head).WriteMarkdown(&b); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.golden, b.Bytes())
		})
	}
}

// TestShardNote checks that comparing a shard says so: the other shards'
// cases would otherwise read as removed.
func TestShardNote(t *testing.T) {
	base := run(kase("a", pass, "s"))
	head := run(kase("a", pass, "s"))
	head.Shard = shard.Shard{Index: 2, Count: 4}
	var b bytes.Buffer
	if err := Compare(base, head).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "head is shard 2/4") {
		t.Errorf("text does not mention the shard:\n%s", b.String())
	}
}

// Streamed from results files, the comparison is the same, and a row no
// run could write is an input error naming it.
func TestCompareStreams(t *testing.T) {
	base := run(kase("a", results.StatusPass, "s1"), kase("b", results.StatusFail, "s2"), kase("c", results.StatusPass, "s3"))
	head := run(kase("a", results.StatusFail, "s1"), kase("b", results.StatusFail, "s2"), kase("d", results.StatusPass, "s4"))
	doc := func(r *results.Results) (*results.Results, results.CaseIter) {
		var b bytes.Buffer
		if err := r.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		h, err := results.ReadResultsHeader(bytes.NewReader(b.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		return h, results.NewCaseReader(bytes.NewReader(b.Bytes()))
	}
	bh, br := doc(base)
	hh, hr := doc(head)
	got, err := CompareStreams(bh, br, hh, hr)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Compare(base, head), got); diff != "" {
		t.Errorf("streamed comparison (-in memory +streamed):\n%s", diff)
	}

	bad := run(kase("a", "weird", "s1"))
	bh, br = doc(bad)
	hh, hr = doc(head)
	if _, err := CompareStreams(bh, br, hh, hr); !errors.Is(err, manifest.ErrInput) || !strings.Contains(err.Error(), `status "weird"`) {
		t.Errorf("error = %v, want an input error naming the status", err)
	}
}

// TestWriteTextNeutralisesHostileIDs: a case id or a run name from a results
// file reaches the terminal with its bidi controls, escapes and workflow
// commands escaped, in every list of the report.
func TestWriteTextNeutralisesHostileIDs(t *testing.T) {
	hostile := "\u202eevil\u200b\x1b[31m\n::error::x ##[warning]y"
	r := &Report{
		Flipped:          []Flip{{CaseID: hostile, Base: "pass", Head: "fail"}},
		Added:            []string{hostile},
		Removed:          []string{},
		NewlyUnevaluable: []string{},
		Base:             Run{Name: hostile},
		Head:             Run{Name: "head"},
	}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, bad := range []string{"\u202e", "\u200b", "\x1b", "::error::", "##[warning]"} {
		if strings.Contains(out, bad) {
			t.Errorf("text output carries %q:\n%s", bad, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "::") {
			t.Errorf("a line starts a workflow command: %q", line)
		}
	}
}
