package shadow

import (
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
)

// TestDroppedRow: a row the preprocessor dropped is omitted under both
// sources, not an error, and stays out of the pass rates.
func TestDroppedRow(t *testing.T) {
	dropped := grading.Outcome{Omitted: "preprocessed_out"}
	one := 1.0
	passed := grading.Outcome{Class: grading.ClassOK, Score: &one}
	g := gradeOf(dropped, 1)
	if g.Status != StatusOmitted || g.Reason != "preprocessed_out" || g.Error != nil || g.Score != nil {
		t.Fatalf("gradeOf(dropped) = %+v, want omitted preprocessed_out", g)
	}
	if differ(dropped, dropped) {
		t.Error("a row dropped under both sources differs")
	}
	var tl tally
	tl.add(g, g, false)
	tl.add(gradeOf(passed, 1), gradeOf(passed, 1), false)
	if tl.cases != 2 || tl.baseOK != 1 || tl.basePass != 1 || tl.headOK != 1 || tl.headPass != 1 {
		t.Errorf("tally %+v, want 2 cases, 1 graded and passed each side", tl)
	}
}
