package stats

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// table is testdata/table.json, written by testdata/table.py from the
// Python standard library alone (bisection on the defining equations and
// exact fractions), so it shares no formula with this package.
type table struct {
	Z []struct {
		Level, Z float64
	}
	Wilson []struct {
		Level  float64
		K, N   int
		Lo, Hi float64
	}
	Least []struct {
		Level, P float64
		N        int
	}
	Further []struct {
		Level   float64
		K, N    int
		P       float64
		Further int
	}
	McNemar []struct {
		B, C int
		P    float64
	}
	Paired []struct {
		Level                                  float64
		BothPass, PassFail, FailPass, BothFail int
		Lo, Hi                                 float64
	}
}

func readTable(t *testing.T) table {
	t.Helper()
	b, err := os.ReadFile("testdata/table.json")
	if err != nil {
		t.Fatal(err)
	}
	var tb table
	if err := json.Unmarshal(b, &tb); err != nil {
		t.Fatal(err)
	}
	// The JSON keys are snake_case; map the paired ones by hand.
	var raw struct {
		Paired []map[string]float64 `json:"paired"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for i, p := range raw.Paired {
		tb.Paired[i].BothPass, tb.Paired[i].PassFail = int(p["both_pass"]), int(p["pass_fail"])
		tb.Paired[i].FailPass, tb.Paired[i].BothFail = int(p["fail_pass"]), int(p["both_fail"])
	}
	if len(tb.Wilson) == 0 || len(tb.McNemar) == 0 || len(tb.Paired) == 0 {
		t.Fatal("testdata/table.json is missing a section")
	}
	return tb
}

func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

func TestAgainstIndependentTable(t *testing.T) {
	tb := readTable(t)
	for _, c := range tb.Z {
		if got := Z(c.Level); !near(got, c.Z, 1e-13) {
			t.Errorf("Z(%v) = %.17g, want %.17g", c.Level, got, c.Z)
		}
	}
	for _, c := range tb.Wilson {
		got := Wilson(c.K, c.N, c.Level)
		if !near(got.Lo, c.Lo, 1e-12) || !near(got.Hi, c.Hi, 1e-12) {
			t.Errorf("Wilson(%d, %d, %v) = [%.17g, %.17g], want [%.17g, %.17g]", c.K, c.N, c.Level, got.Lo, got.Hi, c.Lo, c.Hi)
		}
	}
	for _, c := range tb.Least {
		if got, ok := LeastCases(c.P, c.Level); !ok || got != c.N {
			t.Errorf("LeastCases(%v, %v) = %d, %v; want %d", c.P, c.Level, got, ok, c.N)
		}
	}
	for _, c := range tb.Further {
		if got, ok := FurtherCases(c.K, c.N, c.P, c.Level); !ok || got != c.Further {
			t.Errorf("FurtherCases(%d, %d, %v, %v) = %d, %v; want %d", c.K, c.N, c.P, c.Level, got, ok, c.Further)
		}
	}
	for _, c := range tb.McNemar {
		if got := McNemar(c.B, c.C); !near(got, c.P, 1e-12) {
			t.Errorf("McNemar(%d, %d) = %.17g, want %.17g", c.B, c.C, got, c.P)
		}
		if got := McNemar(c.C, c.B); !near(got, c.P, 1e-12) {
			t.Errorf("McNemar(%d, %d) = %.17g, want %.17g (symmetric)", c.C, c.B, got, c.P)
		}
	}
	for _, c := range tb.Paired {
		got := PairedChange(c.BothPass, c.PassFail, c.FailPass, c.BothFail, c.Level)
		if !near(got.Lo, c.Lo, 1e-11) || !near(got.Hi, c.Hi, 1e-11) {
			t.Errorf("PairedChange(%d, %d, %d, %d) = [%.17g, %.17g], want [%.17g, %.17g]",
				c.BothPass, c.PassFail, c.FailPass, c.BothFail, got.Lo, got.Hi, c.Lo, c.Hi)
		}
	}
}

// The figures the documentation quotes.
func TestDocumentedFigures(t *testing.T) {
	tests := []struct {
		name   string
		got    Interval
		lo, hi float64 // rounded to four decimals
	}{
		{"4 of 5", Wilson(4, 5, 0.95), 0.3755, 0.9638},
		{"86 of 100", Wilson(86, 100, 0.95), 0.7786, 0.9148},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r := tt.got.Round(); r.Lo != tt.lo || r.Hi != tt.hi {
				t.Errorf("got [%v, %v] (raw %v), want [%v, %v]", r.Lo, r.Hi, tt.got, tt.lo, tt.hi)
			}
		})
	}
	if p := McNemar(6, 0); !near(p, 0.03125, 1e-15) {
		t.Errorf("McNemar(6, 0) = %v, want 2/64", p)
	}
}

func TestWilsonProperties(t *testing.T) {
	for _, level := range []float64{0.8, 0.95, 0.99, 0.999999} {
		for _, n := range []int{1, 2, 3, 7, 30, 101, 1000, 12345} {
			prev := Interval{Lo: -1, Hi: -1}
			for k := 0; k <= n; k += max(1, n/97) {
				iv := Wilson(k, n, level)
				if iv.Lo < 0 || iv.Hi > 1 || iv.Lo > iv.Hi {
					t.Fatalf("Wilson(%d, %d, %v) = %v: outside [0, 1] or inverted", k, n, level, iv)
				}
				if rate := float64(k) / float64(n); !iv.Contains(rate) {
					t.Fatalf("Wilson(%d, %d, %v) = %v does not contain %v", k, n, level, iv, rate)
				}
				if iv.Lo < prev.Lo || iv.Hi < prev.Hi {
					t.Fatalf("Wilson(%d, %d, %v) = %v: not monotone in k (before %v)", k, n, level, iv, prev)
				}
				prev = iv
			}
		}
	}
	// Narrower with n at a fixed rate, and wider with the level.
	for _, rate := range []float64{0, 0.1, 0.5, 0.86, 1} {
		width := 2.0
		for n := 10; n <= 1_000_000; n *= 10 {
			iv := Wilson(int(rate*float64(n)), n, 0.95)
			if w := iv.Hi - iv.Lo; w >= width {
				t.Fatalf("rate %v: width %v at n=%d, not narrower than %v", rate, w, n, width)
			} else {
				width = w
			}
			if wide := Wilson(int(rate*float64(n)), n, 0.99); wide.Lo > iv.Lo || wide.Hi < iv.Hi {
				t.Fatalf("rate %v, n=%d: the 99%% interval %v does not cover the 95%% %v", rate, n, wide, iv)
			}
		}
	}
}

func TestEdges(t *testing.T) {
	if iv := Wilson(0, 0, 0.95); iv != (Interval{0, 1}) {
		t.Errorf("Wilson(0, 0) = %v, want [0, 1]", iv)
	}
	if iv := Wilson(0, 10, 0.95); iv.Lo != 0 || iv.Hi <= 0 {
		t.Errorf("Wilson(0, 10) = %v, want [0, >0]", iv)
	}
	if iv := Wilson(10, 10, 0.95); iv.Hi != 1 || iv.Lo >= 1 {
		t.Errorf("Wilson(10, 10) = %v, want [<1, 1]", iv)
	}
	if iv := Wilson(12, 10, 0.95); iv != Wilson(10, 10, 0.95) {
		t.Errorf("Wilson(12, 10) = %v, want k clamped to n", iv)
	}
	for _, p := range []float64{0, 1, -0.5, 1.5} {
		if _, ok := LeastCases(p, 0.95); ok {
			t.Errorf("LeastCases(%v) ok, want no least size", p)
		}
		if _, ok := FurtherCases(3, 4, p, 0.95); ok {
			t.Errorf("FurtherCases(3, 4, %v) ok, want none", p)
		}
	}
	if _, ok := FurtherCases(9, 10, 0.9, 0.95); ok {
		t.Error("FurtherCases at a rate equal to the threshold: ok, want never")
	}
	if _, ok := FurtherCases(0, 0, 0.9, 0.95); ok {
		t.Error("FurtherCases with no cases: ok, want none")
	}
	if got, ok := FurtherCases(100, 100, 0.9, 0.95); !ok || got != 0 {
		t.Errorf("FurtherCases(100, 100, 0.9) = %d, %v; want 0: already decided", got, ok)
	}
	if p := McNemar(0, 0); p != 1 {
		t.Errorf("McNemar(0, 0) = %v, want 1", p)
	}
	if p := McNemar(-3, 2); p != McNemar(0, 2) {
		t.Errorf("McNemar(-3, 2) = %v, want negative counts read as 0", p)
	}
	if iv := PairedChange(0, 0, 0, 0, 0.95); iv != (Interval{-1, 1}) {
		t.Errorf("PairedChange of nothing = %v, want [-1, 1]", iv)
	}
}

// Large discordant counts: no underflow to 0 where the p-value is tiny but
// representable, and no loss of symmetry.
func TestMcNemarLarge(t *testing.T) {
	p := McNemar(5_000_000, 4_990_000)
	if !(p > 0 && p < 1) {
		t.Fatalf("McNemar(5e6, 4.99e6) = %v, want in (0, 1)", p)
	}
	// Normal approximation: z = (b−c)/√(b+c) ≈ 3.165, two-sided ≈ 0.00155.
	if !near(p, 0.00155, 0.05) {
		t.Errorf("McNemar(5e6, 4.99e6) = %v, want ≈ 0.00155", p)
	}
	if p := McNemar(2000, 1000); !(p > 0 && p < 1e-60) {
		t.Errorf("McNemar(2000, 1000) = %v, want a tiny positive p-value", p)
	}
}

func TestRound(t *testing.T) {
	iv := Interval{Lo: 0.37552, Hi: 0.96382}.Round()
	if iv.Lo != 0.3755 || iv.Hi != 0.9639 {
		t.Errorf("Round = %v, want [0.3755, 0.9639] (outward)", iv)
	}
	if iv := (Interval{0.95, 1}).Round(); iv.Lo != 0.95 || iv.Hi != 1 {
		t.Errorf("Round of exact ends = %v", iv)
	}
}

func TestIntervalJSON(t *testing.T) {
	b, err := json.Marshal(struct {
		CI Interval `json:"ci"`
	}{Interval{0.25, 0.75}})
	if err != nil || string(b) != `{"ci":[0.25,0.75]}` {
		t.Fatalf("Marshal = %s, %v", b, err)
	}
	var back struct {
		CI Interval `json:"ci"`
	}
	if err := json.Unmarshal(b, &back); err != nil || back.CI != (Interval{0.25, 0.75}) {
		t.Fatalf("Unmarshal = %v, %v", back.CI, err)
	}
	if err := json.Unmarshal([]byte(`{"ci":"x"}`), &back); err == nil {
		t.Fatal("Unmarshal of a string: no error")
	}
}

func FuzzStats(f *testing.F) {
	f.Add(0, 0, 0.95, 0.9)
	f.Add(5, 5, 0.95, 1.0)
	f.Add(3, 1000000, 0.999, 0.5)
	f.Fuzz(func(t *testing.T, k, n int, level, p float64) {
		if !(level > 0 && level < 1) || n > 1<<24 || n < -1<<24 {
			return
		}
		iv := Wilson(k, n, level)
		if !(iv.Lo >= 0 && iv.Hi <= 1 && iv.Lo <= iv.Hi) {
			t.Fatalf("Wilson(%d, %d, %v) = %v", k, n, level, iv)
		}
		if m, ok := FurtherCases(k, n, p, level); ok && m < 0 {
			t.Fatalf("FurtherCases = %d", m)
		}
		if pv := McNemar(k%5000, n%5000); !(pv >= 0 && pv <= 1) {
			t.Fatalf("McNemar = %v", pv)
		}
		c := PairedChange(k%100, n%100, (k+n)%100, 3, level)
		if !(c.Lo >= -1 && c.Hi <= 1 && c.Lo <= c.Hi) {
			t.Fatalf("PairedChange = %v", c)
		}
	})
}

func TestWilsonRate(t *testing.T) {
	if a, b := WilsonRate(0.8, 5, 0.95), Wilson(4, 5, 0.95); !near(a.Lo, b.Lo, 1e-14) || !near(a.Hi, b.Hi, 1e-14) {
		t.Errorf("WilsonRate(0.8, 5) = %v, want Wilson(4, 5) = %v", a, b)
	}
	if iv := WilsonRate(math.NaN(), 5, 0.95); iv != (Interval{0, 1}) {
		t.Errorf("WilsonRate(NaN) = %v", iv)
	}
}
