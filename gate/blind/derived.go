package blind

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"regexp"
	"slices"
	"unicode/utf8"

	"github.com/gradegate/gradegate/canary/metamorphic"
	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// variantTextLimit bounds the variant's text a reason and a result show.
const variantTextLimit = 160

// referenceFields are item fields that hold a right answer, looked at in
// this order for reference_quoted.
var referenceFields = []string{"reference", "expected", "expected_output", "ideal", "answer", "correct_answer", "target"}

// derivedCanary is one variant of a graded canary or labeled case.
type derivedCanary struct {
	from      string // the canary's name, or "case <id>"
	v         metamorphic.Variant
	base      metamorphic.Outcome
	tolerance float64
	// order sorts the results the same way whatever order the bases' grades
	// came back in: the base (written canaries first, then cases by row),
	// then the variant.
	order [2]int
	// baseItem is the base's item, shared by every variant of the base:
	// most variants change only the sample and keep the item as it was.
	baseItem *sharedItem
}

// sharedItem is a base's item and, once asked, the id it holds: read once
// for all the variants that keep the item, not once a variant (an item of
// 7 MiB took 8 ms to read, and a base has a dozen variants or more).
type sharedItem struct {
	item  json.RawMessage
	asked bool
	id    string
	ok    bool
}

// idOf is itemID of item, read from the base's when item is the base's.
func (s *sharedItem) idOf(item json.RawMessage, field string) (string, bool) {
	if s == nil || len(item) != len(s.item) || !bytes.Equal(item, s.item) {
		return itemID(item, field)
	}
	if !s.asked {
		s.asked = true
		s.id, s.ok = itemID(s.item, field)
	}
	return s.id, s.ok
}

// deriver turns graded canaries and sampled labeled cases into variants.
// It lives inside blindCanaries, which places the variants like canaries.
type deriver struct {
	m         *manifest.Manifest
	threshold float64
	// reference is a right answer when an item has none of its own: the
	// first positive canary's output_text.
	reference string
	// modelReads are the item fields a model grader's prompt reads; nil
	// for a Python grader, whose reads the worker records.
	modelReads []string
	skip       []string // item fields the gate sets itself
	// Case bases: each labeled case is a candidate with probability pick
	// (by a hash of its id, so that a plan made before the run sees the
	// same ones), the first sample of them taken.
	pick  float64
	taken int
	cases map[int]grading.Task // candidate tasks by row sequence, until graded
}

func newDeriver(m *manifest.Manifest, rows int, f manifest.Fields) *deriver {
	mm := m.Gate.Metamorphic
	if !mm.Enabled {
		return nil
	}
	d := &deriver{m: m, threshold: m.Grader.PassThreshold, cases: map[int]grading.Task{},
		skip:       []string{f.ID, f.Slice, f.Family, f.Label},
		modelReads: modelReads(m),
		pick:       pickRate(mm.Sample, rows)}
	for _, c := range m.Canaries {
		if c.Positive(d.threshold) {
			if t := outputText(c.Sample); t != "" {
				d.reference = t
				break
			}
		}
	}
	return d
}

// pickRate is the share of labeled rows that are candidates: three times
// the sample over the rows, so that the sample fills from the first part
// of a large dataset even when only some rows carry labels.
func pickRate(sample, rows int) float64 {
	if sample <= 0 {
		return 0
	}
	return min(1, 3*float64(sample)/float64(max(rows, 1)))
}

// candidate reports whether a labeled case is a base candidate.
func (d *deriver) candidate(c dataset.Case) bool {
	if d == nil || d.taken >= d.m.Gate.Metamorphic.Sample || c.Label == nil || c.Sample == nil || c.Unreadable {
		return false
	}
	h := fnv.New64a()
	h.Write([]byte(c.ID))
	if float64(h.Sum64()>>11)/(1<<53) >= d.pick {
		return false
	}
	d.taken++
	return true
}

var templateItemField = regexp.MustCompile(`\{\{\s*item\.([A-Za-z0-9_]+)`)

