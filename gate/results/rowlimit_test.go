package results

import (
	"encoding/json"
	"fmt"
	"github.com/gradegate/gradegate/gate/grading"
	"strings"
	"testing"
)

func TestRowBounds(t *testing.T) {
	one := 1.0
	graded := func(id string, judge int) CaseResult {
		c := CaseResult{CaseID: id, Status: StatusPass, Class: grading.ClassOK, Score: &one, Scores: map[string]float64{"score": 1}, Line: 1}
		if judge > 0 {
			c.Judge = json.RawMessage(`"` + strings.Repeat("j", judge) + `"`)
		}
		return c
	}
	for _, tt := range []struct {
		name   string
		limits OutputLimits
		cases  []CaseResult
		want   []grading.Class // the class of each case after the bounds
		msg    string          // what the first bounded case's message says
	}{
		{"within", OutputLimits{}, []CaseResult{graded("a", 1000), graded("b", 0)}, []grading.Class{grading.ClassOK, grading.ClassOK}, ""},
		{"a 64 MB judge", OutputLimits{}, []CaseResult{graded("a", 64<<20), graded("b", 0)}, []grading.Class{grading.ClassInvalidReturn, grading.ClassOK}, "over the 32KiB limit of one row (raise it with --max-output row=SIZE)"},
		{"raised", OutputLimits{Row: 128 << 10}, []CaseResult{graded("a", 100<<10)}, []grading.Class{grading.ClassOK}, ""},
		{"the results full", OutputLimits{Results: 8 << 10}, []CaseResult{graded("a", 3000), graded("b", 3000), graded("c", 3000), graded("d", 10)},
			[]grading.Class{grading.ClassOK, grading.ClassOK, grading.ClassInvalidReturn, grading.ClassInvalidReturn}, "reached their 8KiB limit (raise it with --max-output results=SIZE)"},
		{"omitted stay", OutputLimits{Results: 1}, []CaseResult{{CaseID: "o", Status: StatusOmitted, Reason: "missing_sample"}}, []grading.Class{""}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := NewRowBounds(tt.limits)
			msg := ""
			for i, c := range tt.cases {
				got, _, err := b.Bound(c, b.Format)
				if err != nil {
					t.Fatal(err)
				}
				if got.Class != tt.want[i] {
					t.Errorf("case %s: class %q, want %q", c.CaseID, got.Class, tt.want[i])
				}
				if got.Class == grading.ClassInvalidReturn {
					if got.Judge != nil || got.Scores != nil || got.Score != nil || got.Output != "" || got.Status != StatusError {
						t.Errorf("case %s: the bounded row keeps the grader's payload: %+v", c.CaseID, got)
					}
					if msg == "" {
						msg = got.Error.Message
					}
				}
			}
			if !strings.Contains(msg, tt.msg) {
				t.Errorf("message %q, want it to say %q", msg, tt.msg)
			}
			if b.written > b.limits.results()+int64(len(tt.cases))*512 {
				t.Errorf("%d bytes of rows written past the %d limit", b.written, b.limits.results())
			}
		})
	}
}

// BenchmarkRowBounds is the cost of 100k typical rows formatted and
// measured by the bound, as a run without a spool does; BenchmarkSpoolAdd
// is the spool's formatting and writing of the same rows, which with a
// spool is all the bound adds to (it measures the row the spool formats).
func BenchmarkRowBounds(b *testing.B) {
	rows := benchRows(100_000)
	for b.Loop() {
		bounds := NewRowBounds(OutputLimits{})
		for _, c := range rows {
			bounds.Bound(c, bounds.Format)
		}
	}
}

func BenchmarkSpoolAdd(b *testing.B) {
	rows := benchRows(100_000)
	for b.Loop() {
		s, err := NewSpool(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range rows {
			if err := s.Add(c); err != nil {
				b.Fatal(err)
			}
		}
		s.Close()
	}
}

func benchRows(n int) []CaseResult {
	one := 1.0
	rows := make([]CaseResult, n)
	for i := range rows {
		rows[i] = CaseResult{CaseID: fmt.Sprintf("case-%06d", i), Slices: []string{"refunds"}, Status: StatusPass, Class: grading.ClassOK,
			Score: &one, Scores: map[string]float64{"score": 1}, DurationMS: 1.5, SampleSHA256: strings.Repeat("a", 64), Line: i + 1}
	}
	return rows
}
