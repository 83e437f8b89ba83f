package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/gradegate/gradegate/gate/checkrun/action"
	"github.com/gradegate/gradegate/gate/render"
)

// runAction runs gradegate as the GitHub Action: command and options come
// from the INPUT_* variables, and a command that posts (run, canary, merge,
// mutate, shadow) is reported by the action step (gate/checkrun/action) as a
// step summary, outputs and a check run on the pull request's head commit.
// A reporting failure turns a pass into exit 3; a hold stays 1.
func runAction(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer) int {
	step := action.New(action.WithGetenv(getenv), action.WithWriter(stdout))
	defer step.Close()
	in, err := step.Start()
	if err != nil {
		step.Errors(err)
		return exitInput
	}

	getenv, err = in.Environment(getenv, imageEnv)
	if err != nil {
		step.Errors(err)
		return exitInput
	}
	resultsFile, err := in.ResultsFile(getenv)
	if err != nil {
		step.Errors(err)
		return exitInternal
	}
	args, err := actionArgs(in, resultsFile)
	if err != nil {
		step.Errors(err)
		return exitInput
	}
	// The arguments name files of the pull request (the shards a glob
	// matched): the line goes through the printer of the log.
	fmt.Fprintf(render.NewGuard(stdout, render.LineRunes), "gradegate %s\n", strings.Join(args, " "))
	out := execute(ctx, args, getenv, stdout, stderr, func(a *app) { a.outputRoots = action.OutputRoots(getenv) })
	if !action.Posts(in.Command) {
		return out.code
	}
	return step.Report(ctx, in, args, resultsFile, action.Outcome{Code: out.code, Results: out.results, Report: out.report})
}

// commandReport is what a command without gate results (mutate, shadow)
// gives the action to post.
type commandReport = action.Report

// actionArgs builds the command line the inputs stand for. resultsFile is where
// the results document goes.
func actionArgs(in action.Inputs, resultsFile string) ([]string, error) {
	switch in.Command {
	case "run":
		a := []string{"run", in.Manifest, "--results", resultsFile}
		if in.Shard != "" {
			a = append(a, "--shard", in.Shard)
		}
		if in.Baseline != "" {
			a = append(a, "--baseline", in.Baseline)
		}
		if in.BaseManifest != "" {
			a = append(a, "--base-manifest", in.BaseManifest)
		}
		return append(a, judgeArgs(in)...), nil
	case "canary":
		a := []string{"canary", in.Manifest, "--results", resultsFile}
		if in.Hosted {
			a = append(a, "--hosted")
		}
		return append(a, judgeArgs(in)...), nil
	case "merge":
		// A container action gets no shell, so gradegate expands the globs.
		a := []string{"merge", "--manifest", in.Manifest, "--results", resultsFile}
		for _, pat := range strings.Fields(in.Results) {
			matches, err := filepath.Glob(pat)
			if err != nil {
				return nil, fmt.Errorf("input results: %q: %w", pat, err)
			}
			if len(matches) == 0 {
				return nil, fmt.Errorf("input results: no shard results file matches %q", pat)
			}
			a = append(a, matches...)
		}
		return a, nil
	case "mutate":
		return []string{"mutate", in.Manifest, "--results", resultsFile}, nil
	case "shadow":
		return append([]string{"shadow", in.Manifest, "--base", in.Base, "--results", resultsFile}, judgeArgs(in)...), nil
	case "doctor", "version":
		return []string{in.Command}, nil
	}
	return []string{in.Command, in.Manifest}, nil
}

// judgeArgs are the model grader cache flags the inputs ask for.
func judgeArgs(in action.Inputs) []string {
	var a []string
	if in.JudgeCache != "" {
		a = append(a, "--judge-cache", in.JudgeCache)
	}
	if in.JudgeCacheMode != "" {
		a = append(a, "--judge-cache-mode", in.JudgeCacheMode)
	}
	return a
}
