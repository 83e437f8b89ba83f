// Package verdict decides pass or hold: Decide applies the gate rules to the
// Evidence of a run (the tally of case rows, canaries, findings, digests,
// mutation score, determinism) and is pure; every rule reads only Evidence.
package verdict
