// Package grading holds what one call of a grader is and gives: a Task, its
// Outcome and the outcome's Class, and the Runner and StreamRunner contracts
// every grader type (Python pool, model judge, multi) implements.
package grading
