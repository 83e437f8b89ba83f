package blind

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"

	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// A canary is built on a real row of the dataset, so that what the grader
// receives cannot be told from a case by its shape: the row's keys in the
// row's order, the fields only the dataset has (a request, a customer tier)
// with the row's values and types, the row's slice and family, an id drawn
// in the shape of the row's id; and, written over them, the fields the
// canary decides. The sample is the row's sample in the same way: its keys
// and order, with the canary's answer.

// The sample fields that carry the model's answer (dataset.AnswerFields):
// a row's are never kept beside a canary's answer, which would then be
// another one.

// poolSize bounds the rows kept as bases, overall and per slice a canary
// names: the memory of shaping does not grow with the dataset.
const (
	poolSize      = 16
	slicePoolSize = 8
)

// baseRow is one dataset row kept as a base of canaries.
type baseRow struct {
	id     string
	item   json.RawMessage // the item the grader receives
	sample json.RawMessage // nil when the row has none
	// failing: a human label says the row's answer fails.
	failing bool
}

// rowPool is a uniform sample (reservoir) of the rows read so far, overall
// and in each slice a written canary names.
type rowPool struct {
	rng     *rand.Rand
	all     reservoir
	bySlice map[string]*reservoir
}

type reservoir struct {
	seen int
	rows []baseRow
	size int
}

func (r *reservoir) add(rng *rand.Rand, row baseRow) {
	r.seen++
	if len(r.rows) < r.size {
		r.rows = append(r.rows, row)
		return
	}
	if k := rng.IntN(r.seen); k < r.size {
		r.rows[k] = row
	}
}

func (r *reservoir) pick(rng *rand.Rand) (baseRow, bool) {
	if r == nil || len(r.rows) == 0 {
		return baseRow{}, false
	}
	return r.rows[rng.IntN(len(r.rows))], true
}

func newRowPool(seed uint64, slices []string) *rowPool {
	p := &rowPool{rng: rand.New(rand.NewPCG(seed^0x5851f42d4c957f2d, seed)), all: reservoir{size: poolSize}, bySlice: map[string]*reservoir{}}
	for _, s := range slices {
		p.bySlice[s] = &reservoir{size: slicePoolSize}
	}
	return p
}

// add keeps row c as a possible base: a readable row, whatever its shard
// (a base is not graded as itself).
func (p *rowPool) add(c dataset.Case) {
	if c.Unreadable || c.ID == "" {
		return
	}
	row := baseRow{id: c.ID, item: c.ItemForGrader(), sample: c.Sample, failing: c.Label != nil && *c.Label == 0}
	p.all.add(p.rng, row)
	for _, s := range c.Slices {
		if r := p.bySlice[s]; r != nil {
			r.add(p.rng, row)
		}
	}
}

// pick draws a base: a row of slice when one was read, else any row.
func (p *rowPool) pick(slice string) (baseRow, bool) {
	if row, ok := p.bySlice[slice].pick(p.rng); ok && slice != "" {
		return row, true
	}
	return p.all.pick(p.rng)
}

// pickPassing draws a base among all rows, one no human label fails when
// a few draws find one.
func (p *rowPool) pickPassing() (baseRow, bool) {
	row, ok := p.all.pick(p.rng)
	for tries := 0; ok && row.failing && tries < 16; tries++ {
		row, _ = p.all.pick(p.rng)
	}
	return row, ok
}

// field is one key of a JSON object and its value as written.
type field struct {
	key string
	val json.RawMessage
}

// objectFields are the keys of a JSON object in the order written, with
// their values as written (spans of raw, not copies); false when raw is not
// one JSON object Python would read. A repeated key keeps its first place
// and its last value, as Python reads it. The dataset reader's scanner
// reads it in one pass: a Decoder that copied every value took 65 ms for a
// 7 MiB item, once for every derived canary built on it (580 of them took
// 37 s of a 36-row run).
func objectFields(raw json.RawMessage) ([]field, bool) {
	ms, ok := dataset.Members(raw)
	if !ok {
		return nil, false
	}
	out := make([]field, 0, len(ms))
	for _, m := range ms {
		if i := slices.IndexFunc(out, func(f field) bool { return f.key == m.Key }); i >= 0 {
			out[i].val = m.Val
			continue
		}
		out = append(out, field{m.Key, m.Val})
	}
	return out, true
}

func lookup(fs []field, key string) (json.RawMessage, bool) {
	for _, f := range fs {
		if f.key == key {
			return f.val, true
		}
	}
	return nil, false
}

