package verdict

import (
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/gate/stats"
	"github.com/gradegate/gradegate/manifest"
)

func lowerBound(g *manifest.Gate) {
	g.Confidence = manifest.Confidence{Level: 0.95, Rule: manifest.RuleLowerBound}
}

func codes[T results.Reason | results.Warning](xs []T) []string {
	out := []string{}
	for _, x := range xs {
		switch v := any(x).(type) {
		case results.Reason:
			out = append(out, v.Code)
		case results.Warning:
			out = append(out, v.Code)
		}
	}
	return out
}

func findSlice(t *testing.T, v Verdict, name string) results.SliceResult {
	t.Helper()
	for _, s := range v.Slices {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no slice %q in %s", name, dump(v.Slices))
	return results.SliceResult{}
}

func TestDecideIntervals(t *testing.T) {
	g := gateWith(func(g *manifest.Gate) {
		g.MinPassRate = 0.5
		g.Slices = []manifest.SliceRule{mandatory("must", 0.5, 0)}
	})
	cases := cat(rows("p", results.StatusPass, 4, in("must"), label(1)), rows("f", results.StatusFail, 1, in("must"), label(1)),
		rows("fp", results.StatusPass, 1, in("must"), label(0)), rows("tn", results.StatusFail, 2, in("must"), label(0)))
	v := Decide(g, Evidence{Cases: cases, Canaries: passingCanaries()})
	s := findSlice(t, v, "must")
	if want := stats.Wilson(5, 8, 0.95).Round(); s.CI == nil || *s.CI != want {
		t.Errorf("slice ci = %v, want %v", s.CI, want)
	}
	if v.Overall.CI == nil || *v.Overall.CI != stats.Wilson(5, 8, 0.95).Round() {
		t.Errorf("overall ci = %v", v.Overall.CI)
	}
	c := s.Confusion
	if c == nil || c.FalsePass+c.TrueFail != 3 || c.FalseFail+c.TruePass != 5 {
		t.Fatalf("confusion = %+v; want 3 cases labelled 0 and 5 labelled 1", c)
	}
	if want := stats.Wilson(1, 3, 0.95).Round(); len(c.FalsePassCI) != 2 || c.FalsePassCI[0] != want.Lo || c.FalsePassCI[1] != want.Hi {
		t.Errorf("false pass ci = %v, want %v", c.FalsePassCI, want)
	}
	if want := stats.Wilson(1, 5, 0.95).Round(); len(c.FalseFailCI) != 2 || c.FalseFailCI[0] != want.Lo || c.FalseFailCI[1] != want.Hi {
		t.Errorf("false fail ci = %v, want %v", c.FalseFailCI, want)
	}
	if v.Confidence != (manifest.Confidence{Level: 0.95, Rule: "point"}) {
		t.Errorf("confidence = %+v, want the defaults", v.Confidence)
	}

	// At another level, and per family: each family is one trial.
	g.Confidence.Level = 0.99
	g.Aggregation = "family"
	fams := cat(rows("a", results.StatusPass, 3, fam("A")), rows("b", results.StatusPass, 1, fam("B")), rows("b2", results.StatusFail, 1, fam("B")), rows("c", results.StatusFail, 2, fam("C")))
	v = Decide(g, Evidence{Cases: fams, Canaries: passingCanaries()})
	if want := stats.WilsonRate(0.5, 3, 0.99).Round(); v.Overall.CI == nil || *v.Overall.CI != want {
		t.Errorf("family ci = %v, want %v (1.5 of 3 families)", v.Overall.CI, want)
	}
	if v := Decide(g, Evidence{Canaries: passingCanaries()}); v.Overall.CI != nil {
		t.Errorf("nothing graded: ci = %v, want none", v.Overall.CI)
	}
}

func TestDecideLowerBound(t *testing.T) {
	tests := []struct {
		name         string
		rule         func(*manifest.Gate)
		slice        manifest.SliceRule
		pass, fail   int
		reasons      []string
		warnings     []string
		status       string
		inconclusive bool
		further      int // -1: none
		least        int
	}{
		{name: "point: 86 of 100 clears 0.8", rule: func(*manifest.Gate) {}, slice: mandatory("s", 0.8, 0), pass: 86, fail: 14,
			reasons: []string{}, warnings: []string{}, status: "pass", further: -1},
		{name: "lower bound: 86 of 100 is inconclusive at 0.8", rule: lowerBound, slice: mandatory("s", 0.8, 0), pass: 86, fail: 14,
			reasons: []string{"slice_inconclusive"}, warnings: []string{}, status: "hold", inconclusive: true, further: 71},
		{name: "lower bound: 98 of 100 clears 0.9", rule: lowerBound, slice: mandatory("s", 0.9, 0), pass: 98, fail: 2,
			reasons: []string{}, warnings: []string{}, status: "pass", further: -1},
		{name: "lower bound: 60 of 100 is below 0.8", rule: lowerBound, slice: mandatory("s", 0.8, 0), pass: 60, fail: 40,
			reasons: []string{"slice_below_threshold"}, warnings: []string{}, status: "hold", further: -1},
		{name: "lower bound: below the point rate but inconclusive", rule: lowerBound, slice: mandatory("s", 0.8, 0), pass: 7, fail: 3,
			reasons: []string{"slice_inconclusive"}, warnings: []string{"underpowered_slice"}, status: "hold", inconclusive: true, further: 52, least: 16},
		{name: "lower bound: a warn_only slice only warns", rule: lowerBound, slice: manifest.SliceRule{Name: "s", MinPassRate: 0.8, WarnOnly: true},
			pass: 86, fail: 14, reasons: []string{}, warnings: []string{"slice_inconclusive"}, status: "warn", inconclusive: true, further: 71},
		{name: "lower bound: a minimum of 1 stays a count", rule: lowerBound, slice: mandatory("s", 1, 0), pass: 5, fail: 0,
			reasons: []string{}, warnings: []string{}, status: "pass", further: -1},
		{name: "lower bound: a rate equal to the minimum never decides", rule: lowerBound, slice: mandatory("s", 0.8, 0), pass: 80, fail: 20,
			reasons: []string{"slice_inconclusive"}, warnings: []string{}, status: "hold", inconclusive: true, further: -1},
		{name: "point: underpowered warns and the slice passes", rule: func(*manifest.Gate) {}, slice: mandatory("s", 0.9, 0), pass: 20, fail: 0,
			reasons: []string{}, warnings: []string{"underpowered_slice"}, status: "pass", further: -1, least: 35},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := gateWith(func(g *manifest.Gate) {
				g.MinPassRate = 0
				g.Slices = []manifest.SliceRule{tt.slice}
				tt.rule(g)
			})
			v := Decide(g, Evidence{Cases: cat(rows("p", results.StatusPass, tt.pass, in("s")), rows("f", results.StatusFail, tt.fail, in("s"))), Canaries: passingCanaries()})
			if got := codes(v.Reasons); strings.Join(got, ",") != strings.Join(tt.reasons, ",") {
				t.Errorf("reasons = %s, want %v", dump(v.Reasons), tt.reasons)
			}
			if got := codes(v.Warnings); strings.Join(got, ",") != strings.Join(tt.warnings, ",") {
				t.Errorf("warnings = %s, want %v", dump(v.Warnings), tt.warnings)
			}
			s := findSlice(t, v, "s")
			if s.Status != tt.status || s.Inconclusive != tt.inconclusive || s.LeastCases != tt.least {
				t.Errorf("slice = %s, want status %s, inconclusive %v, least_cases %d", dump(s), tt.status, tt.inconclusive, tt.least)
			}
			switch {
			case tt.further < 0 && s.FurtherCases != nil:
				t.Errorf("further_cases = %d, want none", *s.FurtherCases)
			case tt.further >= 0 && (s.FurtherCases == nil || *s.FurtherCases != tt.further):
				t.Errorf("further_cases = %v, want %d", s.FurtherCases, tt.further)
			}
			for _, r := range v.Reasons {
				if r.Code == results.ReasonSliceInconclusive && tt.further > 0 && !strings.Contains(r.Message, "more cases at this rate would decide it") {
					t.Errorf("message %q does not say how many cases would decide", r.Message)
				}
			}
		})
	}
}

