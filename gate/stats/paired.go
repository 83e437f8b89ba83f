package stats

import "math"

// McNemar is the exact two-sided McNemar test of a paired change: of the
// cases graded in both runs, b went from pass to fail and c from fail to
// pass. Under no change each discordant case is equally likely to go
// either way, so with n = b + c the p-value is
//
//	p = min(1, 2 · P(X ≤ min(b, c))),  X ~ Binomial(n, 1/2)
//
// the binomial test on the discordant pairs. The tail is summed in log
// space from its largest term down, so it is exact to rounding for small
// counts and neither underflows nor costs more than a few hundred terms for
// millions. With no discordant case nothing changed: 1.
func McNemar(b, c int) float64 {
	b, c = max(b, 0), max(c, 0)
	n := b + c
	m := min(b, c)
	if n == 0 || 2*m == n {
		return 1
	}
	// log P(X = m) = log C(n, m) − n·log 2; the terms below it fall by
	// t(i−1)/t(i) = i/(n−i+1) < 1, so the sum is dominated by the first.
	logTop := logChoose(n, m) - float64(n)*math.Ln2
	sum, t := 1.0, 1.0 // in units of P(X = m)
	for i := m; i > 0; i-- {
		t *= float64(i) / float64(n-i+1)
		sum += t
		if t < sum*1e-17 {
			break
		}
	}
	logTail := logTop + math.Log(sum)
	p := 2 * math.Exp(logTail)
	return min(p, 1)
}

func logChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// PairedChange is the interval of the change in pass rate between two
// runs graded on the same n cases: both passed, pass→fail (b), fail→pass
// (c), both failed. The change is head − base = (c − b)/n. It is
// Newcombe's score interval for a difference of paired proportions (his
// method 10, 1998, with the correction of φ as Altman et al., Statistics
// with Confidence, give it), built from the Wilson intervals of the two
// rates, so it stays inside [−1, 1] and behaves at 0 and n. With n = 0
// nothing is known: [−1, 1].
func PairedChange(bothPass, passFail, failPass, bothFail int, level float64) Interval {
	r, s, t, u := max(bothPass, 0), max(passFail, 0), max(failPass, 0), max(bothFail, 0)
	n := r + s + t + u
	if n == 0 {
		return Interval{Lo: -1, Hi: 1}
	}
	fn := float64(n)
	// p1 is head's pass rate (r + t)/n, p2 the base's (r + s)/n.
	p1, p2 := float64(r+t)/fn, float64(r+s)/fn
	ci1, ci2 := Wilson(r+t, n, level), Wilson(r+s, n, level)
	l1, u1, l2, u2 := ci1.Lo, ci1.Hi, ci2.Lo, ci2.Hi
	// φ is the correlation of the two outcomes over the pairs, with the
	// continuity correction of Altman et al. for positive association.
	phi := 0.0
	if den := float64(r+s) * float64(t+u) * float64(r+t) * float64(s+u); den > 0 {
		a := float64(r)*float64(u) - float64(s)*float64(t)
		switch {
		case a > fn/2:
			phi = (a - fn/2) / math.Sqrt(den)
		case a < 0:
			phi = a / math.Sqrt(den)
		}
	}
	d := p1 - p2
	lo := d - math.Sqrt(max((p1-l1)*(p1-l1)-2*phi*(p1-l1)*(u2-p2)+(u2-p2)*(u2-p2), 0))
	hi := d + math.Sqrt(max((p2-l2)*(p2-l2)-2*phi*(p2-l2)*(u1-p1)+(u1-p1)*(u1-p1), 0))
	return Interval{Lo: max(lo, -1), Hi: min(hi, 1)}
}
