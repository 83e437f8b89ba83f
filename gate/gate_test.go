package gate

import (
	"bytes"
	"context"
	"testing"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest/input"
)

// TestGradeCanariesComplete runs the pipeline in process on the example
// suite (the canary command, unsandboxed): the results are complete when
// Grade returns, verdict and canaries included, with no case graded.
func TestGradeCanariesComplete(t *testing.T) {
	s, err := LoadSuite("../testdata/examples/order-summary/gradegate.yaml", input.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var notes bytes.Buffer
	h := NewHost(func(string) string { return "" }, &notes)
	res, err := h.Grade(context.Background(), s, GradeOptions{
		GraderOptions: GraderOptions{Python: "/usr/bin/python3", Workers: 1, Unsandboxed: true},
		CanariesOnly:  true,
		Version:       "test",
	})
	if err != nil {
		t.Fatalf("Grade: %v\nnotes:\n%s", err, notes.String())
	}
	defer res.Close()
	if res.Verdict != results.VerdictPass || len(res.Canaries) != len(s.Manifest.Canaries) || len(res.Cases) != 0 {
		t.Errorf("verdict %s, %d canaries of %d, %d cases; reasons %+v", res.Verdict, len(res.Canaries), len(s.Manifest.Canaries), len(res.Cases), res.Reasons)
	}
	if !res.Sandbox.Unsandboxed {
		t.Error("the results do not say the graders ran unsandboxed")
	}
}