// A shard judges neither the interval nor the size: merge does, over the
// union.
func TestDecideLowerBoundInAShard(t *testing.T) {
	g := gateWith(func(g *manifest.Gate) {
		g.MinPassRate = 0
		g.Slices = []manifest.SliceRule{mandatory("s", 0.9, 0)}
		lowerBound(g)
	})
	v := Decide(g, Evidence{Cases: cat(rows("p", results.StatusPass, 9, in("s")), rows("f", results.StatusFail, 1, in("s"))), Canaries: passingCanaries(),
		Shard: shard.Shard{Index: 1, Count: 2}})
	if len(v.Reasons) != 0 {
		t.Errorf("reasons = %s, want none in a shard", dump(v.Reasons))
	}
	if got := strings.Join(codes(v.Warnings), ","); got != "partial_shard,slice_inconclusive" {
		t.Errorf("warnings = %s", got)
	}
}

// The intervals cost nothing per row: the tally folds the same counts as
// before, and Decide computes a few intervals per slice at the end.
// go test -run X -bench 'Verdict1M' ./gate/verdict/
func BenchmarkVerdict1M(b *testing.B) {
	for _, rule := range []string{manifest.RulePoint, manifest.RuleLowerBound} {
		g := gateWith(func(g *manifest.Gate) {
			g.MinPassRate = 0.5
			g.Slices = []manifest.SliceRule{mandatory("refunds", 0.9, 0), mandatory("shipping", 0.9, 0), {Name: "billing", MinPassRate: 0.8}}
			g.Confidence = manifest.Confidence{Level: 0.95, Rule: rule}
		})
		t := NewTally(g)
		names := []string{"refunds", "shipping", "billing"}
		for i := range 1_000_000 {
			st := results.StatusPass
			if i%10 == 0 {
				st = results.StatusFail
			}
			t.Add(results.CaseResult{CaseID: "c", Slices: names[i%3 : i%3+1], Status: st, Class: "ok"})
		}
		b.Run(rule, func(b *testing.B) {
			for b.Loop() {
				Decide(g, Evidence{Tally: t, Canaries: passingCanaries()})
			}
		})
	}
}
