// Package shadow grades the same cases and canaries with two grader sources,
// the base (the grader as it was) and the head (as it is now), and lists
// every case whose score or class changed (gradegate shadow).
//
// It answers the question a grader change raises in review: which stored
// outputs does the new grader judge differently? Because both sources grade
// the same samples, every change is the grader's doing, never the model's.
package shadow

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/worker"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// Schema is the schema name of a shadow document.
const Schema = "gradegate.shadow/v1"

// Case statuses, as in results files.
const (
	StatusPass  = "pass"
	StatusFail  = "fail"
	StatusError = "error"
	// StatusOmitted: the preprocessor dropped the case's row, so neither
	// source graded it.
	StatusOmitted = "omitted"
)

// RunnerFactory starts a grader runner for one source: a sandboxed worker
// pool in the CLI, a fake in tests. The func releases the runner. A grader
// that cannot be loaded is reported as a *worker.LoadError, and then every
// task of that source counts as erroring with the load failure; any other
// error is the tool failing.
type RunnerFactory func(ctx context.Context, src []byte) (grading.Runner, func(), error)

// Report is the shadow comparison of two grader sources. Its JSON form is
// the document gradegate shadow --format json writes; lists are never null.
type Report struct {
	Schema string `json:"schema"`
	Base   Source `json:"base"`
	Head   Source `json:"head"`
	// Changed lists every graded case whose class or score differs, in
	// dataset order.
	Changed []Change `json:"changed"`
	// Canaries lists every canary with both outcomes and its verdict under
	// each source, so a head that breaks a canary shows here.
	Canaries []CanaryChange `json:"canaries"`
	// Overall and BySlice count the graded cases (those with a sample) and
	// their pass rates under each source; slices in manifest order, then the
	// others by name.
	Overall SliceRow   `json:"overall"`
	BySlice []SliceRow `json:"by_slice"`
}

// Source identifies one grader source by the digest of its bytes.
type Source struct {
	SHA256 string `json:"sha256"` // hex
}

// Change is one case graded differently.
type Change struct {
	CaseID string   `json:"case_id"`
	Slices []string `json:"slices"`
	Base   Grade    `json:"base"`
	Head   Grade    `json:"head"`
}

// Grade is one case's outcome under one source.
type Grade struct {
	Status string        `json:"status"` // pass or fail (class ok), omitted, error otherwise
	Class  grading.Class `json:"class"`
	Score  *float64      `json:"score"` // null unless class is ok
	// Error says why, when the case errored.
	Error *grading.CaseError `json:"error,omitempty"`
	// Reason says why, when the case was omitted (preprocessed_out).
	Reason string `json:"reason,omitempty"`
}

// CanaryChange is one canary under both sources.
type CanaryChange struct {
	Name    string `json:"name"`
	Changed bool   `json:"changed"` // class or score differs
	Base    Canary `json:"base"`
	Head    Canary `json:"head"`
}

// Canary is one canary's outcome and verdict under one source.
type Canary struct {
	Status  string        `json:"status"` // the canary's verdict: pass or fail
	Class   grading.Class `json:"class"`
	Score   *float64      `json:"score"`
	Message string        `json:"message"`
}

// SliceRow counts one slice (or, as Overall, every graded case).
type SliceRow struct {
	Slice   string `json:"slice,omitempty"`
	Cases   int    `json:"cases"`   // graded cases (with a sample)
	Changed int    `json:"changed"` // of them, graded differently
	// Pass rates are over the cases with class ok, as in results files;
	// null when there is none.
	BasePassRate *float64 `json:"base_pass_rate"`
	HeadPassRate *float64 `json:"head_pass_rate"`
}

// AnyChanged reports whether a case or a canary was graded differently
// (the shadow command exits 1 then).
func (r *Report) AnyChanged() bool {
	if len(r.Changed) > 0 {
		return true
	}
	for _, c := range r.Canaries {
		if c.Changed {
			return true
		}
	}
	return false
}

// Run grades the canaries of m and every case that has a sample with base
// and with head, one after the other, and compares them. Cases without a sample
// are graded by neither and left out.
//
// The error is the tool failing; a source that cannot be loaded is not an
// error but a result: its every outcome is the load failure.
func Run(ctx context.Context, base, head []byte, m *manifest.Manifest, cases []dataset.Case, newRunner RunnerFactory) (*Report, error) {
	if m == nil || newRunner == nil {
		return nil, errors.New("shadow: no manifest or no runner")
	}
	var canaries, graded []grading.Task
	var gradedCases []dataset.Case
	for _, c := range m.Canaries {
		canaries = append(canaries, grading.Task{ID: c.Name, Sample: c.Sample, Item: c.Item})
	}
	for _, c := range cases {
		if c.Sample == nil || c.Unreadable {
			continue
		}
		graded = append(graded, grading.Task{ID: c.ID, Sample: c.Sample, Item: c.ItemForGrader()})
		gradedCases = append(gradedCases, c)
	}

	// One source after the other, not both at once: two pools from one
	// sandbox would run graders under the same slot uids side by side, and
	// a uid per live grader process is what keeps them apart.
	b, err := gradeSource(ctx, newRunner, base, canaries, graded)
	if err != nil {
		return nil, fmt.Errorf("shadow: grading the base: %w", err)
	}
	h, err := gradeSource(ctx, newRunner, head, canaries, graded)
	if err != nil {
		return nil, fmt.Errorf("shadow: grading the head: %w", err)
	}

	threshold := m.Grader.PassThreshold
	rep := &Report{
		Schema:   Schema,
		Base:     Source{SHA256: digest(base)},
		Head:     Source{SHA256: digest(head)},
		Changed:  []Change{},
		Canaries: []CanaryChange{},
		BySlice:  []SliceRow{},
	}
	for i, c := range m.Canaries {
		bo, ho := b.canaries[i], h.canaries[i]
		rep.Canaries = append(rep.Canaries, CanaryChange{
			Name:    c.Name,
			Changed: differ(bo, ho),
			Base:    canaryOf(c, threshold, bo),
			Head:    canaryOf(c, threshold, ho),
		})
	}

	rows := map[string]*tally{}
	overall := &tally{}
	for i, c := range gradedCases {
		bg, hg := gradeOf(b.cases[i], threshold), gradeOf(h.cases[i], threshold)
		changed := differ(b.cases[i], h.cases[i])
		if changed {
			rep.Changed = append(rep.Changed, Change{CaseID: c.ID, Slices: nonNil(c.Slices), Base: bg, Head: hg})
		}
		overall.add(bg, hg, changed)
		for _, s := range c.Slices {
			if rows[s] == nil {
				rows[s] = &tally{}
			}
			rows[s].add(bg, hg, changed)
		}
	}
	rep.Overall = overall.row("")
	for _, name := range sliceOrder(m, rows) {
		rep.BySlice = append(rep.BySlice, rows[name].row(name))
	}
	return rep, nil
}

