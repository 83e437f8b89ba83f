package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/verdict"
	"github.com/gradegate/gradegate/manifest"
)

// orderGrader grades {"total": N, "currency": C} answers against the item
// as Python graders of the order-summary kind do; swallow turns every
// problem into full credit (except Exception: return 1.0), lenient reads a
// missing expected_total as 5, raw compares the text itself.
type orderGrader struct{ swallow, lenient, raw bool }

func (g orderGrader) grade(t grading.Task) grading.Outcome {
	var s struct {
		OutputText string `json:"output_text"`
	}
	var item map[string]any
	_ = json.Unmarshal(t.Sample, &s)
	_ = json.Unmarshal(t.Item, &item)
	score, err := g.check(s.OutputText, item)
	var o grading.Outcome
	switch {
	case err != nil && g.swallow:
		o = scored(1)
	case err != nil:
		o = raised("KeyError", err.Error(), 9)
	default:
		o = scored(score)
	}
	if t.RecordReads {
		for _, k := range []string{"expected_total", "expected_currency"} {
			if _, ok := item[k]; ok {
				o.Reads = append(o.Reads, k)
			}
		}
	}
	return o
}

func (g orderGrader) check(text string, item map[string]any) (float64, error) {
	want, ok := item["expected_total"]
	if !ok {
		if !g.lenient {
			return 0, errors.New("'expected_total'")
		}
		want = 5.0
	}
	cur, ok := item["expected_currency"]
	if !ok {
		return 0, errors.New("'expected_currency'")
	}
	if g.raw {
		if text == fmt.Sprintf(`{"total":%v,"currency":%q}`, want, cur) {
			return 1, nil
		}
		return 0, nil
	}
	var ans map[string]any
	if err := json.Unmarshal([]byte(text), &ans); err != nil {
		if g.swallow {
			return 0, err
		}
		return 0, nil
	}
	if len(ans) != 2 {
		return 0, nil
	}
	total, isNum := ans["total"].(float64)
	if !isNum || total != want || ans["currency"] != cur {
		return 0, nil
	}
	return 1, nil
}

// metamorphicSuite is newSuite with order answers: a right and a wrong
// canary only, and labeled cases whose stored answers are right (1) or
// wrong (0).
func metamorphicSuite() suite {
	s := newSuite()
	item := json.RawMessage(`{"expected_total":5,"expected_currency":"USD"}`)
	s.m.Canaries = []manifest.Canary{
		{Name: "right", Sample: json.RawMessage(`{"output_text":"{\"total\":5,\"currency\":\"USD\"}"}`), Item: item, Expect: ptr(1.0)},
		{Name: "wrong", Sample: json.RawMessage(`{"output_text":"{\"total\":6,\"currency\":\"USD\"}"}`), Item: item, Expect: ptr(0.0)},
	}
	s.m.Gate = manifest.Gate{MinPassRate: 0.5, Aggregation: "row", MaxErrors: 0, MaxOmitted: 1,
		Metamorphic: manifest.Metamorphic{Enabled: true, Sample: 50, Invariance: manifest.InvarianceWarn},
		// What only derived canaries catch is tested here.
		BuiltinCanaries: manifest.Switch{Off: true, Reason: "derived canaries alone"}}
	for i := range s.set.Cases {
		c := &s.set.Cases[i]
		c.Slices, c.Family = nil, ""
		c.Item = json.RawMessage(fmt.Sprintf(`{"case_id":%q,"expected_total":5,"expected_currency":"USD"}`, c.ID))
		if c.Sample == nil {
			continue
		}
		total, label := 5, 1
		if i%3 == 2 {
			total, label = 7, 0
		}
		c.Sample = json.RawMessage(fmt.Sprintf(`{"output_text":"{\"total\":%d,\"currency\":\"USD\"}"}`, total))
		c.Label = ptr(label)
	}
	return s
}

func runMetamorphic(t *testing.T, s suite, g orderGrader) (*results.Results, *itemRunner) {
	t.Helper()
	r := &itemRunner{grade: g.grade}
	res, err := Run(context.Background(), s.inputs(), r, Options{CanarySeed: testSeed})
	if err != nil {
		t.Fatal(err)
	}
	return res, r
}

func TestDerivedCanariesHonestGrader(t *testing.T) {
	res, r := runMetamorphic(t, metamorphicSuite(), orderGrader{})
	if res.Verdict != results.VerdictPass {
		t.Fatalf("verdict %s: %s", res.Verdict, dump(res.Reasons))
	}
	mm := res.Metamorphic
	if mm == nil || mm.Variants == 0 || mm.Violations != 0 {
		t.Fatalf("metamorphic block %+v", mm)
	}
	// Two canaries and the eleven cases with a sample are bases.
	if mm.Bases != 13 {
		t.Errorf("bases = %d, want 13", mm.Bases)
	}
	var fromCase, fixture int
	for _, c := range res.Canaries {
		if c.DerivedFrom == "" {
			continue
		}
		if c.Transform == "" || c.Relation == "" {
			t.Errorf("derived canary %s without transform or relation", c.Name)
		}
		if strings.HasPrefix(c.DerivedFrom, "case ") {
			fromCase++
		}
		if c.Transform == manifest.TransformItemFieldRemoved {
			fixture++
		}
	}
	if fromCase == 0 || fixture != 2 {
		t.Errorf("%d variants of cases, %d fixture-breaking ones (want some, and 2: one per field the right canary read)", fromCase, fixture)
	}
	// Blind: every task a grader saw has an id shaped like the cases' and
	// the id in its item; an id repeats only as a derived canary's, which
	// keeps its base's, or as a canary's drawn just past the ids read so
	// far, which a later row then has.
	shape := regexp.MustCompile(`^case-\d\d+$`)
	for _, call := range r.calls {
		for _, task := range call {
			if !shape.MatchString(task.ID) {
				t.Fatalf("task id %q is not shaped like a case's", task.ID)
			}
			var item map[string]any
			if err := json.Unmarshal(task.Item, &item); err != nil || item["case_id"] != task.ID {
				t.Fatalf("task %s: item %s does not carry its id", task.ID, task.Item)
			}
		}
	}
}

