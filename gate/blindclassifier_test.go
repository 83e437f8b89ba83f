package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// A classifier trained on what the grader receives cannot tell canaries
// from cases: every task of a run (cases, written, built-in and derived
// canaries) is turned into the features a grader could compute from its
// bytes and from the tasks its process saw before, labelled canary or case
// (a task that is not exactly a row's is a canary), and a depth-limited
// decision tree with class-balanced weights is trained on the runs of half
// the seeds and tested on the other half. Its balanced accuracy must not
// beat chance by more than three standard deviations of a classifier that
// knows nothing, at the test set's size.
//
// Features: the id's prefix, width and number, whether its number is past
// the largest of the ids seen before in the run, whether the id was seen
// before; the slice and family values; the item's keys in order with the
// types of their values, their count, the id key's position, the lengths
// of their values; the same of the sample.
//
// Left out, because the gate cannot hide them by design (the author of the
// suite wrote them): the item fields some written canary writes (their
// values, types, lengths, and whether they are there: a corrupt-fixture
// canary leaves one out), the sample's answer fields (output_text,
// output_json, output_tools, choices, extracted_output) and the sample
// fields a written canary writes.
//
// On the order-summary example the id's number, and whether it is past
// the largest seen, are left out too: its ids are dense (every prefix
// numbers its rows 001, 002, … without a gap, and half the rows are the
// only one of their prefix), so an id the dataset does not have is past
// its prefix's last number by necessity. A grader that uses that carries
// the dataset's ids: the negatives on real case ids are what catch it
// (TestKnownIDNegativesCatchAGraderThatKnowsTheIDs). The generated suite,
// whose ids have gaps, keeps every feature.
//
// The assertion is over runs without derived canaries (gate.metamorphic
// off): the written canaries, the built-in negatives and those on real
// case ids, among the cases. A derived canary is by design a task the
// grader received before (a case, a canary) with one thing changed, its
// id and item included, and its bases are chosen by a hash of the case
// ids from the first part of a large dataset: a grader that remembers
// what it received knows it for a variant. With derived canaries on, the
// same classifier's accuracy is logged, not held to chance.
func TestBlindCanariesAClassifierCannotTell(t *testing.T) {
	seeds := 24
	if testing.Short() {
		seeds = 12
	}
	for _, derived := range []bool{false, true} {
		name := "written and built-in"
		if derived {
			name = "with derived"
		}
		t.Run("order-summary/"+name, func(t *testing.T) {
			s, set := orderExample(t)
			m := *s.Manifest
			m.Gate.Metamorphic.Enabled = derived
			classifyRuns(t, Inputs{Manifest: &m, FS: s.FS, Dataset: set}, orderHonest, seeds, !derived, "id number", "id past the largest seen")
		})
		t.Run("generated/"+name, func(t *testing.T) {
			s := generatedSuite(300, 12)
			s.m.Gate.Metamorphic.Enabled = derived
			classifyRuns(t, s.inputs(), orderGrader{}.grade, seeds, !derived)
		})
	}
}