// encodeObject writes fields as one compact JSON object, in order.
func encodeObject(fs []field) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.key)
		b.Write(k)
		b.WriteByte(':')
		if err := json.Compact(&b, f.val); err != nil {
			b.Write(f.val)
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// shaper builds canary items and samples on base rows.
type shaper struct {
	fields manifest.Fields
	hidden []string
	// canaryItemKeys are the item keys some written canary writes: a
	// canary that leaves one of them out does so on purpose (a corrupt
	// fixture), so the row's value is not carried over to it.
	canaryItemKeys []string
	// canarySampleKeys are likewise the sample keys canaries write, and the
	// answer fields.
	canarySampleKeys []string
	// rowFields: a base row's dataset-only item fields are carried over.
	// Not under a preprocessor, which may act on them (drop a row marked
	// skip, say): the canary would then test the preprocessor's rule on
	// another row's field, not the grader.
	rowFields bool
}

func newShaper(m *manifest.Manifest, f manifest.Fields) *shaper {
	s := &shaper{fields: f, hidden: m.Dataset.HiddenFields, canarySampleKeys: dataset.AnswerFields(), rowFields: m.Preprocess == nil}
	for _, c := range m.Canaries {
		if fs, ok := objectFields(c.Item); ok {
			for _, x := range fs {
				if !slices.Contains(s.canaryItemKeys, x.key) {
					s.canaryItemKeys = append(s.canaryItemKeys, x.key)
				}
			}
		}
		if fs, ok := objectFields(c.Sample); ok {
			for _, x := range fs {
				if !slices.Contains(s.canarySampleKeys, x.key) {
					s.canarySampleKeys = append(s.canarySampleKeys, x.key)
				}
			}
		}
	}
	return s
}

// canarySlice is the slice a written canary's item names (the first, when
// it names several); "" when none.
func canarySlice(item json.RawMessage, f manifest.Fields) string {
	fs, ok := objectFields(item)
	if !ok {
		return ""
	}
	v, ok := lookup(fs, f.Slice)
	if !ok {
		return ""
	}
	var one string
	if json.Unmarshal(v, &one) == nil {
		return one
	}
	var many []string
	if json.Unmarshal(v, &many) == nil && len(many) > 0 {
		return many[0]
	}
	return ""
}

// item is a written canary's item over base: base's keys in base's order,
// the canary's value where it writes one, the base's where only the
// dataset has the field (and for slice and family), the id field set to
// id; then the canary's own keys the base lacks. A key some canary writes
// and this one leaves out stays out. Never the label field or a hidden
// field. An item that is not an object is sent as written.
func (s *shaper) item(canary json.RawMessage, base *baseRow, id string) json.RawMessage {
	over := []field{}
	if len(canary) > 0 {
		fs, ok := objectFields(canary)
		if !ok {
			return canary
		}
		over = fs
	}
	var baseFields []field
	if base != nil {
		baseFields, _ = objectFields(base.item)
	}
	idVal, _ := json.Marshal(id)
	out := make([]field, 0, len(baseFields)+len(over)+1)
	if _, ok := lookup(baseFields, s.fields.ID); !ok {
		out = append(out, field{s.fields.ID, idVal})
	}
	for _, f := range baseFields {
		switch v, ok := lookup(over, f.key); {
		case f.key == s.fields.ID:
			out = append(out, field{f.key, idVal})
		case ok:
			out = append(out, field{f.key, v})
		case f.key == s.fields.Slice || f.key == s.fields.Family || s.rowFields && !slices.Contains(s.canaryItemKeys, f.key):
			out = append(out, f)
		}
	}
	for _, f := range over {
		if f.key == s.fields.ID || f.key == s.fields.Label || slices.Contains(s.hidden, f.key) {
			continue
		}
		if _, ok := lookup(out, f.key); !ok {
			out = append(out, f)
		}
	}
	return encodeObject(out)
}

// sample is a written canary's sample over base's: base's keys in base's
// order, the canary's value where it writes one, the base's where no
// canary writes the key and it is no answer field; then the canary's own
// keys. A sample that is not an object, or a base without a sample, gives
// the canary's as written.
func (s *shaper) sample(canary json.RawMessage, base *baseRow) json.RawMessage {
	if base == nil || base.sample == nil {
		return canary
	}
	over, ok := objectFields(canary)
	if !ok {
		return canary
	}
	baseFields, ok := objectFields(base.sample)
	if !ok {
		return canary
	}
	out := make([]field, 0, len(baseFields)+len(over))
	for _, f := range baseFields {
		if v, ok := lookup(over, f.key); ok {
			out = append(out, field{f.key, v})
		} else if !slices.Contains(s.canarySampleKeys, f.key) {
			out = append(out, f)
		}
	}
	for _, f := range over {
		if _, ok := lookup(out, f.key); !ok {
			out = append(out, f)
		}
	}
	return encodeObject(out)
}

// withID is an item with its id field set to id where it stands (first
// when it has none); an item that is not an object is sent as written.
func (s *shaper) withID(item json.RawMessage, id string) json.RawMessage {
	fs, ok := objectFields(item)
	if !ok {
		return item
	}
	idVal, _ := json.Marshal(id)
	if i := slices.IndexFunc(fs, func(f field) bool { return f.key == s.fields.ID }); i >= 0 {
		fs[i].val = idVal
	} else {
		fs = append([]field{{s.fields.ID, idVal}}, fs...)
	}
	return encodeObject(fs)
}

// answerSample is base's sample with its answer replaced by text: the
// first answer field's place holds output_text, the other answer fields
// are gone, the rest stays as the row has it.
func answerSample(base json.RawMessage, text string) json.RawMessage {
	t, _ := json.Marshal(text)
	fs, ok := objectFields(base)
	if !ok {
		return encodeObject([]field{{"output_text", t}})
	}
	out := make([]field, 0, len(fs)+1)
	placed := false
	for _, f := range fs {
		if !dataset.IsAnswerField(f.key) {
			out = append(out, f)
			continue
		}
		if !placed {
			out = append(out, field{"output_text", t})
			placed = true
		}
	}
	if !placed {
		out = append(out, field{"output_text", t})
	}
	return encodeObject(out)
}
