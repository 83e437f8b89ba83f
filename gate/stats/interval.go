// Package stats holds the small statistics gradegate gates with: Wilson
// score intervals on pass rates, the sample sizes a threshold needs, the
// exact McNemar test of a paired change and the interval of that change.
// It depends on nothing but the standard library.
package stats

import (
	"encoding/json"
	"fmt"
	"math"
)

// DefaultLevel is the confidence level of every interval unless
// gate.confidence.level says otherwise.
const DefaultLevel = 0.95

// Interval is a confidence interval [Lo, Hi]. In JSON it is the array
// [lo, hi].
type Interval struct {
	Lo, Hi float64
}

// MarshalJSON writes the interval as [lo, hi].
func (iv Interval) MarshalJSON() ([]byte, error) {
	return json.Marshal([2]float64{iv.Lo, iv.Hi})
}

// UnmarshalJSON reads [lo, hi].
func (iv *Interval) UnmarshalJSON(b []byte) error {
	var a [2]float64
	if err := json.Unmarshal(b, &a); err != nil {
		return fmt.Errorf("a confidence interval is [lo, hi]: %w", err)
	}
	iv.Lo, iv.Hi = a[0], a[1]
	return nil
}

// Contains reports whether p lies in the closed interval.
func (iv Interval) Contains(p float64) bool { return iv.Lo <= p && p <= iv.Hi }

// Round returns the interval with both ends rounded to four decimals, the
// precision of every rate in the results: the lower end down and the upper
// end up, so rounding never narrows it.
func (iv Interval) Round() Interval {
	return Interval{Lo: math.Floor(iv.Lo*1e4+1e-9) / 1e4, Hi: math.Ceil(iv.Hi*1e4-1e-9) / 1e4}
}

// Z is the two-sided standard normal quantile of a confidence level:
// Φ⁻¹(1 − (1 − level)/2), 1.959964 for 0.95. It is computed as
// √2 · erfc⁻¹(1 − level), which keeps full precision for levels close to
// 1 (math.Erfcinv is Wichura's algorithm AS 241, good to about 1e-16).
// Level must be in (0, 1).
func Z(level float64) float64 {
	return math.Sqrt2 * math.Erfcinv(1-level)
}

// Wilson is the Wilson score interval of k successes in n trials at a
// confidence level:
//
//	centre = (k + z²/2) / (n + z²)
//	half   = z · √(k(n−k)/n + z²/4) / (n + z²)
//
// It is the set of rates p for which |k/n − p| ≤ z·√(p(1−p)/n), so it
// stays inside [0, 1], is never empty, and behaves at k = 0 and k = n,
// where the textbook (Wald) interval collapses to a point. With n = 0
// nothing is known: [0, 1].
func Wilson(k, n int, level float64) Interval {
	if n <= 0 {
		return Interval{Lo: 0, Hi: 1}
	}
	k = min(max(k, 0), n)
	return wilson(float64(k), float64(n), Z(level))
}

// WilsonRate is the Wilson interval of an observed rate over n units that
// need not be whole passes: a pass rate that is a mean of n family scores
// counts each family once, as n trials at that rate.
func WilsonRate(rate float64, n int, level float64) Interval {
	if n <= 0 || math.IsNaN(rate) {
		return Interval{Lo: 0, Hi: 1}
	}
	rate = min(max(rate, 0), 1)
	return wilson(rate*float64(n), float64(n), Z(level))
}

// wilson takes real counts so that FurtherCases can ask about a rate kept
// fixed while n grows.
func wilson(k, n, z float64) Interval {
	z2 := z * z
	centre := k + z2/2
	half := z * math.Sqrt(k*(n-k)/n+z2/4)
	iv := Interval{Lo: (centre - half) / (n + z2), Hi: (centre + half) / (n + z2)}
	// At the ends the two terms cancel exactly in real numbers; in floating
	// point they may leave a crumb of 1e-17 on the wrong side.
	if k <= 0 {
		iv.Lo = 0
	}
	if k >= n {
		iv.Hi = 1
	}
	iv.Lo = min(max(iv.Lo, 0), 1)
	iv.Hi = min(max(iv.Hi, 0), 1)
	return iv
}