// generatedSuite is rows rows over four slices (one row in five in two),
// with ids "ord-NNNNN" numbered with gaps in file order, items of mixed
// field types, samples with fields beside the answer, and canaries written
// canaries of expected_total and expected_currency (orderGrader's), some
// naming a slice.
func generatedSuite(rows, canaries int) suite {
	s := newSuite()
	rng := rand.New(rand.NewPCG(5, 6))
	slicesOf := []string{"billing", "shipping", "returns", "account"}
	nums := rng.Perm(rows * 4 / 3)[:rows]
	sort.Ints(nums)
	set := &dataset.Set{Intended: rows}
	words := strings.Fields("order refund parcel late broken card address invoice discount total please help again today")
	for i, n := range nums {
		id := fmt.Sprintf("ord-%05d", n+1)
		sl := []string{slicesOf[rng.IntN(4)]}
		if rng.IntN(5) == 0 {
			sl = append(sl, slicesOf[(slices.Index(slicesOf, sl[0])+1)%4])
		}
		slice, _ := json.Marshal(sl[0])
		if len(sl) > 1 {
			slice, _ = json.Marshal(sl)
		}
		var req []string
		for range 3 + rng.IntN(20) {
			req = append(req, words[rng.IntN(len(words))])
		}
		total, cur := 100+rng.IntN(9900), []string{"USD", "EUR", "JPY"}[rng.IntN(3)]
		note := "null"
		if rng.IntN(3) == 0 {
			note = fmt.Sprintf("%q", words[rng.IntN(len(words))])
		}
		item := fmt.Sprintf(`{"case_id":%q,"slice":%s,"family":"fam-%d","request":%q,"qty":%d,"price":%.2f,"gift":%v,"tags":["t%d","t%d"],"customer":{"tier":"gold","since":%d},"note":%s,"expected_total":%d,"expected_currency":%q}`,
			id, slice, rng.IntN(12), strings.Join(req, " "), 1+rng.IntN(9), rng.Float64()*100, rng.IntN(2) == 0, rng.IntN(9), rng.IntN(9), 2010+rng.IntN(15), note, total, cur)
		got, label := total, 1
		if rng.IntN(7) == 0 {
			got, label = total+1, 0
		}
		sample := fmt.Sprintf(`{"model":"m-%d","output_text":%q,"latency_ms":%d,"finish_reason":"stop"}`,
			rng.IntN(3), fmt.Sprintf(`{"total":%d,"currency":%q}`, got, cur), 200+rng.IntN(3000))
		set.Cases = append(set.Cases, dataset.Case{ID: id, Slices: sl, Family: fmt.Sprintf("fam-%d", rng.IntN(12)),
			Item: json.RawMessage(item), Sample: json.RawMessage(sample), SampleSHA256: sha256Hex(sample), Label: ptr(label),
			File: "evals/os/cases.jsonl", Line: i + 1})
	}
	s.set = set
	s.m.Canaries = nil
	for k := range canaries {
		item := map[string]any{"expected_total": 2599, "expected_currency": "USD"}
		if k%3 == 0 {
			item["slice"] = slicesOf[k%4]
		}
		c := manifest.Canary{Name: fmt.Sprintf("canary-%02d", k)}
		switch k % 4 {
		case 0:
			c.Sample, c.Expect = json.RawMessage(`{"output_text":"{\"total\":2599,\"currency\":\"USD\"}"}`), ptr(1.0)
		case 1:
			c.Sample, c.Expect = json.RawMessage(`{"output_text":"{\"total\":2598,\"currency\":\"USD\"}"}`), ptr(0.0)
		case 2:
			c.Sample, c.Expect = json.RawMessage(`{"output_text":"{\"total\":2599,\"currency\":\"EUR\"}"}`), ptr(0.0)
		case 3:
			delete(item, "expected_total")
			c.Sample, c.ExpectError = json.RawMessage(`{"output_text":"{\"total\":2599,\"currency\":\"USD\"}"}`), true
		}
		c.Item, _ = json.Marshal(item)
		s.m.Canaries = append(s.m.Canaries, c)
	}
	s.m.Gate = manifest.Gate{MinPassRate: 0.5, Aggregation: "row",
		Metamorphic: manifest.Metamorphic{Enabled: true, Sample: 50, Invariance: manifest.InvarianceWarn}}
	return s
}

// observation is one task as the grader received it, as features, and
// whether it was a canary.
type observation struct {
	num    []float64 // numeric features
	cat    []string  // categorical features
	canary bool
}

var numNames = []string{"id width", "id number", "id past the largest seen", "id seen before", "item keys", "id key position", "item lengths", "sample keys", "sample lengths"}
var catNames = []string{"id prefix", "slice", "family", "item keys and types", "sample keys and types"}

