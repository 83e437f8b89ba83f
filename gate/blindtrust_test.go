package gate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gradegate/gradegate/gate/blind"
	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
	"github.com/gradegate/gradegate/manifest/input"
)

// orderExample is the order-summary example's suite and its rows.
func orderExample(t *testing.T) (*Suite, *dataset.Set) {
	t.Helper()
	s, err := LoadSuite("../testdata/examples/order-summary/gradegate.yaml", input.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	set, err := s.loadCases()
	if err != nil {
		t.Fatal(err)
	}
	return s, set
}

// idNumber is the number an id ends in; false when it ends in none.
func idNumber(id string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(id, idPrefix(id)))
	return n, err == nil
}

// caseKey names a task exactly as a case of set is sent: a task with
// another key is a canary.
func caseKey(t grading.Task) string {
	return t.ID + "\x00" + string(t.Item) + "\x00" + string(t.Sample)
}

func caseKeys(set *dataset.Set) map[string]bool {
	keys := map[string]bool{}
	for _, c := range set.Cases {
		if c.Sample != nil {
			keys[caseKey(grading.Task{ID: c.ID, Item: c.ItemForGrader(), Sample: c.Sample})] = true
		}
	}
	return keys
}

// heldBy lists the canaries a run's canary_failed reasons name.
func heldBy(res *results.Results) []string {
	var out []string
	for _, r := range res.Reasons {
		if r.Code == results.ReasonCanaryFailed {
			out = append(out, r.CaseIDs...)
		}
	}
	return out
}

