package main

import (
	"flag"

	"github.com/gradegate/gradegate/gate/judge"
)

// judgeFlags are the options of a model grader's calls.
type judgeFlags struct {
	cache       string
	mode        string
	concurrency int
}

func (j *judgeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&j.cache, "judge-cache", "", "model graders: record and replay model calls in this folder")
	fs.StringVar(&j.mode, "judge-cache-mode", "", "model graders: read, write or readwrite (default readwrite)")
	j.concurrency = judge.DefaultConcurrency
	fs.Var(positive{&j.concurrency, 256}, "judge-concurrency", "model graders: calls in flight at once, 1 to 256")
}