// modelReads are the item fields a model grader's prompt (or its model
// sub-graders' prompts) names.
func modelReads(m *manifest.Manifest) []string {
	var graders []*manifest.ModelGrader
	if m.Grader.Judge != nil {
		graders = append(graders, m.Grader.Judge)
	}
	for _, sg := range m.Grader.Multi.Models() {
		if sg.Model != nil && sg.Model.Judge != nil {
			graders = append(graders, sg.Model.Judge)
		}
	}
	var out []string
	for _, g := range graders {
		for _, msg := range g.Input {
			for _, mt := range templateItemField.FindAllStringSubmatch(msg.Content, -1) {
				if !slices.Contains(out, mt[1]) {
					out = append(out, mt[1])
				}
			}
		}
	}
	return out
}

// recordsReads reports whether written canary c's task should record
// which item keys it read: a positive one, when item_field_removed runs on
// a grader whose reads the worker records. Not under a preprocessor: the
// grader reads the rewritten row, and a field it read may be one the
// preprocessor fills in, so removing it from the written item proves
// nothing.
func (d *deriver) recordsReads(c manifest.Canary) bool {
	return d != nil && d.modelReads == nil && d.m.Preprocess == nil && c.Positive(d.threshold) && d.m.Gate.Metamorphic.On(manifest.TransformItemFieldRemoved)
}

// fromCanary derives the variants of written canary c from its outcome:
// none when the canary did not come out as it expects, since then it fails
// on its own.
func (d *deriver) fromCanary(c manifest.Canary, o grading.Outcome) []derivedCanary {
	if d == nil || c.ExpectError || o.Class != grading.ClassOK || o.Score == nil {
		return nil
	}
	var pol metamorphic.Polarity
	switch {
	case c.Positive(d.threshold) && *o.Score >= d.threshold:
		pol = metamorphic.Positive
	case c.Negative(d.threshold) && *o.Score < d.threshold:
		pol = metamorphic.Negative
	default:
		return nil
	}
	return d.derive(c.Name, pol, c.Sample, c.Item, o, c.Tolerance)
}

// fromCanaryAt is fromCanary for written canary i, ordered by it.
func (d *deriver) fromCanaryAt(i int, c manifest.Canary, o grading.Outcome) []derivedCanary {
	ds := d.fromCanary(c, o)
	for k := range ds {
		ds[k].order = [2]int{i, k}
	}
	return ds
}

// fromCase derives the variants of a sampled labeled case once graded:
// a human_score 1 case that passed is a positive, a human_score 0 case
// that failed a negative; one that disagrees with its label derives
// nothing (calibration reports it).
func (d *deriver) fromCase(row int, c results.CaseResult, o grading.Outcome) []derivedCanary {
	if d == nil {
		return nil
	}
	t, ok := d.cases[row]
	if !ok {
		return nil
	}
	delete(d.cases, row)
	if c.HumanScore == nil || o.Class != grading.ClassOK || o.Score == nil {
		return nil
	}
	var pol metamorphic.Polarity
	switch {
	case *c.HumanScore == 1 && c.Status == results.StatusPass:
		pol = metamorphic.Positive
	case *c.HumanScore == 0 && c.Status == results.StatusFail:
		pol = metamorphic.Negative
	default:
		return nil
	}
	ds := d.derive("case "+c.CaseID, pol, t.Sample, t.Item, o, 0)
	for k := range ds {
		ds[k].order = [2]int{len(d.m.Canaries) + row, k}
	}
	return ds
}

