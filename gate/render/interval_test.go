package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/stats"
)

func TestRateCI(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name string
		rate *float64
		min  float64
		ci   *stats.Interval
		want string
	}{
		{"outward in whole percents", f(0.86), 0.8, &stats.Interval{Lo: 0.7786, Hi: 0.9148}, "86.0% (77–92)"},
		{"a perfect slice", f(1), 1, &stats.Interval{Lo: 0.9722, Hi: 1}, "100.0% (97–100)"},
		{"none graded", nil, 1, nil, "—"},
		{"no interval recorded", f(0.5), 1, nil, "50.0%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rateCI(tt.rate, tt.min, tt.ci); got != tt.want {
				t.Errorf("rateCI = %q, want %q", got, tt.want)
			}
		})
	}
}

// The interval sits in the pass-rate cell of both tables, and an
// inconclusive slice says so in its status.
func TestIntervalsInTables(t *testing.T) {
	res := holdResult()
	res.Overall.CI = &stats.Interval{Lo: 0.6, Hi: 0.9}
	res.Slices[0].CI = &stats.Interval{Lo: 0.1234, Hi: 0.5}
	res.Slices[0].Inconclusive, res.Slices[0].Status = true, results.VerdictHold
	var h bytes.Buffer
	if err := Human(&h, res, Options{}); err != nil {
		t.Fatal(err)
	}
	md := MarkdownString(res, MarkdownOptions{})
	for name, out := range map[string]string{"human": h.String(), "markdown": md} {
		for _, want := range []string{"(60–90)", "(12–50)", "hold (inconclusive)"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s output lacks %q:\n%s", name, want, out)
			}
		}
	}
}

func TestRepeatAndDeterminismLines(t *testing.T) {
	res := holdResult()
	res.Overall.RepeatFlips = results.NewFlipRate(2, 40, 0.95)
	res.Slices[0].RepeatFlips = results.NewFlipRate(2, 10, 0.95)
	res.Determinism = &results.Determinism{Canaries: 2, Cases: 40, Differed: []results.Difference{}, FlipRate: results.NewFlipRate(0, 40, 0.95)}
	var h bytes.Buffer
	if err := Human(&h, res, Options{}); err != nil {
		t.Fatal(err)
	}
	md := MarkdownString(res, MarkdownOptions{})
	for name, out := range map[string]string{"human": h.String(), "markdown": md} {
		for _, want := range []string{
			"repeats: 2 of 40 cases asked more than once disagreed across asks; status flip rate 5.0% (1–17) over 40 cases",
			"disagreed; status flip rate 20.0% (5–51) over 10 cases",
			"nothing differed; status flip rate 0.0% (0–9) over 40 cases",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%s output lacks %q:\n%s", name, want, out)
			}
		}
	}
}