// outcomes is one source's outcomes, in task order.
type outcomes struct {
	canaries []grading.Outcome
	cases    []grading.Outcome
}

func gradeSource(ctx context.Context, newRunner RunnerFactory, src []byte, canaries, cases []grading.Task) (outcomes, error) {
	if err := ctx.Err(); err != nil {
		return outcomes{}, err
	}
	r, release, err := newRunner(ctx, src)
	var le *worker.LoadError
	if errors.As(err, &le) {
		return outcomes{canaries: loadFailed(le, len(canaries)), cases: loadFailed(le, len(cases))}, nil
	}
	if err != nil {
		return outcomes{}, err
	}
	defer release()
	// Canaries and cases go in separate Grade calls, as in the gate, so a
	// batch grader sees canaries the way the gate shows them.
	var o outcomes
	if o.canaries, err = grading.GradeTasks(ctx, r, canaries); err != nil {
		return outcomes{}, err
	}
	if o.cases, err = grading.GradeTasks(ctx, r, cases); err != nil {
		return outcomes{}, err
	}
	return o, nil
}

func loadFailed(le *worker.LoadError, n int) []grading.Outcome {
	out := make([]grading.Outcome, n)
	for i := range out {
		e := le.Err
		out[i] = grading.Outcome{Class: e.Class, Error: &e, Output: le.Output, LoadFailed: true}
	}
	return out
}

// differ reports whether two outcomes of one task differ in class or score.
// Two errors of the same class are the same outcome: their messages name
// lines of different sources and would always differ.
func differ(a, b grading.Outcome) bool {
	if a.Class != b.Class {
		return true
	}
	if a.Class != grading.ClassOK {
		return false
	}
	return *a.Score != *b.Score
}

func gradeOf(o grading.Outcome, threshold float64) Grade {
	g := Grade{Class: o.Class}
	if o.Omitted != "" {
		return Grade{Status: StatusOmitted, Reason: o.Omitted}
	}
	if o.Class != grading.ClassOK {
		g.Status = StatusError
		e := grading.CaseError{Class: o.Class, Message: string(o.Class)}
		if o.Error != nil {
			e = *o.Error
			e.Class = o.Class
		}
		g.Error = &e
		return g
	}
	s := *o.Score
	g.Score = &s
	g.Status = StatusFail
	if s >= threshold {
		g.Status = StatusPass
	}
	return g
}

func canaryOf(c manifest.Canary, threshold float64, o grading.Outcome) Canary {
	res := grading.EvaluateCanary(c, threshold, o)
	out := Canary{Status: res.Status, Class: o.Class, Message: res.Message}
	if o.Class == grading.ClassOK {
		s := *o.Score
		out.Score = &s
	}
	return out
}

// tally counts one slice.
type tally struct {
	cases, changed   int
	baseOK, basePass int
	headOK, headPass int
}

func (t *tally) add(b, h Grade, changed bool) {
	t.cases++
	if changed {
		t.changed++
	}
	if b.Status == StatusPass || b.Status == StatusFail {
		t.baseOK++
		if b.Status == StatusPass {
			t.basePass++
		}
	}
	if h.Status == StatusPass || h.Status == StatusFail {
		t.headOK++
		if h.Status == StatusPass {
			t.headPass++
		}
	}
}

func (t *tally) row(name string) SliceRow {
	return SliceRow{
		Slice:        name,
		Cases:        t.cases,
		Changed:      t.changed,
		BasePassRate: rate(t.basePass, t.baseOK),
		HeadPassRate: rate(t.headPass, t.headOK),
	}
}

// rate is n/d rounded to four decimals like the rates in a results file, or
// nil without a denominator.
func rate(n, d int) *float64 {
	if d == 0 {
		return nil
	}
	r := math.Round(float64(n)/float64(d)*10000) / 10000
	return &r
}

// sliceOrder lists the slices that have cases: those the manifest names, in
// its order, then the others by name.
func sliceOrder(m *manifest.Manifest, rows map[string]*tally) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range m.Gate.Slices {
		if rows[s.Name] != nil && !seen[s.Name] {
			out = append(out, s.Name)
			seen[s.Name] = true
		}
	}
	var rest []string
	for name := range rows {
		if !seen[name] {
			rest = append(rest, name)
		}
	}
	slices.SortFunc(rest, cmp.Compare[string])
	return append(out, rest...)
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// nonNil makes a nil slice empty, so the JSON says [] and not null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
