// Package blind places the canaries among the cases of a run: each canary
// gets an id and an item shaped like the dataset's and travels at a random
// position through the same stream, so a grader cannot tell it from a case.
package blind