// Decision is what an interval says about a threshold.
type Decision int

// Decisions.
const (
	// Clears: the lower bound is at or above the threshold.
	Clears Decision = iota
	// Below: the upper bound is below the threshold.
	Below
	// Undecided: the threshold lies inside the interval, at neither end
	// that decides.
	Undecided
)

// String names the decision.
func (d Decision) String() string {
	switch d {
	case Clears:
		return "clears"
	case Below:
		return "below"
	}
	return "undecided"
}

// Decide says whether iv clears p, is below it, or cannot tell.
func Decide(iv Interval, p float64) Decision {
	switch {
	case iv.Lo >= p:
		return Clears
	case iv.Hi < p:
		return Below
	}
	return Undecided
}

// Decidable reports whether a threshold can be decided by an interval at
// all. A threshold of 1 asks for a true rate of exactly 1, which no finite
// sample can show (the lower bound of n/n is n/(n+z²) < 1), and one of 0 is
// cleared by anything: both are rules about the observed cases (no failure
// allowed; nothing required), gated on the count, never inconclusive and
// never underpowered.
func Decidable(p float64) bool { return p > 0 && p < 1 }

// LeastCases is the least n for which a slice of n cases that all pass
// clears threshold p at the level: the least n with the Wilson lower bound
// of n/n at or above p. That bound is n/(n+z²), so n = ⌈p·z²/(1−p)⌉; 35
// for 0.9 at 0.95. ok is false when p is not Decidable.
func LeastCases(p, level float64) (n int, ok bool) {
	if !Decidable(p) {
		return 0, false
	}
	z := Z(level)
	n = max(int(math.Ceil(p*z*z/(1-p))), 1)
	// The closed form and the bound computed by wilson may disagree by
	// one ulp at the boundary: settle on what Wilson itself says, since
	// that is what gates.
	for n > 1 && wilson(float64(n-1), float64(n-1), z).Lo >= p {
		n--
	}
	for wilson(float64(n), float64(n), z).Lo < p {
		n++
	}
	return n, true
}

// FurtherCases is how many cases beyond n, graded at the same observed
// rate k/n, would make the interval decide threshold p: its lower bound
// at or above p, or its upper bound below it. The interval excludes p once
// (k/n − p)² ≥ z²·p(1−p)/m, so m ≈ z²·p(1−p)/(k/n − p)². ok is false when no
// number of cases would decide: the rate is exactly p, or p is not
// Decidable, or n is 0. It is 0 when the interval already decides.
func FurtherCases(k, n int, p, level float64) (further int, ok bool) {
	if n <= 0 {
		return 0, false
	}
	k = min(max(k, 0), n)
	return FurtherCasesAt(float64(k)/float64(n), n, p, level)
}

// FurtherCasesAt is FurtherCases for an observed rate over n units (a mean
// of n family scores, say).
func FurtherCasesAt(rate float64, n int, p, level float64) (further int, ok bool) {
	if n <= 0 || !Decidable(p) || math.IsNaN(rate) || rate == p {
		return 0, false
	}
	rate = min(max(rate, 0), 1)
	z := Z(level)
	decided := func(m float64) bool { return Decide(wilson(rate*m, m, z), p) != Undecided }
	if decided(float64(n)) {
		return 0, true
	}
	d := rate - p
	m := math.Ceil(z * z * p * (1 - p) / (d * d))
	if m >= math.MaxInt32 {
		return 0, false
	}
	m = max(m, float64(n+1))
	// As in LeastCases, let the interval itself settle the last case.
	for m > float64(n+1) && decided(m-1) {
		m--
	}
	for !decided(m) {
		m++
	}
	return int(m) - n, true
}
