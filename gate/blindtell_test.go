package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/blind"
	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/input"
)

// orderHonest grades as the order-summary example's grader.py does: raise
// on a corrupt fixture, 0 on a wrong or malformed answer, 1 on the right
// one.
func orderHonest(t grading.Task) grading.Outcome {
	var item map[string]any
	if err := json.Unmarshal(t.Item, &item); err != nil {
		return raised("ValueError", "item", 1)
	}
	status, okS := item["expected_status"].(string)
	currency, okC := item["expected_currency"].(string)
	total, okT := item["expected_total_cents"].(float64)
	if !okS || !okC || !okT || status == "" || currency == "" {
		return raised("ValueError", "corrupt fixture", 30)
	}
	var sample struct {
		OutputText *string `json:"output_text"`
	}
	if json.Unmarshal(t.Sample, &sample) != nil || sample.OutputText == nil {
		return scored(0)
	}
	var got map[string]any
	if json.Unmarshal([]byte(*sample.OutputText), &got) != nil || len(got) != 3 {
		return scored(0)
	}
	gt, isNum := got["total_cents"].(float64)
	if got["status"] != status || got["currency"] != currency || !isNum || gt != total {
		return scored(0)
	}
	return scored(1)
}

// itemKeys are an item's keys in the order written.
func itemKeys(raw json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		tok, _ := dec.Token()
		k, _ := tok.(string)
		keys = append(keys, k)
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return keys
		}
	}
	return keys
}

// idPrefix is an id without its trailing digits.
func idPrefix(id string) string {
	return strings.TrimRight(id, "0123456789")
}

