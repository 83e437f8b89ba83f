// Package render turns gradegate's results into what people read: the
// terminal output, GitHub-flavoured markdown (for --format markdown, the step
// summary and the check run summary) and JSON. It only reads the values that
// the gate computed; it never decides anything.
package render
