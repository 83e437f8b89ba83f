package blind

import (
	"cmp"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/gradegate/gradegate/canary/metamorphic"
	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// Canaries makes canaries travel exactly like cases: an item of the
// dataset's shape (an id in the dataset's id field shaped like its ids, and
// the slice and family fields where the dataset has them), sent at random
// positions among the cases, through the same stream, workers and batches.
// Nothing in the request tells a canary from a case.
//
// Under the batch contract a canary that expects an error is graded alone,
// as a batch of one, after the cases: the contract makes a batch fail as a
// whole when grade_batch raises, so inside a batch its raise would become
// every neighbour's error and the neighbours' errors its own.
//
// A nil *Canaries places none.
type Canaries struct {
	m      *manifest.Manifest
	fields manifest.Fields
	seed   uint64
	rng    *rand.Rand
	// cs are the written canaries, then the built-in ones (BuiltinCanaries),
	// then from index known the built-in ones on a real case's id
	// (KnownIDCanaries); canary index i < len(cs) is cs[i].
	cs    []manifest.Canary
	known int
	after []int // per canary: the row it is sent after; -1 alone
	order []int // blind canaries by position
	next  int
	// ahead are the known-id canaries sent before their case, by
	// position: each just before the first row at or past its position,
	// on that row's id and item (Ahead). The others are in order, built
	// when due on a row read before.
	ahead     []int
	nextAhead int
	template  *dataset.Case
	ids       []string
	// tasks are the canaries as sent, built once (a replay sends the same).
	tasks []*grading.Task
	// pool holds the rows canaries are built on; shape builds them. shape
	// is nil for a model grader, whose judge sees only its prompt.
	pool  *rowPool
	shape *shaper
	// last is the last readable row read (when hasLast): a canary sent in
	// the stream is built on it.
	last    baseRow
	hasLast bool
	// seen says whether the dataset has a row with this id among those
	// read so far; nil when the source cannot tell.
	Seen     func(string) bool
	outcomes []grading.Outcome
	got      []bool
	// der derives canaries from the written ones and from sampled labeled
	// cases (gate.metamorphic); derived holds them, canary index
	// len(m.Canaries)+k being derived[k]. nil when switched off.
	der     *deriver
	derived []derivedCanary
	// idRanges are the number ranges of the ids read so far, which a
	// canary's id is drawn from under the sample contract.
	idRanges idRanges
	rows     int // dataset rows expected
	read     int // dataset rows read so far
	batch    bool
}

// New places the canaries of m among a dataset of about rows rows, drawing
// every position and id from seed; nil when m has no canary.
func New(m *manifest.Manifest, rows int, seed uint64) *Canaries {
	if len(m.Canaries) == 0 {
		return nil
	}
	builtin := BuiltinCanaries(m)
	cs := append(slices.Clip(m.Canaries), builtin...)
	known := len(cs)
	// A model part's prompt, a model-backed grader's calls and a
	// preprocessor's rules act on the row's own fields: there the built-in
	// negatives carry the written item (see Task), and a negative on a
	// real row's item would not be one the gate knows must fail.
	if len(builtin) > 0 && len(m.Grader.Multi.Models()) == 0 && !m.Grader.ModelBacked && m.Preprocess == nil {
		cs = append(cs, KnownIDCanaries(m)...)
	}
	b := &Canaries{
		known: known,
		m:     m, seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		fields:   fieldsOf(m),
		cs:       cs,
		after:    make([]int, len(cs)),
		ids:      make([]string, len(cs)),
		tasks:    make([]*grading.Task, len(cs)),
		outcomes: make([]grading.Outcome, len(cs)),
		got:      make([]bool, len(cs)),
		rows:     rows,
		batch:    m.Grader.Contract == "batch",
		idRanges: idRanges{},
	}
	b.der = newDeriver(m, rows, b.fields)
	if m.Grader.Judge == nil {
		b.shape = newShaper(m, b.fields)
		var named []string
		for _, c := range m.Canaries {
			if s := canarySlice(c.Item, b.fields); s != "" && !slices.Contains(named, s) {
				named = append(named, s)
			}
		}
		b.pool = newRowPool(seed, named)
	}
	// The known-id canaries' positions come from a stream of their own, so
	// the other canaries' placements under a seed are what they were.
	aheadRNG := rand.New(rand.NewPCG(seed^0x2545f4914f6cdd1d, seed))
	for i, c := range cs {
		// A built-in negative may rightly make the grader raise, which
		// would fail a whole batch; and an aggregate grader's batch is the
		// dataset's cases and nothing else: its metrics are over them, so
		// every canary is a batch of its own.
		if ((c.ExpectError || i >= len(m.Canaries)) && m.Grader.Contract == "batch") || m.Grader.Aggregate() {
			b.after[i] = -1
			continue
		}
		if i >= known {
			// Before its case or after it, at random: a grader cannot be
			// lenient on the first sight of an id it knows, nor on the
			// second.
			b.after[i] = 1 + aheadRNG.IntN(max(rows, 1))
			if aheadRNG.IntN(2) == 0 {
				b.ahead = append(b.ahead, i)
			} else {
				b.order = append(b.order, i)
			}
			continue
		}
		// After row 1 at the earliest: the first row gives the id its shape.
		b.after[i] = 1 + b.rng.IntN(max(rows, 1))
		b.order = append(b.order, i)
	}
	b.splitKnown(aheadRNG)
	slices.SortStableFunc(b.order, func(x, y int) int { return b.after[x] - b.after[y] })
	slices.SortStableFunc(b.ahead, func(x, y int) int { return b.after[x] - b.after[y] })
	return b
}

// splitKnown makes sure that, of two or more known-id canaries sent among
// the cases, at least one goes before its case and one after: a grader
// lenient on the first sight of an id it knows then fails one, and so
// does a grader lenient on the second sight, in every run, not in most.
func (b *Canaries) splitKnown(rng *rand.Rand) {
	var after []int
	for _, i := range b.order {
		if i >= b.known {
			after = append(after, i)
		}
	}
	switch {
	case len(after)+len(b.ahead) < 2:
	case len(b.ahead) == 0:
		i := after[rng.IntN(len(after))]
		b.order = slices.DeleteFunc(b.order, func(x int) bool { return x == i })
		b.ahead = append(b.ahead, i)
	case len(after) == 0:
		k := rng.IntN(len(b.ahead))
		b.order = append(b.order, b.ahead[k])
		b.ahead = slices.Delete(b.ahead, k, k+1)
	}
	// One that goes before its case waits for a row no human label fails;
	// drawn among the last rows it could find none left and go after the
	// last row instead (a second sight): it is drawn in the first three
	// quarters.
	if limit := max(b.rows*3/4, 1); len(after)+len(b.ahead) >= 2 {
		for _, i := range b.ahead {
			if b.after[i] > limit {
				b.after[i] = 1 + rng.IntN(limit)
			}
		}
	}
}

// fieldsOf are the dataset's id, slice, family and label fields, with
// their defaults.
func fieldsOf(m *manifest.Manifest) manifest.Fields {
	f := m.Dataset.Fields
	return manifest.Fields{ID: cmpOr(f.ID, "case_id"), Slice: cmpOr(f.Slice, "slice"), Family: cmpOr(f.Family, "family"),
		Label: cmpOr(f.Label, "human_score")}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// observe sees each dataset row as it is read; the first is the template
// of the canaries' items.
func (b *Canaries) Observe(c dataset.Case) {
	if b == nil {
		return
	}
	b.read++
	if !c.Unreadable && c.ID != "" {
		b.idRanges.add(c.ID)
	}
	if b.pool != nil {
		b.pool.add(c)
		if !c.Unreadable && c.ID != "" {
			b.last = baseRow{id: c.ID, item: c.ItemForGrader(), sample: c.Sample, failing: c.Label != nil && *c.Label == 0}
			b.hasLast = true
		}
	}
	if b.template == nil {
		t := c
		b.template = &t
	}
}

// due returns the next canary to send once rows dataset rows are read, or,
// at the end of the dataset, any blind canary still unsent.
func (b *Canaries) Due(rows int, end bool) (grading.Task, int, bool) {
	if b == nil {
		return grading.Task{}, 0, false
	}
	if b.next >= len(b.order) {
		if end && b.nextAhead < len(b.ahead) {
			// Fewer rows than expected: on a row read, after the last one.
			i := b.ahead[b.nextAhead]
			b.nextAhead++
			b.after[i] = rows
			return b.Task(i), i, true
		}
		return grading.Task{}, 0, false
	}
	i := b.order[b.next]
	if !end && b.after[i] > rows {
		return grading.Task{}, 0, false
	}
	b.next++
	if end {
		b.after[i] = rows // fewer rows than expected: after the last one
		return b.Task(i), i, true
	}
	if !b.hasLast {
		return b.Task(i), i, true
	}
	last := b.last
	return b.task(i, &last), i, true
}

// Ahead returns the known-id canary to send just before row c, the
// rows-th read, when one is due: built on c's id and item, with an answer
// the gate knows must fail. (A row whose human label fails defers it to
// the next.) The caller sends it, then c's own task (when c
// is graded here). One per row; a row that cannot be read carries none.
func (b *Canaries) Ahead(rows int, c dataset.Case) (grading.Task, int, bool) {
	// Not on a row a human label fails: a grader that carries the
	// dataset's labels and answers a known id with its label would pass
	// the canary there.
	if b == nil || b.nextAhead >= len(b.ahead) || c.Unreadable || c.ID == "" || c.Label != nil && *c.Label == 0 {
		return grading.Task{}, 0, false
	}
	i := b.ahead[b.nextAhead]
	if b.after[i] > rows {
		return grading.Task{}, 0, false
	}
	b.nextAhead++
	b.after[i] = rows - 1
	t := b.knownTask(i, &baseRow{id: c.ID, item: c.ItemForGrader(), sample: c.Sample})
	b.tasks[i] = &t
	return t, i, true
}

// knownTask is known-id canary i on base: base's id and item as the case
// carries them, base's sample with the canary's answer in place of the
// row's. Without a base (no row was read) it is built like the other
// built-in negatives, on an id of its own.
func (b *Canaries) knownTask(i int, base *baseRow) grading.Task {
	c := b.cs[i]
	if base == nil {
		id := b.fakeID("")
		b.ids[i] = id
		return grading.Task{ID: id, Sample: c.Sample, Item: b.item(c.Item, id)}
	}
	b.ids[i] = base.id
	return grading.Task{ID: base.id, Sample: answerSample(base.sample, outputText(c.Sample)), Item: base.item}
}

// Alone lists the canaries graded as batches of one that have no outcome
// yet. Recording one may place its derived variants, alone too: the caller
// asks again until none is left.
func (b *Canaries) Alone() []int {
	var out []int
	for i, a := range b.after {
		if a == -1 && !b.got[i] {
			out = append(out, i)
		}
	}
	return out
}

// Record keeps canary i's outcome, and places the variants it derives.
func (b *Canaries) Record(i int, o grading.Outcome) {
	b.outcomes[i] = o
	b.got[i] = true
	if i < len(b.m.Canaries) {
		// Variants are of the canary as the grader received it.
		c := b.m.Canaries[i]
		if t := b.tasks[i]; t != nil && b.shape != nil {
			c.Sample, c.Item = t.Sample, t.Item
		}
		b.place(b.der.fromCanaryAt(i, c, o))
	}
}

// place adds derived canaries, each sent after a random row still to be
// read, like a written canary; under the batch contract each is graded
// alone after the cases (a variant may rightly make the grader raise,
// which would fail a whole batch).
func (b *Canaries) place(ds []derivedCanary) {
	for _, dc := range ds {
		i := len(b.cs) + len(b.derived)
		b.derived = append(b.derived, dc)
		b.ids = append(b.ids, "")
		b.tasks = append(b.tasks, nil)
		b.outcomes = append(b.outcomes, grading.Outcome{})
		b.got = append(b.got, false)
		after := -1
		if !b.batch {
			after = b.read + 1 + b.rng.IntN(max(b.rows-b.read, 1))
		}
		b.after = append(b.after, after)
		if after < 0 {
			continue
		}
		rest := b.order[b.next:]
		k, _ := slices.BinarySearchFunc(rest, after, func(x, a int) int {
			if b.after[x] <= a {
				return -1
			}
			return 1
		})
		b.order = slices.Insert(b.order, b.next+k, i)
	}
}

// CaseBase makes a row's task a base of derived canaries when the sample
// picks it; its variants are derived once it is graded (CaseGraded).
func (b *Canaries) CaseBase(row int, c dataset.Case, t grading.Task) {
	if b != nil && b.der.candidate(c) {
		b.der.cases[row] = t
	}
}

// CaseGraded derives the variants of a graded base row.
func (b *Canaries) CaseGraded(row int, c results.CaseResult, o grading.Outcome) {
	if b != nil && b.der != nil {
		b.place(b.der.fromCase(row, c, o))
	}
}

// Unsent lists the canaries placed in the stream but not sent when it
// ended: variants of bases graded last. They are graded after it, in one
// call to the same runner.
func (b *Canaries) Unsent() []int {
	if b == nil {
		return nil
	}
	out := slices.Clone(b.order[b.next:])
	b.next = len(b.order)
	out = append(out, b.ahead[b.nextAhead:]...)
	b.nextAhead = len(b.ahead)
	for _, i := range out {
		b.after[i] = b.read
	}
	return out
}

// Outcome is canary i's outcome, once Record has kept it.
func (b *Canaries) Outcome(i int) grading.Outcome { return b.outcomes[i] }

// Task is canary i as the grader receives it: built once, on a dataset
// row drawn at the time (from the canary's own slice when its item names
// one), so a replay sends the same.
func (b *Canaries) Task(i int) grading.Task {
	return b.task(i, nil)
}

// task is Task, built on current when it is set and the canary names no
// slice: the row just read, when the canary is sent in the stream. Every
// row is then as likely a base as any other, as every row is as likely
// the row a canary follows; a base drawn from the rows read so far would
// favour the first ones, and their slices, families and ids.
func (b *Canaries) task(i int, current *baseRow) grading.Task {
	if t := b.tasks[i]; t != nil {
		return *t
	}
	if i >= len(b.cs) && b.shape != nil && !b.batch {
		// A derived canary is its base as the grader received it (a
		// case, or a canary) with one thing changed: under the sample
		// contract it keeps the base's id too. A fresh id would have to
		// be found for every variant, many more than a dataset's ids
		// leave free in their range, and past it they would stand out;
		// the item it shares with its base is there either way.
		dc := b.derived[i-len(b.cs)]
		if id, ok := dc.baseItem.idOf(dc.v.Item, b.fields.ID); ok {
			b.ids[i] = id
			t := grading.Task{ID: id, Sample: dc.v.Sample, Item: dc.v.Item}
			b.tasks[i] = &t
			return t
		}
	}
	if i >= b.known && i < len(b.cs) {
		base := current
		if (base == nil || base.failing) && b.pool != nil {
			base = nil
			if row, ok := b.pool.pickPassing(); ok {
				base = &row
			}
		}
		t := b.knownTask(i, base)
		b.tasks[i] = &t
		return t
	}
	var base *baseRow
	if b.pool != nil {
		slice := ""
		if i < len(b.m.Canaries) {
			slice = canarySlice(b.m.Canaries[i].Item, b.fields)
		}
		if slice == "" && current != nil {
			base = current
		} else if row, ok := b.pool.pick(slice); ok {
			base = &row
		}
	}
	shape := ""
	if base != nil {
		shape = base.id
	}
	id := b.fakeID(shape)
	b.ids[i] = id
	var t grading.Task
	switch {
	case i >= len(b.cs):
		dc := b.derived[i-len(b.cs)]
		t = grading.Task{ID: id, Sample: dc.v.Sample, Item: b.item(withoutKey(dc.v.Item, b.fields.ID), id)}
		if b.shape != nil {
			t.Item = b.shape.withID(dc.v.Item, id)
		}
	case i >= len(b.m.Canaries):
		c := b.cs[i]
		t = grading.Task{ID: id, Sample: c.Sample, Item: b.item(c.Item, id)}
		// A model part's prompt, or a model-backed grader's calls through
		// ctx, would read the row's fields, which the plan of calls made
		// before the run and a recorded judge cache cannot know: their
		// built-in negatives carry the written item. Under a
		// preprocessor, which may act on a row's own fields (drop a row
		// marked skip), the written item over the row's shape.
		if base != nil && len(b.m.Grader.Multi.Models()) == 0 && !b.m.Grader.ModelBacked {
			t.Item = b.shape.withID(base.item, id)
			if b.m.Preprocess != nil {
				t.Item = b.shape.item(c.Item, base, id)
			}
			if base.sample != nil {
				t.Sample = answerSample(base.sample, outputText(c.Sample))
			}
		}
	default:
		c := b.m.Canaries[i]
		t = grading.Task{ID: id, Sample: c.Sample, Item: b.item(c.Item, id), RecordReads: b.der.recordsReads(c)}
		if b.shape != nil {
			t.Item, t.Sample = b.shape.item(c.Item, base, id), b.shape.sample(c.Sample, base)
		}
	}
	b.tasks[i] = &t
	return t
}

// DerivedTask is the derived canary named name (as its result names it) as
// the grader received it, the same id included, for a replay; false when no
// derived canary has that name.
func (b *Canaries) DerivedTask(name string) (grading.Task, bool) {
	for k, dc := range b.derived {
		if dc.name() != name {
			continue
		}
		return b.Task(len(b.cs) + k), true
	}
	return grading.Task{}, false
}

// Name is canary i's name as the reports give it.
func (b *Canaries) Name(i int) string {
	if i >= len(b.cs) {
		return b.derived[i-len(b.cs)].name()
	}
	return b.cs[i].Name
}

// fakeID is an id shaped like shape (a row's id; the first row's when
// ""). Under the sample contract its number is drawn from the range the
// rows read so far have in that shape, or just past it (rangeID): a grader
// that knows how far the dataset's id numbers go cannot tell a canary by
// its number. Otherwise (under the batch contract, or for an id whose
// range is not known) its digits are replaced by
// random ones (ids are mostly a fixed prefix and a number), or, in an id
// without digits, its letters; everything else kept. An id a row read so
// far has, or another canary has, is drawn again: a canary that shared a
// case's id would give itself away (and, under the batch contract, make
// its batch ambiguous). After a few draws in a crowded id space a random
// digit is added, which stays shaped like the dataset's ids as far as it
// can.
func (b *Canaries) fakeID(shape string) string {
	taken := func(id string) bool {
		return slices.Contains(b.ids, id) || (b.Seen != nil && b.Seen(id))
	}
	if !b.batch {
		if shape == "" && b.template != nil {
			shape = b.template.ID
		}
		if id, ok := b.rangeID(shape, taken); ok {
			return id
		}
	}
	id := b.drawID(shape, "")
	for tries := 0; taken(id); tries++ {
		extra := ""
		if tries >= 16 {
			extra = strings.Repeat("0", 1+(tries-16)/8) // redrawn like any digit
		}
		id = b.drawID(shape, extra)
	}
	return id
}

// minIDDigits is the fewest random digits a canary's id is drawn with:
// one in a million that it is any one later row's.
const minIDDigits = 6

// countDigits counts the digits of s.
func countDigits(s string) int {
	n := 0
	for _, ch := range s {
		if ch >= '0' && ch <= '9' {
			n++
		}
	}
	return n
}

// drawID is one draw of fakeID, with extra appended to the shape.
func (b *Canaries) drawID(shape, extra string) string {
	if shape == "" {
		shape = "case-00000"
		if b.template != nil && b.template.ID != "" {
			shape = b.template.ID
		}
	}
	shape += extra
	// Under the batch contract a canary's id must not be a row's read
	// later, which the stream cannot know yet: grade_batch needs its
	// case_ids unique. An id of a few digits ("c3") draws from too few to
	// miss the rest of a small dataset, so it gets at least minIDDigits.
	// (A sample grader sees one id at a time: the id keeps the row's shape.)
	if n := countDigits(shape); b.batch && n < minIDDigits {
		shape += strings.Repeat("0", minIDDigits-n)
	}
	out := []byte(shape)
	digits := strings.ContainsAny(shape, "0123456789")
	for k, ch := range out {
		switch {
		case ch >= '0' && ch <= '9':
			out[k] = byte('0' + b.rng.IntN(10))
		case digits:
		case ch >= 'a' && ch <= 'z':
			out[k] = byte('a' + b.rng.IntN(26))
		case ch >= 'A' && ch <= 'Z':
			out[k] = byte('A' + b.rng.IntN(26))
		}
	}
	return string(out)
}

// item is the canary's item with the dataset's id field, and the slice and
// family fields of the template row where the dataset has them and the
// canary does not; without the label field and the hidden fields, like a
// case's.
func (b *Canaries) item(raw json.RawMessage, id string) json.RawMessage {
	fields := map[string]json.RawMessage{}
	if len(raw) > 0 && json.Unmarshal(raw, &fields) != nil {
		return raw // not an object: sent as written
	}
	set := func(k string, v any) {
		if _, ok := fields[k]; ok {
			return
		}
		if data, err := json.Marshal(v); err == nil {
			fields[k] = data
		}
	}
	// What a case's item never carries, a canary's does not either.
	delete(fields, b.fields.Label)
	for _, h := range b.m.Dataset.HiddenFields {
		delete(fields, h)
	}
	set(b.fields.ID, id)
	if t := b.template; t != nil {
		switch len(t.Slices) {
		case 0:
		case 1:
			set(b.fields.Slice, t.Slices[0])
		default:
			set(b.fields.Slice, t.Slices)
		}
		if t.Family != "" {
			set(b.fields.Family, t.Family)
		}
	}
	out, err := json.Marshal(fields)
	if err != nil {
		return raw
	}
	return out
}

// results judges every canary from its outcome, with its placement.
func (b *Canaries) Results() []results.CanaryResult {
	out := make([]results.CanaryResult, 0, len(b.cs)+len(b.derived))
	for i, c := range b.cs {
		var cr results.CanaryResult
		switch {
		case i < len(b.m.Canaries):
			cr = JudgeCanary(c, b.m.Grader.PassThreshold, b.outcomes[i])
		case i >= b.known:
			cr = JudgeBuiltin(c, b.m.Grader.PassThreshold, b.outcomes[i])
			cr.Message = knownIDMessage(cr, b.ids[i])
		default:
			cr = JudgeBuiltin(c, b.m.Grader.PassThreshold, b.outcomes[i])
		}
		p := results.CanaryPlacement{Seed: b.seed, AfterRow: b.after[i]}
		if b.after[i] < 0 {
			p.AfterRow, p.Alone = 0, true
		}
		cr.Placement = &p
		out = append(out, cr)
	}
	// A derived canary is sent once its base's grade is back, so where it
	// travelled depends on timing: only "alone" is recorded, which does
	// not.
	ks := make([]int, len(b.derived))
	for k := range ks {
		ks[k] = k
	}
	slices.SortFunc(ks, func(x, y int) int {
		return cmp.Compare(b.derived[x].order[0], b.derived[y].order[0])*2 + cmp.Compare(b.derived[x].order[1], b.derived[y].order[1])
	})
	for _, k := range ks {
		dc := b.derived[k]
		i := len(b.cs) + k
		cr := dc.result(b.m.Grader.PassThreshold, b.outcomes[i])
		if b.after[i] < 0 {
			cr.Placement = &results.CanaryPlacement{Seed: b.seed, Alone: true}
		}
		out = append(out, cr)
	}
	return out
}

// The built-in canaries: negatives the gate writes itself, so that a
// grader that passes any answer is caught whatever canaries a suite has.
const (
	BuiltinRefusal = "builtin-refusal"
	BuiltinEmpty   = "builtin-empty-answer"
	// RefusalAnswer is the built-in refusal's answer.
	RefusalAnswer = "I can't help with that."
)

// BuiltinCanaries are the built-in negatives of m: a plain refusal and an
// empty answer, each of which must score below pass_threshold (or make
// the grader raise). In a run each is built on a real row: the row's item
// with an id of its own and the row's sample with this answer in place of
// the row's. Written here they carry the first positive canary's item,
// for a grading without rows (the canary command). None when
// gate.builtin_canaries is switched off, or for a model grader, whose
// derived refusal and empty_output variants are the same check.
func BuiltinCanaries(m *manifest.Manifest) []manifest.Canary {
	if m.Gate.BuiltinCanaries.Off || m.Grader.Judge != nil {
		return nil
	}
	var item json.RawMessage
	for _, c := range m.Canaries {
		if c.Positive(m.Grader.PassThreshold) {
			item = c.Item
			break
		}
	}
	mk := func(name, text string) manifest.Canary {
		t, _ := json.Marshal(text)
		return manifest.Canary{Name: name, Sample: json.RawMessage(`{"output_text":` + string(t) + `}`), Item: item}
	}
	return []manifest.Canary{mk(BuiltinRefusal, RefusalAnswer), mk(BuiltinEmpty, "")}
}

// JudgeBuiltin judges a built-in canary's outcome: it holds when the
// answer did not pass.
func JudgeBuiltin(c manifest.Canary, threshold float64, o grading.Outcome) results.CanaryResult {
	ok, why := metamorphic.Check(metamorphic.Breaking, threshold, 0, metamorphic.Outcome{}, metamorphic.Outcome{Class: string(o.Class), Score: o.Score})
	cr := results.CanaryResult{
		Name:     c.Name,
		BuiltIn:  true,
		Class:    o.Class,
		Status:   results.StatusPass,
		Relation: string(metamorphic.Breaking),
		Variant:  outputText(c.Sample),
		Output:   o.Output,
		Message:  "holds: a refusal or an empty answer does not pass",
	}
	if o.Class == grading.ClassOK {
		cr.Got = o.Score
	} else {
		cr.Error = grading.ErrorOf(o)
	}
	if o.Omitted != "" {
		cr.Status, cr.Message = results.StatusFail, "the preprocessor dropped the canary's row ("+o.Omitted+"), so the grader never saw it; a canary must reach the grader"
		return cr
	}
	if !ok {
		cr.Status, cr.Message = results.StatusFail, "the answer "+strconvQuote(outputText(c.Sample))+" "+why
	}
	return cr
}

func strconvQuote(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// JudgeCanary judges one canary's outcome.
func JudgeCanary(c manifest.Canary, threshold float64, o grading.Outcome) results.CanaryResult {
	res := grading.EvaluateCanary(c, threshold, o)
	cr := results.CanaryResult{
		Name:        c.Name,
		Expect:      c.Expect,
		ExpectError: c.ExpectError,
		Class:       o.Class,
		Status:      res.Status,
		Message:     res.Message,
		Output:      o.Output,
		File:        c.File,
		Line:        c.Line,
	}
	if o.Class == grading.ClassOK {
		cr.Got = o.Score
	} else {
		cr.Error = grading.ErrorOf(o)
	}
	return cr
}