// A grader that tells canaries from cases by what it receives, and cheats
// only on what looks like a case, fails a canary: the canaries are built on
// real rows. Each tell is one that canaries used to have: no dataset-only
// field, keys in sorted order, always the first row's slice, the first
// row's id shape whatever the slice, an id prefix another slice's cases
// have, an id number past the dataset's largest. The written canaries
// alone catch each (built-in and derived canaries off); the honest grader
// passes, over many placements. A tell marked open would be measured and
// logged, not held.
func TestBlindCanariesCannotBeToldApart(t *testing.T) {
	s, err := LoadSuite("../testdata/examples/order-summary/gradegate.yaml", input.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	set, err := s.loadCases()
	if err != nil {
		t.Fatal(err)
	}
	first := set.Cases[0]
	prefixes := map[string][]string{} // slice → its cases' id prefixes
	for _, c := range set.Cases {
		for _, sl := range c.Slices {
			if p := idPrefix(c.ID); !slices.Contains(prefixes[sl], p) {
				prefixes[sl] = append(prefixes[sl], p)
			}
		}
	}
	item := func(t grading.Task) map[string]any {
		var m map[string]any
		_ = json.Unmarshal(t.Item, &m)
		return m
	}
	sliceOf := func(t grading.Task) string {
		switch v := item(t)["slice"].(type) {
		case string:
			return v
		case []any:
			if len(v) > 0 {
				s, _ := v[0].(string)
				return s
			}
		}
		return ""
	}
	// Each tell says "a case" for what it takes to be one.
	// maxNum is the largest number the dataset's ids end in.
	maxNum := 0
	for _, c := range set.Cases {
		if n, err := strconv.Atoi(strings.TrimPrefix(c.ID, idPrefix(c.ID))); err == nil {
			maxNum = max(maxNum, n)
		}
	}
	tells := []struct {
		name string
		real func(grading.Task) bool
		// open: a tell shaping does not defend (the grader carries what it
		// knows of the dataset's ids); measured, not held.
		open bool
	}{
		{"id number within the dataset's", func(t grading.Task) bool {
			n, err := strconv.Atoi(strings.TrimPrefix(t.ID, idPrefix(t.ID)))
			return err == nil && n <= maxNum
		}, false},
		{"has a dataset-only field (request)", func(t grading.Task) bool { _, ok := item(t)["request"]; return ok }, false},
		{"keys not sorted", func(t grading.Task) bool { return !slices.IsSorted(itemKeys(t.Item)) }, false},
		{"slice is not the first row's", func(t grading.Task) bool { return sliceOf(t) != first.Slices[0] }, false},
		{"id not in the first row's shape", func(t grading.Task) bool { return idPrefix(t.ID) != idPrefix(first.ID) }, false},
		{"id prefix is its slice's", func(t grading.Task) bool {
			return slices.Contains(prefixes[sliceOf(t)], idPrefix(t.ID))
		}, false},
		{"has a family", func(t grading.Task) bool { _, ok := item(t)["family"]; return ok }, false},
	}
	canaryNames := map[string]bool{}
	for _, c := range s.Manifest.Canaries {
		canaryNames[c.Name] = true
	}
	m := *s.Manifest
	m.Gate.Metamorphic.Enabled = false
	m.Gate.BuiltinCanaries = manifest.Switch{Off: true, Reason: "the written canaries alone are tested here"}
	in := Inputs{Manifest: &m, FS: s.FS, Dataset: set}

	const seeds = 20
	for k := range uint64(seeds) {
		seed := k + 1
		res, err := Run(context.Background(), in, &itemRunner{grade: orderHonest}, Options{CanarySeed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != results.VerdictPass {
			t.Fatalf("seed %d: the honest grader holds: %s", seed, dump(res.Reasons))
		}
	}
	for _, tell := range tells {
		t.Run(tell.name, func(t *testing.T) {
			cheat := func(task grading.Task) grading.Outcome {
				if tell.real(task) {
					return scored(1)
				}
				return orderHonest(task)
			}
			// How often the tell takes a canary for a case, against cases.
			var canaryReal, canaries, caseReal, cases int
			for k := range uint64(seeds) {
				seed := k + 1
				r := &itemRunner{grade: cheat}
				res, err := Run(context.Background(), in, r, Options{CanarySeed: seed})
				if err != nil {
					t.Fatal(err)
				}
				failed := slices.ContainsFunc(res.Reasons, func(r results.Reason) bool {
					return r.Code == results.ReasonCanaryFailed && len(r.CaseIDs) == 1 && canaryNames[r.CaseIDs[0]]
				})
				if !tell.open && (res.Verdict != results.VerdictHold || !failed) {
					t.Fatalf("seed %d: the cheat passes every written canary: verdict %s, %s", seed, res.Verdict, dump(res.Reasons))
				}
				ids := map[string]bool{}
				for _, c := range set.Cases {
					ids[c.ID] = true
				}
				for _, call := range r.calls {
					for _, task := range call {
						if ids[task.ID] {
							cases++
							if tell.real(task) {
								caseReal++
							}
						} else {
							canaries++
							if tell.real(task) {
								canaryReal++
							}
						}
					}
				}
			}
			t.Logf("%s: %s of canaries, %s of cases look like cases", tell.name, share(canaryReal, canaries), share(caseReal, cases))
		})
	}
}

func share(n, of int) string {
	return fmt.Sprintf("%d/%d", n, of)
}

// A grader that gives full credit to any answer that is no JSON at all
// (without a "{" or a "[") passes the example's written canaries (none is
// a plain refusal) and, with derived
// canaries off, only the built-in negatives catch it; switched off, the
// report says so.
func TestBuiltinNegativesCatchFullCreditForNonJSON(t *testing.T) {
	s, err := LoadSuite("../testdata/examples/order-summary/gradegate.yaml", input.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	set, err := s.loadCases()
	if err != nil {
		t.Fatal(err)
	}
	lenient := func(task grading.Task) grading.Outcome {
		var sample struct {
			OutputText *string `json:"output_text"`
		}
		if json.Unmarshal(task.Sample, &sample) == nil && sample.OutputText != nil && !strings.ContainsAny(*sample.OutputText, "{[") {
			if o := orderHonest(task); o.Class != grading.ClassOK {
				return o // a corrupt fixture still raises
			}
			return scored(1)
		}
		return orderHonest(task)
	}
	m := *s.Manifest
	m.Gate.Metamorphic.Enabled = false
	res, err := Run(context.Background(), Inputs{Manifest: &m, FS: s.FS, Dataset: set}, &itemRunner{grade: lenient}, Options{CanarySeed: 9})
	if err != nil {
		t.Fatal(err)
	}
	var held []string
	for _, r := range res.Reasons {
		if r.Code == results.ReasonCanaryFailed {
			held = append(held, r.CaseIDs...)
		}
	}
	want := []string{blind.BuiltinRefusal, blind.BuiltinEmpty, blind.KnownIDRefusal, blind.KnownIDEmpty}
	if res.Verdict != results.VerdictHold || !slices.Equal(held, want) {
		t.Fatalf("verdict %s, canaries failed %v; want the built-in refusals and empty answers: %s", res.Verdict, held, dump(res.Reasons))
	}
	m.Gate.BuiltinCanaries = manifest.Switch{Off: true, Reason: "a classifier", Line: 90}
	res, err = Run(context.Background(), Inputs{Manifest: &m, FS: s.FS, Dataset: set}, &itemRunner{grade: lenient}, Options{CanarySeed: 9})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != results.VerdictPass || !slices.ContainsFunc(res.Warnings, func(w results.Warning) bool {
		return w.Code == "builtin_canaries_off" && strings.Contains(w.Message, "a classifier")
	}) {
		t.Fatalf("switched off: verdict %s, warnings %+v; want a pass that says they are off and why", res.Verdict, res.Warnings)
	}
}
