package results

// MutationExclusion is one grader line a "# gradegate: no-mutate: <why>"
// pragma keeps from being mutation-tested, as the mutation report and the
// results list it: an exclusion is never silent.
type MutationExclusion struct {
	// Part names the python sub-grader of a multi grader whose source the
	// line is in, when the grader has more than one; "" otherwise.
	Part string `json:"part,omitempty"`
	Line int    `json:"line"`
	// Reason is the text after "no-mutate:"; empty when the pragma gives
	// none, and then the line's mutants count as survivors.
	Reason string `json:"reason"`
	// Mutants is how many mutation sites the pragma hides.
	Mutants int `json:"mutants"`
	// Code is the excluded line, trimmed.
	Code string `json:"code"`
}

// Unexcused reports whether the pragma gives no reason.
func (e MutationExclusion) Unexcused() bool { return e.Reason == "" }
