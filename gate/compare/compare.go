// Package compare sets two results files side by side (gradegate compare
// BASE.json HEAD.json): which cases flipped, which came and went, and how much
// of a pass-rate change the same cases explain versus a changed case set
// (gradegate.compare/v1).
package compare

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/gate/stats"
	"github.com/gradegate/gradegate/manifest"
)

// Schema is the schema name of a compare document.
const Schema = "gradegate.compare/v1"

// Report is the comparison of a base and a head run. Its JSON form is the
// compare document (gradegate.compare/v1); lists are never null, and sorted by
// case_id.
type Report struct {
	Schema string `json:"schema"`
	// Matched counts the cases in both runs with the same sample digest and
	// the same human label: the same candidate output judged against the same
	// reference. A case without a recorded digest never matches, because an
	// unknown output cannot be called the same.
	Matched int `json:"matched"`
	// Flipped lists every case in both runs whose status (pass, fail, error,
	// omitted) changed.
	Flipped []Flip `json:"flipped"`
	// Added are the case_ids only head has; Removed those only base has.
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
	// NewlyUnevaluable are the cases in both runs whose head status is error
	// and whose base status was not.
	NewlyUnevaluable []string `json:"newly_unevaluable"`
	PassRate         PassRate `json:"pass_rate"`

	// The fields below feed the text and markdown views only; the JSON
	// document keeps its published shape (schema gradegate.compare/v1).

	// Base and Head summarise the two runs.
	Base Run `json:"-"`
	Head Run `json:"-"`
	// Cohort is the number of cases graded (pass or fail) in both runs: the
	// denominator of PassRate.MatchedEffect.
	Cohort int `json:"-"`

	// Test is the exact McNemar test of the matched effect on the cohort,
	// with the effect's interval at the default level; the baseline gate
	// reads the same counts at the manifest's level.
	Test results.PairedTest `json:"test"`
	// Pairs counts the cohort's cases by their (base, head) outcomes.
	Pairs results.Pairs `json:"-"`
	// VersionsChanged names each of the four versions (dataset, rubric,
	// grader and judge, candidate) that differs between the runs.
	VersionsChanged []results.VersionChange `json:"versions_changed"`
	// Labels counts the cases labeled in both runs and graded in both;
	// LabelsChanged those whose label differs.
	Labels        int `json:"labels"`
	LabelsChanged int `json:"labels_changed"`
	// RemovedCases are the Removed cases with their base status and
	// slices, in the same order, for the baseline gate.
	RemovedCases []RemovedCase `json:"-"`
}

// RemovedCase is one case only base has.
type RemovedCase struct {
	CaseID string
	Status string
	Slices []string
}

// Flip is one case whose status differs between the runs.
type Flip struct {
	CaseID string `json:"case_id"`
	Base   string `json:"base"` // base status: pass, fail, error or omitted
	Head   string `json:"head"` // head status
	// OutputChanged says whether the sample digest differs. A flip with the
	// same output is the grader or the rules moving, not the candidate.
	OutputChanged bool `json:"output_changed"`
	// Slices are the case's slices in head; not part of the compare
	// document.
	Slices []string `json:"-"`
}

// PassRate splits the change of the overall pass rate in two. Every rate is
// nil (JSON null) when it has no denominator, and every value is rounded to
// four decimals like the rates in a results file.
//
//	Base  = base.counts.passed / base.counts.graded
//	Head  = head.counts.passed / head.counts.graded
//	MatchedEffect = (passed in head − passed in base) / |C|,
//	    C = the cases graded (pass or fail) in both runs
//	CompositionEffect = (Head − Base) − MatchedEffect
//
// Base and Head are the row pass rates over graded cases, taken from the
// files' counts (so also for family aggregation, where the gate's own rate is
// a mean of families). MatchedEffect is how much the rate moved on the same
// cases, whatever moved it: a new candidate output, a new grader, new rules.
// CompositionEffect is the rest: cases added, removed, or that became or
// stopped being gradeable. A rate that rises only through its
// CompositionEffect rose because the case set changed (hard cases dropped,
// easy ones added), not because the same cases got better.
type PassRate struct {
	Base              *float64 `json:"base"`
	Head              *float64 `json:"head"`
	MatchedEffect     *float64 `json:"matched_effect"`
	CompositionEffect *float64 `json:"composition_effect"`
}

// Run is what the text and markdown views say about one results file.
type Run struct {
	Name    string
	Verdict string
	Counts  results.Counts
	Grader  string // grader digest
	Dataset string // dataset digest
	Shard   shard.Shard
}

// key identifies a case within one results file. A file that repeats a
// case_id (a run that held with duplicate_case_id) keeps every copy: the
// n-th copy in base pairs with the n-th in head, and a copy only one side has
// is added or removed like any case, so duplicated rows cannot hide.
type key struct {
	id   string
	copy int // 1 for the first occurrence
}

