// Package gate runs the gate: Host.Grade is a run's pipeline, its stages in
// order (inputs, graders and lint, mutation score, canaries and cases,
// determinism, hosted parity, verdict), the same for every grader type; Run
// is its grading and verdict alone, and Merge combines a sharded run's results.
package gate
