package dataset

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/gradegate/gradegate/manifest/input"
)

// Lines are parsed ahead in batches on other goroutines, yet the rows,
// their findings and the input errors come in file order, across batch
// boundaries, whatever the lines between them.
func TestReaderParsesAheadInOrder(t *testing.T) {
	long := `{"item": {"case_id": "long", "text": "` + strings.Repeat("x", 2000) + `"}}`
	const blank = "\n"
	for _, tt := range []struct {
		name string
		rows int
		// line is what replaces row i: "" keeps the row, blank leaves
		// an empty line.
		line func(i int) string
	}{
		{"clean", 3*batchLines + 7, func(int) string { return "" }},
		{"findings and blank lines across batches", 3*batchLines + 7, func(i int) string {
			switch {
			case i%61 == 2:
				return blank
			case i%89 == 1:
				return `{"item": {"case_id": 7}}`
			}
			return ""
		}},
		{"errors across batches", 3*batchLines + 7, func(i int) string {
			switch {
			case i%97 == 5:
				return `{"item": 3}`
			case i%131 == 9:
				return long
			case i%61 == 2:
				return blank
			}
			return ""
		}},
		{"one short batch", 3, func(i int) string {
			if i == 1 {
				return "not json"
			}
			return ""
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var lines, wantIDs []string
			var wantErrLines, wantFindingLines []int
			for i := range tt.rows {
				n := len(lines) + 1
				switch line := tt.line(i); line {
				case blank:
					lines = append(lines, "")
				case "":
					id := fmt.Sprintf("c-%d", i)
					lines = append(lines, fmt.Sprintf(`{"item": {"case_id": %q, "text": "row %d"}}`, id, i))
					wantIDs = append(wantIDs, id)
				case `{"item": {"case_id": 7}}`:
					lines = append(lines, line)
					wantIDs = append(wantIDs, fmt.Sprintf("cases.jsonl:%d", n))
					wantFindingLines = append(wantFindingLines, n)
				default:
					lines = append(lines, line)
					wantErrLines = append(wantErrLines, n)
				}
			}
			m := testManifest(".")
			m.Limits = input.Limits{input.Line: 1024}
			r := Open(fstest.MapFS{"cases.jsonl": {Data: []byte(strings.Join(lines, "\n") + "\n")}}, m)
			ids := readIDs(r)
			if !slices.Equal(ids, wantIDs) {
				t.Errorf("rows %d, want %d; first difference at %d", len(ids), len(wantIDs), firstDiff(ids, wantIDs))
			}
			sum, err := r.Close()
			var errLines []int
			if err != nil && len(wantErrLines) == 0 {
				t.Fatal(err)
			}
			var msgs []string
			if err != nil {
				msgs = errorStrings(t, err)
			}
			for _, e := range msgs {
				var n int
				if _, scanErr := fmt.Sscanf(e, "cases.jsonl:%d:", &n); scanErr != nil {
					t.Fatalf("error %q names no line", e)
				}
				errLines = append(errLines, n)
			}
			if !slices.Equal(errLines, wantErrLines) {
				t.Errorf("error lines %v, want %v", errLines, wantErrLines)
			}
			if err == nil {
				var got []int
				for _, f := range sum.Findings {
					if f.Code == CodeMissingField {
						got = append(got, f.Line)
					}
				}
				if !slices.Equal(got, wantFindingLines) {
					t.Errorf("missing_field lines %v, want %v", got, wantFindingLines)
				}
			}
		})
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
