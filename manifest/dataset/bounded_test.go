package dataset

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/gradegate/gradegate/manifest"
)

// A file with thousands of bad lines lists the first MaxListed of each kind
// and counts the rest; every row is still counted.
func TestProblemsAreBounded(t *testing.T) {
	const n = 3*MaxListed + 7
	t.Run("input errors", func(t *testing.T) {
		var cases strings.Builder
		for i := range n {
			fmt.Fprintf(&cases, `{"item": {"case_id": "c-%d"}}`+"\n", i)
			cases.WriteString(`{"item": {"case_id": ` + "\n") // not JSON
		}
		_, err := Load(fstest.MapFS{"cases.jsonl": {Data: []byte(cases.String())}}, testManifest("."))
		var errs []error
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			errs = j.Unwrap()
		}
		if len(errs) != MaxListed+1 {
			t.Fatalf("%d errors, want %d listed and one that counts the rest", len(errs), MaxListed+1)
		}
		var last *manifest.Error
		if !errors.As(errs[MaxListed], &last) || last.File != "cases.jsonl" || !strings.Contains(last.Msg, fmt.Sprintf("%d more problems", n-MaxListed)) {
			t.Errorf("last error = %v, want a count of the %d not listed", errs[MaxListed], n-MaxListed)
		}
	})
	t.Run("findings", func(t *testing.T) {
		var cases strings.Builder
		for i := range n {
			fmt.Fprintf(&cases, `{"item": {"case_id": "u-%d", "text": "caf`+"\xe9"+`"}}`+"\n", i)
		}
		set, err := Load(fstest.MapFS{"cases.jsonl": {Data: []byte(cases.String())}}, testManifest("."))
		if err != nil {
			t.Fatal(err)
		}
		if len(set.Cases) != n {
			t.Fatalf("%d cases, want %d: a refused row is counted, never dropped", len(set.Cases), n)
		}
		invalid := 0
		var counted *manifest.Finding
		for i, f := range set.Findings {
			if f.Code != CodeDatasetInvalid {
				continue
			}
			invalid++
			if f.Line == 0 {
				counted = &set.Findings[i]
			}
		}
		if invalid != MaxListed+1 || counted == nil {
			t.Fatalf("%d dataset_invalid findings (counting one: %v), want %d listed and one that counts the rest", invalid, counted != nil, MaxListed)
		}
		if counted.Severity != manifest.SeverityHold || !strings.Contains(counted.Message, fmt.Sprintf("%d more dataset_invalid findings", n-MaxListed)) {
			t.Errorf("counting finding = %+v", *counted)
		}
	})
}
