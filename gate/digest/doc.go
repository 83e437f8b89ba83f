// Package digest computes the sha256 digests of the files a run reads (the
// dataset, samples, grader and rubric) and compares them with the manifest's
// pins.
package digest
