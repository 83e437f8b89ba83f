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
// Grade returns, verdict, written and derived canaries included, with no
// case graded.
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
	written, builtin, derived := 0, 0, 0
	for _, c := range res.Canaries {
		switch {
		case c.BuiltIn:
			builtin++
		case c.DerivedFrom == "":
			written++
		default:
			derived++
		}
	}
	if res.Verdict != results.VerdictPass || written != len(s.Manifest.Canaries) || builtin != 2 || derived == 0 || len(res.Cases) != 0 {
		t.Errorf("verdict %s, %d written canaries of %d, %d built-in and %d derived, %d cases; reasons %+v", res.Verdict, written, len(s.Manifest.Canaries), builtin, derived, len(res.Cases), res.Reasons)
	}
	if res.Metamorphic == nil || res.Metamorphic.Variants != derived {
		t.Errorf("metamorphic report %+v, want one that counts the %d derived canaries", res.Metamorphic, derived)
	}
	if !res.Sandbox.Unsandboxed {
		t.Error("the results do not say the graders ran unsandboxed")
	}
}
