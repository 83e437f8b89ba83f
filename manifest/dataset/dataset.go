// Package dataset reads a suite's cases and stored samples (SPEC section 2)
// and checks the dataset contract.
package dataset

import (
	"encoding/json"
)

// Case is one dataset row with its sample joined in.
type Case struct {
	ID     string
	Slices []string
	Family string
	Label  *int            // human_score, when present (0 or 1)
	Item   json.RawMessage // the whole item, passed to the grader untouched
	// Sample is the stored candidate output; nil when the case has none
	// (it is then omitted with reason missing_sample).
	Sample       json.RawMessage
	SampleSHA256 string // hex digest of the sample's canonical JSON bytes
	File         string // dataset file, as written in the manifest
	Line         int    // line in the dataset file
}
