// Package confine is gradegate's launcher: the process the sandbox starts
// for every grader, which applies the sandbox's layers to itself (the
// slot's uid, no capabilities, resource limits, the Landlock ruleset, the
// seccomp filter) and execs the grader's interpreter, which keeps them.
//
// It runs from this package's initialisation, before the rest of the
// program initialises, and so imports nothing but the first packages of
// the standard library and golang.org/x/sys/unix (see init). The sandbox
// package builds a launcher's Spec and starts it; on systems other than
// Linux the package is empty.
package confine