func (k key) String() string {
	if k.copy == 1 {
		return k.id
	}
	return k.id + "#" + strconv.Itoa(k.copy)
}

func compareKeys(a, b key) int {
	return cmp.Or(strings.Compare(a.id, b.id), cmp.Compare(a.copy, b.copy))
}

// baseRow is what is kept of a base case while head streams past.
type baseRow struct {
	status string
	sha    string
	label  *int
	slices []string
	seen   bool // head has it too
}

// Compare compares a base run with a head run. Neither is changed.
func Compare(base, head *results.Results) *Report {
	r, _ := compare(base, results.RowsOf(base.Cases), head, results.RowsOf(head.Cases), false)
	return r // rows in memory cannot fail to be read
}

// CompareStreams compares two runs whose rows are read as streams: base's
// rows are kept as a few fields per case, head's are compared as they come.
// base and head are the documents without their rows (ReadResultsHeader).
//
// A row no run could write (no case_id, an unknown status) is an input
// error: errors.Is(err, manifest.ErrInput) holds.
func CompareStreams(base *results.Results, baseRows results.CaseIter, head *results.Results, headRows results.CaseIter) (*Report, error) {
	return compare(base, baseRows, head, headRows, true)
}

func compare(base *results.Results, baseRows results.CaseIter, head *results.Results, headRows results.CaseIter, validate bool) (*Report, error) {
	r := &Report{
		Schema:           Schema,
		Flipped:          []Flip{},
		Added:            []string{},
		Removed:          []string{},
		NewlyUnevaluable: []string{},
		Base:             summary(base),
		Head:             summary(head),
		VersionsChanged:  nonNilChanges(results.VersionChanges(base, head)),
	}
	var problems problemList
	baseCases := map[key]*baseRow{}
	var baseKeys []key
	copies := map[string]int{}
	for i := 0; ; i++ {
		c, ok, err := baseRows.Next()
		if err != nil {
			return nil, fmt.Errorf("%w: reading base results: %w", manifest.ErrInput, err)
		}
		if !ok {
			break
		}
		if validate && !problems.check(i, c) {
			continue
		}
		copies[c.CaseID]++
		k := key{c.CaseID, copies[c.CaseID]}
		baseKeys = append(baseKeys, k)
		baseCases[k] = &baseRow{status: c.Status, sha: c.SampleSHA256, label: c.HumanScore, slices: c.Slices}
	}
	if err := problems.err("base"); err != nil {
		return nil, err
	}

	var added, newlyErr, flippedKeys []key
	var flipped []Flip
	cohortBase, cohortHead := 0, 0
	clear(copies)
	for i := 0; ; i++ {
		h, ok, err := headRows.Next()
		if err != nil {
			return nil, fmt.Errorf("%w: reading head results: %w", manifest.ErrInput, err)
		}
		if !ok {
			break
		}
		if validate && !problems.check(i, h) {
			continue
		}
		copies[h.CaseID]++
		k := key{h.CaseID, copies[h.CaseID]}
		b, ok := baseCases[k]
		if !ok {
			added = append(added, k)
			continue
		}
		b.seen = true
		if b.sha != "" && b.sha == h.SampleSHA256 && sameLabel(b.label, h.HumanScore) {
			r.Matched++
		}
		if b.status != h.Status {
			flippedKeys = append(flippedKeys, k)
			flipped = append(flipped, Flip{CaseID: k.String(), Base: b.status, Head: h.Status, OutputChanged: b.sha != h.SampleSHA256, Slices: h.Slices})
		}
		if h.Status == results.StatusError && b.status != results.StatusError {
			newlyErr = append(newlyErr, k)
		}
		if graded(b.status) && graded(h.Status) {
			if b.label != nil || h.HumanScore != nil {
				r.Labels++
				if !sameLabel(b.label, h.HumanScore) {
					r.LabelsChanged++
				}
			}
			r.Cohort++
			if b.status == results.StatusPass {
				cohortBase++
			}
			if h.Status == results.StatusPass {
				cohortHead++
			}
			r.Pairs.Add(b.status == results.StatusPass, h.Status == results.StatusPass)
		}
	}
	if err := problems.err("head"); err != nil {
		return nil, err
	}
	var removed []key
	for _, k := range baseKeys {
		if !baseCases[k].seen {
			removed = append(removed, k)
		}
	}

	order := make([]int, len(flipped))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return compareKeys(flippedKeys[a], flippedKeys[b]) })
	for _, i := range order {
		r.Flipped = append(r.Flipped, flipped[i])
	}
	r.Added = sortedIDs(added)
	r.Removed = sortedIDs(removed)
	sorted := slices.Clone(removed)
	slices.SortFunc(sorted, compareKeys)
	for _, k := range sorted {
		b := baseCases[k]
		r.RemovedCases = append(r.RemovedCases, RemovedCase{CaseID: k.String(), Status: b.status, Slices: b.slices})
	}
	r.NewlyUnevaluable = sortedIDs(newlyErr)

	baseRate := ratio(base.Counts.Passed, base.Counts.Graded)
	headRate := ratio(head.Counts.Passed, head.Counts.Graded)
	var matched, composition *float64
	if r.Cohort > 0 {
		m := float64(cohortHead-cohortBase) / float64(r.Cohort)
		matched = &m
		if baseRate != nil && headRate != nil {
			c := (*headRate - *baseRate) - m
			composition = &c
		}
	}
	r.Test = r.Pairs.Test(stats.DefaultLevel)
	r.PassRate = PassRate{
		Base:              round4(baseRate),
		Head:              round4(headRate),
		MatchedEffect:     round4(matched),
		CompositionEffect: round4(composition),
	}
	return r, nil
}