func TestDerivedCanariesCatch(t *testing.T) {
	tests := []struct {
		name       string
		grader     orderGrader
		invariance string
		reason     string // the hold's code, or "" for a pass
		warning    string
		transform  string // named in the reason or warning
	}{
		{name: "except returns full credit", grader: orderGrader{swallow: true},
			reason: results.ReasonMetamorphicViolation, transform: manifest.TransformTruncated},
		{name: "a missing fixture field read with a default", grader: orderGrader{lenient: true},
			reason: results.ReasonMetamorphicViolation, transform: manifest.TransformItemFieldRemoved},
		{name: "raw text comparison warns", grader: orderGrader{raw: true},
			warning: verdict.WarnMetamorphicVariance, transform: manifest.TransformKeysReordered},
		{name: "raw text comparison holds under invariance hold", grader: orderGrader{raw: true}, invariance: manifest.InvarianceHold,
			reason: results.ReasonMetamorphicViolation, transform: manifest.TransformKeysReordered},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := metamorphicSuite()
			if tt.invariance != "" {
				s.m.Gate.Metamorphic.Invariance = tt.invariance
			}
			res, _ := runMetamorphic(t, s, tt.grader)
			for _, rs := range res.Reasons {
				if rs.Code == results.ReasonCanaryFailed {
					t.Errorf("a written canary failed: %s (only derived ones should catch this grader)", rs.Message)
				}
			}
			var msg string
			if tt.reason != "" {
				i := slices.IndexFunc(res.Reasons, func(r results.Reason) bool {
					return r.Code == tt.reason && strings.HasPrefix(r.Message, tt.transform+" ")
				})
				if res.Verdict != results.VerdictHold || i < 0 {
					t.Fatalf("verdict %s, reasons %s; want a hold with %s on %s", res.Verdict, dump(res.Reasons), tt.reason, tt.transform)
				}
				msg = res.Reasons[i].Message
			}
			if tt.warning != "" {
				i := slices.IndexFunc(res.Warnings, func(w results.Warning) bool {
					return w.Code == tt.warning && strings.HasPrefix(w.Message, tt.transform+" ")
				})
				if res.Verdict != results.VerdictPass || i < 0 {
					t.Fatalf("verdict %s, warnings %+v; want a pass warning %s on %s", res.Verdict, res.Warnings, tt.warning, tt.transform)
				}
				msg = res.Warnings[i].Message
			}
			if !strings.Contains(msg, "first: from ") || !strings.Contains(msg, " of ") {
				t.Errorf("message %q does not name the count and the first example", msg)
			}
		})
	}
}

func TestDerivedCanariesSwitchedOff(t *testing.T) {
	s := metamorphicSuite()
	s.m.Gate.Metamorphic.Off = []manifest.TransformOff{{Name: manifest.TransformTruncated, Reason: "the client repairs truncated JSON", Line: 40}}
	res, _ := runMetamorphic(t, s, orderGrader{swallow: true})
	for _, c := range res.Canaries {
		if c.Transform == manifest.TransformTruncated {
			t.Fatalf("a switched-off transform made %s", c.Name)
		}
	}
	if len(res.Metamorphic.Off) != 1 {
		t.Errorf("the report does not show the transform switched off: %+v", res.Metamorphic.Off)
	}
	// Other transforms still catch the grader.
	if res.Verdict != results.VerdictHold {
		t.Errorf("verdict %s; unbalanced braces and the refusal still break this grader", res.Verdict)
	}

	s = metamorphicSuite()
	s.m.Gate.Metamorphic.Enabled = false
	res, r := runMetamorphic(t, s, orderGrader{swallow: true})
	if res.Verdict != results.VerdictPass || res.Metamorphic.Enabled || res.Metamorphic.Variants != 0 {
		t.Errorf("switched off: verdict %s, report %+v", res.Verdict, res.Metamorphic)
	}
	for _, call := range r.calls {
		for _, task := range call {
			if task.RecordReads {
				t.Fatal("a task asked for its reads with gate.metamorphic off")
			}
		}
	}
}

// Under the batch contract every derived canary is graded alone, after the
// cases: a variant may rightly make grade_batch raise. The fixture-breaking
// ones are derived there too.
func TestDerivedCanariesBatchContract(t *testing.T) {
	s := metamorphicSuite()
	s.m.Grader.Contract = "batch"
	res, r := runMetamorphic(t, s, orderGrader{})
	if res.Verdict != results.VerdictPass {
		t.Fatalf("verdict %s: %s", res.Verdict, dump(res.Reasons))
	}
	alone, removed := 0, 0
	for _, c := range res.Canaries {
		if c.DerivedFrom != "" {
			if c.Placement == nil || !c.Placement.Alone {
				t.Errorf("%s was not graded alone", c.Name)
			}
			alone++
		}
		if c.Transform == manifest.TransformItemFieldRemoved {
			removed++
		}
	}
	// The positive canary's reads are recorded under this contract too.
	if removed == 0 {
		t.Error("no item_field_removed variant under the batch contract")
	}
	singles := 0
	for _, call := range r.calls {
		if len(call) == 1 {
			singles++
		}
	}
	if alone == 0 || singles < alone {
		t.Errorf("%d derived canaries, %d calls of one task", alone, singles)
	}
}
