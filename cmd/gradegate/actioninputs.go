package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sethvargo/go-githubactions"
)

// actionInputs are the action's inputs (action.yml), read from INPUT_*.
type actionInputs struct {
	manifest  string
	command   string
	results   string // run, canary, mutate, shadow: where to write; merge: the shard files
	shard     string
	base      string // shadow: the old grader source
	baseline  string // run: the base branch's results file (--baseline)
	checkName string
	hosted    bool
	comment   bool // keep a sticky pull request comment with the summary
	token     string
	// judgeCache and judgeCacheMode are --judge-cache and
	// --judge-cache-mode: a model grader's recorded calls (run, canary,
	// shadow).
	judgeCache, judgeCacheMode string
	// image is the image the step must run in: full, slim, or empty for
	// the action path's own.
	image string
}

// readInputs reads and checks the inputs. go-githubactions maps an input
// name to INPUT_<NAME> upper-cased with spaces (not dashes) replaced, which
// is what the runner sets: check-name arrives as INPUT_CHECK-NAME.
func readInputs(gh *githubactions.Action) (actionInputs, error) {
	in := actionInputs{
		manifest:  gh.GetInput("manifest"),
		command:   gh.GetInput("command"),
		results:   gh.GetInput("results"),
		shard:     gh.GetInput("shard"),
		base:      gh.GetInput("base"),
		baseline:  gh.GetInput("baseline"),
		checkName: gh.GetInput("check-name"),
		token:     gh.GetInput("github-token"),

		judgeCache:     gh.GetInput("judge-cache"),
		judgeCacheMode: gh.GetInput("judge-cache-mode"),
		image:          gh.GetInput("image"),
	}
	if in.manifest == "" {
		in.manifest = "gradegate.yaml"
	}
	if in.command == "" {
		in.command = "run"
	}
	var errs []error
	if h := gh.GetInput("hosted"); h != "" {
		b, err := strconv.ParseBool(h)
		if err != nil {
			errs = append(errs, fmt.Errorf("input hosted: want true or false, got %q", h))
		}
		in.hosted = b
	}
	if c := gh.GetInput("comment"); c != "" {
		b, err := strconv.ParseBool(c)
		if err != nil {
			errs = append(errs, fmt.Errorf("input comment: want true or false, got %q", c))
		}
		in.comment = b
	}
	switch in.image {
	case "", "full", "slim":
	default:
		errs = append(errs, fmt.Errorf("input image: want full or slim, got %q", in.image))
	}
	switch in.command {
	case "run", "canary", "merge", "validate", "mutate", "shadow", "pin", "doctor", "version":
	default:
		errs = append(errs, fmt.Errorf("input command: want run, canary, merge, validate, mutate, shadow, pin, doctor or version, got %q", in.command))
	}
	if in.shard != "" && in.command != "run" {
		errs = append(errs, fmt.Errorf("input shard applies to command run, not %s", in.command))
	}
	if in.baseline != "" && in.command != "run" {
		errs = append(errs, fmt.Errorf("input baseline applies to command run, not %s", in.command))
	}
	if in.hosted && in.command != "canary" {
		errs = append(errs, fmt.Errorf("input hosted applies to command canary, not %s", in.command))
	}
	if in.base != "" && in.command != "shadow" {
		errs = append(errs, fmt.Errorf("input base applies to command shadow, not %s", in.command))
	}
	if in.command == "shadow" && in.base == "" {
		errs = append(errs, errors.New("input base: command shadow needs the path of the old grader source"))
	}
	switch {
	case (in.judgeCache != "" || in.judgeCacheMode != "") && in.command != "run" && in.command != "canary" && in.command != "shadow":
		errs = append(errs, fmt.Errorf("inputs judge-cache and judge-cache-mode apply to commands run, canary and shadow, not %s", in.command))
	case in.judgeCacheMode != "" && in.judgeCache == "":
		errs = append(errs, errors.New("input judge-cache-mode needs judge-cache, the folder of recorded model calls"))
	}
	if in.comment && !posts(in.command) {
		errs = append(errs, fmt.Errorf("input comment applies to commands run, canary, merge, mutate and shadow, not %s", in.command))
	}
	if in.results != "" && !posts(in.command) {
		errs = append(errs, fmt.Errorf("input results applies to commands run, canary, merge, mutate and shadow, not %s", in.command))
	}
	if in.command == "merge" && in.results == "" {
		errs = append(errs, errors.New("input results: command merge needs the shard results files (paths or globs, one per line)"))
	}
	return in, errors.Join(errs...)
}

// posts reports the commands the action reports as a step summary, outputs
// and a check run: run, canary and merge with their results
// document, mutate and shadow with their own reports.
func posts(command string) bool {
	switch command {
	case "run", "canary", "merge", "mutate", "shadow":
		return true
	}
	return false
}

// commandReport is what a command without gate results (mutate, shadow)
// gives the action to post.
type commandReport struct {
	manifest string // the manifest's name, for the default check run name
	title    string // one line: the check run's title
	markdown string // the whole report: step summary and check run summary
	file     string // the report JSON the command wrote, or ""
}

// args builds the command line the inputs stand for. resultsFile is where
// the results document goes.
func (in actionInputs) args(resultsFile string) ([]string, error) {
	switch in.command {
	case "run":
		a := []string{"run", in.manifest, "--results", resultsFile}
		if in.shard != "" {
			a = append(a, "--shard", in.shard)
		}
		if in.baseline != "" {
			a = append(a, "--baseline", in.baseline)
		}
		return append(a, in.judgeArgs()...), nil
	case "canary":
		a := []string{"canary", in.manifest, "--results", resultsFile}
		if in.hosted {
			a = append(a, "--hosted")
		}
		return append(a, in.judgeArgs()...), nil
	case "merge":
		// A container action gets no shell, so gradegate expands the globs.
		a := []string{"merge", "--manifest", in.manifest, "--results", resultsFile}
		for _, pat := range strings.Fields(in.results) {
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
		return []string{"mutate", in.manifest, "--results", resultsFile}, nil
	case "shadow":
		return append([]string{"shadow", in.manifest, "--base", in.base, "--results", resultsFile}, in.judgeArgs()...), nil
	case "doctor", "version":
		return []string{in.command}, nil
	}
	return []string{in.command, in.manifest}, nil
}

// judgeArgs are the model grader cache flags the inputs ask for.
func (in actionInputs) judgeArgs() []string {
	var a []string
	if in.judgeCache != "" {
		a = append(a, "--judge-cache", in.judgeCache)
	}
	if in.judgeCacheMode != "" {
		a = append(a, "--judge-cache-mode", in.judgeCacheMode)
	}
	return a
}