func nonNilChanges(c []results.VersionChange) []results.VersionChange {
	if c == nil {
		return []results.VersionChange{}
	}
	return c
}

// problemList collects the rows no run could write, up to a bound.
type problemList struct {
	list []string
	n    int
}

// check reports whether row i is usable, and notes why not.
func (p *problemList) check(i int, c results.CaseResult) bool {
	var msg string
	switch {
	case c.CaseID == "":
		msg = fmt.Sprintf("cases[%d] has no case_id", i)
	case !validStatus(c.Status):
		msg = fmt.Sprintf("cases[%d] (%s) has status %q, want pass, fail, error or omitted", i, c.CaseID, c.Status)
	default:
		return true
	}
	p.n++
	if len(p.list) < maxProblems {
		p.list = append(p.list, msg)
	}
	return false
}

func (p *problemList) err(which string) error {
	if p.n == 0 {
		return nil
	}
	list := p.list
	if p.n > maxProblems {
		list = append(list, fmt.Sprintf("and %d more", p.n-maxProblems))
	}
	p.list, p.n = nil, 0
	return fmt.Errorf("%w: %s results: %s", manifest.ErrInput, which, strings.Join(list, "; "))
}

func summary(res *results.Results) Run {
	return Run{
		Name:    res.Manifest.Name,
		Verdict: res.Verdict,
		Counts:  res.Counts,
		Grader:  res.Digests.Grader,
		Dataset: res.Digests.Dataset,
		Shard:   res.Shard,
	}
}

func sameLabel(a, b *int) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// graded reports whether a status is a graded (ok) outcome.
func graded(status string) bool {
	return status == results.StatusPass || status == results.StatusFail
}

func sortedIDs(keys []key) []string {
	slices.SortFunc(keys, compareKeys)
	ids := make([]string, 0, len(keys))
	for _, k := range keys {
		ids = append(ids, k.String())
	}
	return ids
}

func ratio(n, d int) *float64 {
	if d <= 0 {
		return nil
	}
	v := float64(n) / float64(d)
	return &v
}

// round4 rounds to four decimals: results files show rates that way, and it
// keeps float noise (0.9 − 0.8 = 0.09999999999999998) out of the JSON.
func round4(f *float64) *float64 {
	if f == nil {
		return nil
	}
	v := math.Round(*f*1e4) / 1e4
	if v == 0 {
		v = 0 // no -0 in the output
	}
	return &v
}

// maxProblems bounds how many bad cases an input error lists.
const maxProblems = 10

// Load reads a results document (gradegate.results/v1). A document that is not
// JSON, whose schema is not gradegate.results/v1, or with a case that has no
// case_id or an unknown status is an input error: errors.Is(err,
// manifest.ErrInput) holds.
func Load(r io.Reader) (*results.Results, error) {
	dec := json.NewDecoder(r)
	var res results.Results
	if err := dec.Decode(&res); err != nil {
		return nil, fmt.Errorf("%w: reading results: %w", manifest.ErrInput, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: reading results: data after the results document", manifest.ErrInput)
	}
	if res.Schema != results.ResultsSchema {
		return nil, fmt.Errorf("%w: results schema is %q, want %q", manifest.ErrInput, res.Schema, results.ResultsSchema)
	}
	var problems []string
	for i, c := range res.Cases {
		switch {
		case c.CaseID == "":
			problems = append(problems, fmt.Sprintf("cases[%d] has no case_id", i))
		case !validStatus(c.Status):
			problems = append(problems, fmt.Sprintf("cases[%d] (%s) has status %q, want pass, fail, error or omitted", i, c.CaseID, c.Status))
		}
	}
	if n := len(problems); n > 0 {
		if n > maxProblems {
			problems = append(problems[:maxProblems], fmt.Sprintf("and %d more", n-maxProblems))
		}
		return nil, fmt.Errorf("%w: results: %s", manifest.ErrInput, strings.Join(problems, "; "))
	}
	return &res, nil
}

func validStatus(s string) bool {
	switch s {
	case results.StatusPass, results.StatusFail, results.StatusError, results.StatusOmitted:
		return true
	}
	return false
}

// WriteJSON writes the report as the compare JSON document, indented.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("compare: writing json: %w", err)
	}
	return nil
}