// classifyRuns grades in with grade under seeds seeds, collects what the
// grader received, trains on the first half of the seeds and tests on the
// second half.
func classifyRuns(t *testing.T, in Inputs, grade func(grading.Task) grading.Outcome, seeds int, hold bool, leftOut ...string) {
	t.Helper()
	keys := caseKeys(in.Dataset)
	idField := orDefault(in.Manifest.Dataset.Fields.ID, "case_id")
	written := map[string]bool{} // item keys written canaries write
	sampleWritten := map[string]bool{"output_text": true, "output_json": true, "output_tools": true, "choices": true, "extracted_output": true}
	for _, c := range in.Manifest.Canaries {
		for _, k := range itemKeys(c.Item) {
			written[k] = true
		}
		for _, k := range itemKeys(c.Sample) {
			sampleWritten[k] = true
		}
	}
	// Slice and family are the row's, or name a slice the dataset has:
	// they stay features.
	delete(written, orDefault(in.Manifest.Dataset.Fields.Slice, "slice"))
	delete(written, orDefault(in.Manifest.Dataset.Fields.Family, "family"))
	var train, test []observation
	for k := range seeds {
		r := &itemRunner{grade: grade}
		res, err := Run(context.Background(), in, r, Options{CanarySeed: uint64(k + 1)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != results.VerdictPass {
			t.Fatalf("seed %d: the honest grader holds: %s", k+1, dump(res.Reasons))
		}
		seen := map[string]bool{}
		largest := map[string]int{}
		for _, call := range r.calls {
			for _, task := range call {
				o := observe(task, idField, written, sampleWritten, seen, largest)
				o.canary = !keys[caseKey(task)]
				for f, name := range numNames {
					if slices.Contains(leftOut, name) {
						o.num[f] = 0
					}
				}
				if k < seeds/2 {
					train = append(train, o)
				} else {
					test = append(test, o)
				}
			}
		}
	}
	tree := fitTree(train, 4)
	ba, n1, n0 := balancedAccuracy(tree, test)
	// Balanced accuracy of a guess that ignores the task: mean 1/2,
	// variance (p(1-p)/n1 + p(1-p)/n0)/4 at most, p(1-p) <= 1/4.
	sd := math.Sqrt(0.25/float64(n1)+0.25/float64(n0)) / 2
	limit := 0.5 + 3*sd
	t.Logf("decision tree (depth 4): balanced accuracy %.3f on %d canaries and %d cases (chance 0.5, limit %.3f); trained on %d; left out: %v", ba, n1, n0, limit, len(train), leftOut)
	for f := range numNames {
		stump := fitTree(only(train, f, -1), 1)
		b, _, _ := balancedAccuracy(stump, only(test, f, -1))
		t.Logf("  %-26s alone: %.3f", numNames[f], b)
	}
	for f := range catNames {
		stump := fitTree(only(train, -1, f), 1)
		b, _, _ := balancedAccuracy(stump, only(test, -1, f))
		t.Logf("  %-26s alone: %.3f", catNames[f], b)
	}
	if n1 == 0 || n0 == 0 {
		t.Fatalf("the test runs have %d canaries and %d cases", n1, n0)
	}
	if hold && ba > limit {
		t.Errorf("a decision tree tells canaries from cases with balanced accuracy %.3f > %.3f", ba, limit)
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// only keeps one feature of each observation (-1: none of that kind).
func only(obs []observation, num, cat int) []observation {
	out := make([]observation, len(obs))
	for i, o := range obs {
		out[i].canary = o.canary
		if num >= 0 {
			out[i].num = []float64{o.num[num]}
		}
		if cat >= 0 {
			out[i].cat = []string{o.cat[cat]}
		}
	}
	return out
}

// observe is task's features; seen and largest are what the process saw
// before (ids, and the largest number per id prefix), updated.
func observe(task grading.Task, idField string, written, sampleWritten map[string]bool, seen map[string]bool, largest map[string]int) observation {
	prefix := idPrefix(task.ID)
	n, hasNum := idNumber(task.ID)
	past := 0.0
	if l, ok := largest[prefix]; ok && hasNum && n > l {
		past = 1
	}
	again := 0.0
	if seen[task.ID] {
		again = 1
	}
	seen[task.ID] = true
	if hasNum {
		largest[prefix] = max(largest[prefix], n)
	}
	item := fieldsOf(task.Item)
	var slice, family, itemSig string
	var itemKeys, idPos, itemLen float64
	for i, f := range item {
		switch {
		case f.key == "slice":
			slice = string(f.val)
		case f.key == "family":
			family = string(f.val)
		}
		if f.key == idField {
			idPos = float64(i)
		}
		if written[f.key] {
			continue
		}
		itemSig += f.key + ":" + jsonType(f.val) + ","
		itemKeys++
		if f.key != idField {
			itemLen += float64(len(f.val))
		}
	}
	var sampleSig string
	var sampleKeys, sampleLen float64
	for _, f := range fieldsOf(task.Sample) {
		if sampleWritten[f.key] {
			continue
		}
		sampleSig += f.key + ":" + jsonType(f.val) + ","
		sampleKeys++
		sampleLen += float64(len(f.val))
	}
	return observation{
		num: []float64{float64(len(task.ID) - len(prefix)), float64(n), past, again, itemKeys, idPos, itemLen, sampleKeys, sampleLen},
		cat: []string{prefix, slice, family, itemSig, sampleSig},
	}
}

type jsonField struct {
	key string
	val json.RawMessage
}

// fieldsOf is a JSON object's fields in order; nil for anything else.
func fieldsOf(raw json.RawMessage) []jsonField {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var out []jsonField
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return out
		}
		out = append(out, jsonField{k, v})
	}
	return out
}

// jsonType is the Python type name of a JSON value.
func jsonType(v json.RawMessage) string {
	switch t := bytes.TrimSpace(v); {
	case len(t) == 0:
		return "?"
	case t[0] == '"':
		return "str"
	case t[0] == '{':
		return "dict"
	case t[0] == '[':
		return "list"
	case t[0] == 't' || t[0] == 'f':
		return "bool"
	case t[0] == 'n':
		return "NoneType"
	case bytes.ContainsAny(t, ".eE"):
		return "float"
	default:
		return "int"
	}
}

// tree is a decision tree over observations: a categorical feature is
// first turned into the share of canaries its value had in training
// (smoothed; an unseen value gets the overall share).
type tree struct {
	enc   []map[string]float64
	prior float64
	root  *node
}

type node struct {
	feature   int // index into the encoded vector; -1 for a leaf
	threshold float64
	left      *node // value <= threshold
	right     *node
	canary    bool // a leaf's prediction
}

func (tr *tree) encode(o observation) []float64 {
	x := slices.Clone(o.num)
	for f, v := range o.cat {
		share, ok := tr.enc[f][v]
		if !ok {
			share = tr.prior
		}
		x = append(x, share)
	}
	return x
}

func (tr *tree) predict(o observation) bool {
	x := tr.encode(o)
	n := tr.root
	for n.feature >= 0 {
		if x[n.feature] <= n.threshold {
			n = n.left
		} else {
			n = n.right
		}
	}
	return n.canary
}

// fitTree grows a tree of at most depth levels, each split the one that
// most lowers the class-weighted Gini impurity (each class weighs half),
// so that it aims at balanced accuracy.
func fitTree(obs []observation, depth int) *tree {
	tr := &tree{}
	var n1 int
	for _, o := range obs {
		if o.canary {
			n1++
		}
	}
	n0 := len(obs) - n1
	tr.prior = float64(n1) / float64(max(len(obs), 1))
	if len(obs) > 0 {
		tr.enc = make([]map[string]float64, len(obs[0].cat))
		for f := range tr.enc {
			count, canaries := map[string]float64{}, map[string]float64{}
			for _, o := range obs {
				count[o.cat[f]]++
				if o.canary {
					canaries[o.cat[f]]++
				}
			}
			tr.enc[f] = map[string]float64{}
			for v, c := range count {
				tr.enc[f][v] = (canaries[v] + 2*tr.prior) / (c + 2)
			}
		}
	}
	w1, w0 := 0.5/float64(max(n1, 1)), 0.5/float64(max(n0, 1))
	xs := make([][]float64, len(obs))
	ys := make([]bool, len(obs))
	for i, o := range obs {
		xs[i], ys[i] = tr.encode(o), o.canary
	}
	idx := make([]int, len(obs))
	for i := range idx {
		idx[i] = i
	}
	tr.root = grow(xs, ys, idx, w1, w0, depth)
	return tr
}

func grow(xs [][]float64, ys []bool, idx []int, w1, w0 float64, depth int) *node {
	var a, b float64 // weights of canaries and cases here
	for _, i := range idx {
		if ys[i] {
			a += w1
		} else {
			b += w0
		}
	}
	leaf := &node{feature: -1, canary: a > b}
	if depth == 0 || a == 0 || b == 0 || len(xs) == 0 {
		return leaf
	}
	gini := func(a, b float64) float64 {
		if a+b == 0 {
			return 0
		}
		return (a + b) * (1 - (a*a+b*b)/((a+b)*(a+b)))
	}
	best, bestF, bestT := gini(a, b)-1e-12, -1, 0.0
	for f := range xs[0] {
		order := slices.Clone(idx)
		slices.SortFunc(order, func(i, j int) int { return cmpFloat(xs[i][f], xs[j][f]) })
		var la, lb float64
		for k := 0; k < len(order)-1; k++ {
			if ys[order[k]] {
				la += w1
			} else {
				lb += w0
			}
			v, next := xs[order[k]][f], xs[order[k+1]][f]
			if v == next {
				continue
			}
			if g := gini(la, lb) + gini(a-la, b-lb); g < best {
				best, bestF, bestT = g, f, (v+next)/2
			}
		}
	}
	if bestF < 0 {
		return leaf
	}
	var left, right []int
	for _, i := range idx {
		if xs[i][bestF] <= bestT {
			left = append(left, i)
		} else {
			right = append(right, i)
		}
	}
	return &node{feature: bestF, threshold: bestT, left: grow(xs, ys, left, w1, w0, depth-1), right: grow(xs, ys, right, w1, w0, depth-1)}
}

func cmpFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// balancedAccuracy is the mean of the tree's recall on canaries and on
// cases, with the counts of each.
func balancedAccuracy(tr *tree, obs []observation) (float64, int, int) {
	var tp, n1, tn, n0 int
	for _, o := range obs {
		p := tr.predict(o)
		if o.canary {
			n1++
			if p {
				tp++
			}
		} else {
			n0++
			if !p {
				tn++
			}
		}
	}
	return (float64(tp)/float64(max(n1, 1)) + float64(tn)/float64(max(n0, 1))) / 2, n1, n0
}
