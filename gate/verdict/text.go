package verdict

import (
	"fmt"
	"math"
	"strings"
)

// idList names the first few of n case ids; the reason's case_ids lists more.
func idList(ids []string, n int) string {
	if n <= len(ids) {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids, ", "), n-len(ids))
}

// rate formats a rate for a message with up to four decimals, as results show it.
func rate(f float64) string {
	s := fmt.Sprintf("%.4f", round4(f))
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "" || s == "-" {
		return "0"
	}
	return s
}

// shown is a rate as the results show it: four decimals, rounded, except
// that a rate below its minimum never rounds up to it (0.94996 against 0.95
// shows 0.9499, not a confusing 0.95 that holds).
func shown(r, min float64) float64 {
	v := round4(r)
	if r < min-rateEpsilon && v >= min {
		v = math.Floor(r*1e4) / 1e4
	}
	return v
}

// rounded is shown for an optional rate.
func rounded(r *float64, min float64) *float64 {
	if r == nil {
		return nil
	}
	v := shown(*r, min)
	return &v
}

// round4 rounds a rate to four decimals for display.
func round4(f float64) float64 { return math.Round(f*1e4) / 1e4 }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