func (d *deriver) derive(from string, pol metamorphic.Polarity, sample, item json.RawMessage, o grading.Outcome, tolerance float64) []derivedCanary {
	reads := d.modelReads
	if reads == nil {
		for _, k := range o.Reads {
			if !slices.Contains(d.skip, k) {
				reads = append(reads, k)
			}
		}
	}
	ref := itemReference(item)
	if ref == "" {
		ref = d.reference
	}
	base := metamorphic.Outcome{Class: string(o.Class), Score: o.Score}
	shared := &sharedItem{item: item}
	var out []derivedCanary
	for _, v := range metamorphic.Derive(metamorphic.Base{Polarity: pol, Sample: sample, Item: item, Reads: reads, Reference: ref}, d.m.Gate.Metamorphic.On) {
		if d.m.Grader.Platform == manifest.PlatformMKA1 && outputText(v.Sample) != outputText(sample) {
			// Under MKA1's contract extracted_output is what its extraction
			// made of output_text: a variant's new output has no stored
			// extraction, so it defaults to the new output_text.
			v.Sample = withoutKey(v.Sample, "extracted_output")
		}
		out = append(out, derivedCanary{from: from, v: v, base: base, tolerance: tolerance, baseItem: shared})
	}
	return out
}

// itemReference is the item's own right answer, when it names one.
func itemReference(item json.RawMessage) string {
	var fields map[string]json.RawMessage
	if json.Unmarshal(item, &fields) != nil {
		return ""
	}
	for _, k := range referenceFields {
		var s string
		if json.Unmarshal(fields[k], &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// outputText is a sample's output_text, or "".
func outputText(sample json.RawMessage) string {
	var s struct {
		OutputText string `json:"output_text"`
	}
	_ = json.Unmarshal(sample, &s)
	return s.OutputText
}

// withoutKey is an item object without key, so that the placement of a
// model grader's canary gives the variant an id of its own rather than its
// case's (a code grader's keeps its place and gets a new value).
func withoutKey(item json.RawMessage, key string) json.RawMessage {
	var fields map[string]json.RawMessage
	if json.Unmarshal(item, &fields) != nil {
		return item
	}
	if _, ok := fields[key]; !ok {
		return item
	}
	delete(fields, key)
	out, err := json.Marshal(fields)
	if err != nil {
		return item
	}
	return out
}

// name is the derived canary's name: its base, transform and site.
func (dc derivedCanary) name() string {
	name := dc.from + "/" + dc.v.Transform
	if dc.v.Site != "" {
		name += "[" + dc.v.Site + "]"
	}
	return name
}

// result judges one derived canary from its outcome.
func (dc derivedCanary) result(threshold float64, o grading.Outcome) results.CanaryResult {
	ok, why := metamorphic.Check(dc.v.Relation, threshold, dc.tolerance, dc.base, metamorphic.Outcome{Class: string(o.Class), Score: o.Score})
	cr := results.CanaryResult{
		Name:        dc.name(),
		Class:       o.Class,
		Status:      results.StatusPass,
		DerivedFrom: dc.from,
		Transform:   dc.v.Transform,
		Relation:    string(dc.v.Relation),
		Site:        dc.v.Site,
		Variant:     dc.variantText(),
		Output:      o.Output,
		Message:     "holds: " + metamorphic.RelationText(dc.v.Relation),
	}
	if o.Class == grading.ClassOK {
		cr.Got = o.Score
	} else {
		cr.Error = grading.ErrorOf(o)
	}
	if !ok {
		cr.Status, cr.Message = results.StatusFail, why
	}
	return cr
}

// variantText is what a reader is shown of the variant: its output_text,
// or for a fixture-breaking one the field removed; cut.
func (dc derivedCanary) variantText() string {
	if dc.v.Relation == metamorphic.FixtureBreaking {
		return "item without " + dc.v.Site
	}
	var s struct {
		OutputText *string `json:"output_text"`
	}
	if json.Unmarshal(dc.v.Sample, &s) != nil || s.OutputText == nil {
		return cutText(string(dc.v.Sample), variantTextLimit)
	}
	return cutText(*s.OutputText, variantTextLimit)
}

func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// PlanDerived lists every canary the gate adds that a run of m over set
// (nil for the canaries only) may send: the built-in negatives, and every
// derived canary, for a model grader's plan of calls, which is
// made and printed before any call: the variants of each written canary as
// if it came out as it expects, and of each sampled labeled case as if its
// grade agreed with its label. A run sends at most these.
func PlanDerived(m *manifest.Manifest, set *dataset.Set, sh shard.Shard) []grading.Task {
	rows := 0
	if set != nil {
		rows = len(set.Cases)
	}
	var out []grading.Task
	for _, c := range BuiltinCanaries(m) {
		out = append(out, grading.Task{ID: c.Name, Sample: c.Sample, Item: c.Item})
	}
	d := newDeriver(m, rows, fieldsOf(m))
	if d == nil {
		return out
	}
	add := func(ds []derivedCanary) {
		for _, dc := range ds {
			out = append(out, grading.Task{ID: dc.name(), Sample: dc.v.Sample, Item: dc.v.Item})
		}
	}
	below := d.threshold - 1
	for _, c := range m.Canaries {
		score := d.threshold
		if c.Negative(d.threshold) {
			score = below
		}
		add(d.fromCanary(c, grading.Outcome{Class: grading.ClassOK, Score: &score}))
	}
	if set == nil {
		return out
	}
	count, index := max(sh.Count, 1), max(sh.Index, 1)
	for row, c := range set.Cases {
		if c.Sample == nil || c.Unreadable || shard.ShardOf(c.ID, count) != index || !d.candidate(c) {
			continue
		}
		d.cases[row] = grading.Task{ID: c.ID, Sample: c.Sample, Item: c.ItemForGrader()}
		score, status := d.threshold, results.StatusPass
		if *c.Label == 0 {
			score, status = below, results.StatusFail
		}
		add(d.fromCase(row, results.CaseResult{CaseID: c.ID, HumanScore: c.Label, Status: status}, grading.Outcome{Class: grading.ClassOK, Score: &score}))
	}
	return out
}

// CanaryVariants derives the variants of the written canaries alone, for
// the canary command, which grades no case and so places nothing among
// cases: the variants are graded after the canaries, each judged by its
// relation as in a run.
type CanaryVariants struct {
	d  *deriver
	vs []derivedCanary
}

// NewCanaryVariants returns the written canaries' variants of m, or nil
// when gate.metamorphic is switched off.
func NewCanaryVariants(m *manifest.Manifest) *CanaryVariants {
	d := newDeriver(m, 0, fieldsOf(m))
	if d == nil {
		return nil
	}
	return &CanaryVariants{d: d}
}

// RecordReads says whether canary c's grade must note the item keys it
// reads (its fixture-breaking variants remove each in turn).
func (cv *CanaryVariants) RecordReads(c manifest.Canary) bool {
	return cv != nil && cv.d.recordsReads(c)
}

// Tasks derives the variants of each written canary from its outcome
// (outcomes in the manifest's order) and returns them as tasks.
func (cv *CanaryVariants) Tasks(outcomes []grading.Outcome) []grading.Task {
	if cv == nil {
		return nil
	}
	cv.vs = nil
	for i, c := range cv.d.m.Canaries {
		cv.vs = append(cv.vs, cv.d.fromCanaryAt(i, c, outcomes[i])...)
	}
	tasks := make([]grading.Task, len(cv.vs))
	for k, dc := range cv.vs {
		tasks[k] = grading.Task{ID: dc.name(), Sample: dc.v.Sample, Item: dc.v.Item}
	}
	return tasks
}

// Results judges the variants Tasks returned from their outcomes, in the
// same order.
func (cv *CanaryVariants) Results(outcomes []grading.Outcome) []results.CanaryResult {
	out := make([]results.CanaryResult, len(cv.vs))
	for k, dc := range cv.vs {
		out[k] = dc.result(cv.d.threshold, outcomes[k])
	}
	return out
}

// Task is the variant named name as it was graded, for a traced replay.
func (cv *CanaryVariants) Task(name string) (grading.Task, bool) {
	if cv == nil {
		return grading.Task{}, false
	}
	for _, dc := range cv.vs {
		if dc.name() == name {
			return grading.Task{ID: name, Sample: dc.v.Sample, Item: dc.v.Item}, true
		}
	}
	return grading.Task{}, false
}