// Under the sample contract a canary's id number is drawn from the range
// the rows read so far have in its shape, or just past it: a grader that
// knows the largest number the dataset's ids end in (4 on the example) and
// cheats on every id at or below it fails a written canary, where it
// passed them all when the digits were drawn over the id's whole width.
// No canary takes the id of a row sent before it, nor another canary's.
func TestBlindCanaryIDsInTheDatasetsRange(t *testing.T) {
	s, set := orderExample(t)
	maxNum := 0
	for _, c := range set.Cases {
		if n, ok := idNumber(c.ID); ok {
			maxNum = max(maxNum, n)
		}
	}
	written := map[string]bool{}
	for _, c := range s.Manifest.Canaries {
		written[c.Name] = true
	}
	m := *s.Manifest
	m.Gate.Metamorphic.Enabled = false
	m.Gate.BuiltinCanaries = manifest.Switch{Off: true, Reason: "the written canaries' ids alone are tested here"}
	in := Inputs{Manifest: &m, FS: s.FS, Dataset: set}
	keys := caseKeys(set)
	inRange := func(id string) bool {
		n, ok := idNumber(id)
		return ok && n <= maxNum
	}
	cheat := func(task grading.Task) grading.Outcome {
		if inRange(task.ID) {
			return scored(1)
		}
		return orderHonest(task)
	}
	const seeds = 20
	var within, canaries, held int
	for k := range uint64(seeds) {
		seed := k + 1
		r, _ := honestRun(t, in, seed)
		sent := map[string]bool{} // ids sent so far
		canaryIDs := map[string]bool{}
		for _, call := range r.calls {
			for _, task := range call {
				if keys[caseKey(task)] {
					sent[task.ID] = true
					continue
				}
				if sent[task.ID] || canaryIDs[task.ID] {
					t.Fatalf("seed %d: canary id %q is a row's sent before it, or another canary's", seed, task.ID)
				}
				if !slices.ContainsFunc(set.Cases, func(c dataset.Case) bool {
					return idPrefix(c.ID) == idPrefix(task.ID) && len(c.ID) == len(task.ID)
				}) {
					t.Fatalf("seed %d: canary id %q has no case's prefix and width", seed, task.ID)
				}
				canaryIDs[task.ID] = true
				canaries++
				if inRange(task.ID) {
					within++
				}
			}
		}
		res, err := Run(context.Background(), in, &itemRunner{grade: cheat}, Options{CanarySeed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(heldBy(res), func(name string) bool { return written[name] }) {
			held++
		}
	}
	t.Logf("%d/%d canary ids end in a number at or below the dataset's largest (%d); the cheat on those ids failed a written canary on %d/%d seeds", within, canaries, maxNum, held, seeds)
	if within*2 < canaries {
		t.Errorf("only %d/%d canary ids fall within the dataset's numbers", within, canaries)
	}
	if held != seeds {
		t.Errorf("a grader cheating on ids up to %d passed every written canary on %d of %d seeds", maxNum, seeds-held, seeds)
	}
}

// exampleIDHashes are the sha256 hashes of the order-summary example's case
// ids, as a grader written by someone who has the dataset would carry them.
func exampleIDHashes(set *dataset.Set) map[string]bool {
	out := map[string]bool{}
	for _, c := range set.Cases {
		sum := sha256.Sum256([]byte(c.ID))
		out[hex.EncodeToString(sum[:])] = true
	}
	return out
}

// A grader that carries the hashes of the example's case ids and is
// lenient only on ids it knows (1.0, or the row's own label, which the
// author has too) passes every canary whose id is drawn; the built-in
// negatives on a real case's id and item hold it, on every placement, and
// the honest grader passes. Each goes before its case or after it at
// random, so a grader lenient on the second sight of an id is held too
// (unless every one went first). Under the batch contract each is a batch
// of its own, on a case's id.
func TestKnownIDNegativesCatchAGraderThatKnowsTheIDs(t *testing.T) {
	s, set := orderExample(t)
	hashes := exampleIDHashes(set)
	labels := map[string]float64{}
	for _, c := range set.Cases {
		if c.Label != nil {
			labels[c.ID] = float64(*c.Label)
		}
	}
	known := func(id string) bool {
		sum := sha256.Sum256([]byte(id))
		return hashes[hex.EncodeToString(sum[:])]
	}
	cheats := []struct {
		name  string
		grade func(grading.Task) grading.Outcome
	}{
		{"full credit on known ids", func(task grading.Task) grading.Outcome {
			if known(task.ID) {
				return scored(1)
			}
			return orderHonest(task)
		}},
		{"a known id's own label", func(task grading.Task) grading.Outcome {
			if l, ok := labels[task.ID]; ok && known(task.ID) {
				return scored(l)
			}
			return orderHonest(task)
		}},
	}
	knownNames := []string{blind.KnownIDRefusal, blind.KnownIDEmpty, blind.KnownIDTruncated}
	const seeds = 12
	// Under the sample contract: how many went before their case, and
	// after; and on how many seeds a grader lenient on the second sight of
	// an id (the first was a canary, it reckons) was held.
	var totalBefore, totalAfter, secondHeld, firstHeld int
	// sight is a grader lenient on the first sight of an id (a case, it
	// reckons, since a canary comes after its case) or on the second (the
	// first was a canary).
	sight := func(lenientOnSecond bool) func(grading.Task) grading.Outcome {
		var mu sync.Mutex
		seen := map[string]bool{}
		return func(task grading.Task) grading.Outcome {
			mu.Lock()
			again := seen[task.ID]
			seen[task.ID] = true
			mu.Unlock()
			if again == lenientOnSecond {
				return scored(1)
			}
			return orderHonest(task)
		}
	}
	for _, contract := range []string{"sample", "batch"} {
		t.Run(contract, func(t *testing.T) {
			m := *s.Manifest
			m.Grader.Contract = contract
			// Derived canaries, whose ids are drawn, play no part here.
			m.Gate.Metamorphic.Enabled = false
			in := Inputs{Manifest: &m, FS: s.FS, Dataset: set}
			keys := caseKeys(set)
			for k := range uint64(seeds) {
				seed := k + 1
				r, res := honestRun(t, in, seed)
				var onKnown int
				for _, c := range res.Canaries {
					if slices.Contains(knownNames, c.Name) && c.BuiltIn && c.Status == results.StatusPass {
						onKnown++
					}
				}
				if onKnown != len(knownNames) {
					t.Fatalf("seed %d: %d known-id negatives passed, want %d: %s", seed, onKnown, len(knownNames), dump(res.Canaries))
				}
				// What the grader received: each known-id negative on a
				// real case's id and item (sent before that case under the
				// sample contract, alone under the batch contract).
				var onCases int
				sent := map[string]bool{}
				var before, after int
				for _, call := range r.calls {
					for _, task := range call {
						if keys[caseKey(task)] {
							sent[task.ID] = true
							continue
						}
						if !slices.ContainsFunc(set.Cases, func(c dataset.Case) bool {
							return c.ID == task.ID && string(c.ItemForGrader()) == string(task.Item)
						}) {
							continue
						}
						onCases++
						if contract == "batch" && len(call) != 1 {
							t.Errorf("seed %d: a known-id negative rides in a batch of %d", seed, len(call))
						}
						if sent[task.ID] {
							after++
						} else {
							before++
						}
					}
				}
				if onCases != len(knownNames) {
					t.Errorf("seed %d: %d canaries on a case's id and item, want %d", seed, onCases, len(knownNames))
				}
				if contract == "sample" {
					totalBefore, totalAfter = totalBefore+before, totalAfter+after
				}
				if contract == "sample" {
					for _, lenientOnSecond := range []bool{true, false} {
						res, err := Run(context.Background(), in, &itemRunner{grade: sight(lenientOnSecond)}, Options{CanarySeed: seed})
						if err != nil {
							t.Fatal(err)
						}
						// Lenient on a second sight, only a known-id negative
						// sent after its case can hold it. Lenient on a first
						// sight, any canary on an id not seen before can: a
						// known-id negative before its case, or a written one
						// (whose id may be a later row's, which the known-id
						// negative then meets a second time).
						held := heldBy(res)
						switch {
						case lenientOnSecond && slices.ContainsFunc(held, func(n string) bool { return slices.Contains(knownNames, n) }):
							secondHeld++
						case !lenientOnSecond && res.Verdict == results.VerdictHold && len(held) > 0:
							firstHeld++
						}
					}
				}
				for _, cheat := range cheats {
					res, err := Run(context.Background(), in, &itemRunner{grade: cheat.grade}, Options{CanarySeed: seed})
					if err != nil {
						t.Fatal(err)
					}
					held := heldBy(res)
					if res.Verdict != results.VerdictHold || !slices.ContainsFunc(held, func(n string) bool { return slices.Contains(knownNames, n) }) {
						t.Fatalf("seed %d: %s: verdict %s, canaries failed %v; want a known-id negative to hold it", seed, cheat.name, res.Verdict, held)
					}
				}
			}
		})
	}
	t.Logf("sample contract: %d known-id negatives before their case, %d after; a grader lenient on an id's second sight held on %d/%d seeds, on its first sight %d/%d",
		totalBefore, totalAfter, secondHeld, seeds, firstHeld, seeds)
	// At least one goes before its case and one after, in every run: each
	// cheat is held by a known-id negative on every seed.
	if totalBefore < seeds || totalAfter < seeds || secondHeld != seeds || firstHeld != seeds {
		t.Errorf("known-id negatives: %d before their case, %d after; the second-sight cheat held on %d/%d seeds, the first-sight one on %d/%d",
			totalBefore, totalAfter, secondHeld, seeds, firstHeld, seeds)
	}
	// gate.builtin_canaries switched off, there are none, and the report
	// warns.
	m := *s.Manifest
	m.Gate.BuiltinCanaries = manifest.Switch{Off: true, Reason: "a free-text grader", Line: 90}
	res, err := Run(context.Background(), Inputs{Manifest: &m, FS: s.FS, Dataset: set}, &itemRunner{grade: orderHonest}, Options{CanarySeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(res.Canaries, func(c results.CanaryResult) bool { return c.BuiltIn }) ||
		!slices.ContainsFunc(res.Warnings, func(w results.Warning) bool { return w.Code == "builtin_canaries_off" }) {
		t.Errorf("switched off: canaries %s, warnings %+v", dump(res.Canaries), res.Warnings)
	}
}

// honestRun runs in with the order-summary grader as written, placing the
// canaries by seed, and wants a pass: the runner records what it was sent.
func honestRun(t *testing.T, in Inputs, seed uint64) (*itemRunner, *results.Results) {
	t.Helper()
	r := &itemRunner{grade: orderHonest}
	res, err := Run(context.Background(), in, r, Options{CanarySeed: seed})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != results.VerdictPass {
		t.Fatalf("seed %d: the honest grader holds: %s", seed, dump(res.Reasons))
	}
	return r, res
}
