package results

import (
	"encoding/json"
	"github.com/gradegate/gradegate/gate/grading"
	"testing"
)

// TestCaseResultKeys checks that every case carries every key of a case
// row, whatever its status, so readers need no special cases.
func TestCaseResultKeys(t *testing.T) {
	one := 1.0
	tests := []struct {
		name      string
		c         CaseResult
		wantClass any
	}{
		{"passed", CaseResult{CaseID: "a", Status: StatusPass, Class: grading.ClassOK, Score: &one, Scores: map[string]float64{"score": 1}}, "ok"},
		{"errored", CaseResult{CaseID: "b", Status: StatusError, Class: grading.ClassTimeout, Error: &grading.CaseError{Class: grading.ClassTimeout, Message: "slow"}}, "timeout"},
		{"omitted", CaseResult{CaseID: "c", Status: StatusOmitted, Reason: OmittedMissingSample}, nil},
	}
	keys := []string{"case_id", "slices", "family", "status", "class", "score", "scores", "judge", "human_score", "error", "duration_ms", "sample_sha256", "line"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.c)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				if _, ok := got[k]; !ok {
					t.Errorf("key %q missing from %s", k, b)
				}
			}
			if got["class"] != tt.wantClass {
				t.Errorf("class = %v, want %v", got["class"], tt.wantClass)
			}
			var back CaseResult
			if err := json.Unmarshal(b, &back); err != nil || back.Class != tt.c.Class {
				t.Errorf("round trip: class %q, err %v; want %q", back.Class, err, tt.c.Class)
			}
		})
	}
}
