package action

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/sethvargo/go-githubactions"
)

// Inputs are the action's inputs (action.yml), read from INPUT_*.
type Inputs struct {
	Manifest string
	Command  string
	Results  string // run, canary, mutate, shadow: where to write; merge: the shard files
	Shard    string
	Base     string // shadow: the old grader source
	Baseline string // run: the base branch's results file (--baseline)
	// BaseManifest is run's base branch's manifest (--base-manifest).
	BaseManifest string
	CheckName    string
	Hosted       bool
	Comment      bool // keep a sticky pull request comment with the summary
	Token        string
	// JudgeCache and JudgeCacheMode are --judge-cache and
	// --judge-cache-mode: a model grader's recorded calls (run, canary,
	// shadow).
	JudgeCache, JudgeCacheMode string
	// Image is the image the step must run in: full, slim, or empty for
	// the action path's own.
	Image string
}

// readInputs reads and checks the inputs. go-githubactions maps an input
// name to INPUT_<NAME> upper-cased with spaces (not dashes) replaced, which
// is what the runner sets: check-name arrives as INPUT_CHECK-NAME.
func readInputs(gh *githubactions.Action) (Inputs, error) {
	in := Inputs{
		Manifest:     gh.GetInput("manifest"),
		Command:      gh.GetInput("command"),
		Results:      gh.GetInput("results"),
		Shard:        gh.GetInput("shard"),
		Base:         gh.GetInput("base"),
		Baseline:     gh.GetInput("baseline"),
		BaseManifest: gh.GetInput("base-manifest"),
		CheckName:    gh.GetInput("check-name"),
		Token:        gh.GetInput("github-token"),

		JudgeCache:     gh.GetInput("judge-cache"),
		JudgeCacheMode: gh.GetInput("judge-cache-mode"),
		Image:          gh.GetInput("image"),
	}
	if in.Manifest == "" {
		in.Manifest = "gradegate.yaml"
	}
	if in.Command == "" {
		in.Command = "run"
	}
	var errs []error
	if h := gh.GetInput("hosted"); h != "" {
		b, err := strconv.ParseBool(h)
		if err != nil {
			errs = append(errs, fmt.Errorf("input hosted: want true or false, got %q", h))
		}
		in.Hosted = b
	}
	if c := gh.GetInput("comment"); c != "" {
		b, err := strconv.ParseBool(c)
		if err != nil {
			errs = append(errs, fmt.Errorf("input comment: want true or false, got %q", c))
		}
		in.Comment = b
	}
	switch in.Image {
	case "", "full", "slim":
	default:
		errs = append(errs, fmt.Errorf("input image: want full or slim, got %q", in.Image))
	}
	switch in.Command {
	case "run", "canary", "merge", "validate", "mutate", "shadow", "pin", "doctor", "version":
	default:
		errs = append(errs, fmt.Errorf("input command: want run, canary, merge, validate, mutate, shadow, pin, doctor or version, got %q", in.Command))
	}
	if in.Shard != "" && in.Command != "run" {
		errs = append(errs, fmt.Errorf("input shard applies to command run, not %s", in.Command))
	}
	if in.Baseline != "" && in.Command != "run" {
		errs = append(errs, fmt.Errorf("input baseline applies to command run, not %s", in.Command))
	}
	if in.BaseManifest != "" && in.Command != "run" {
		errs = append(errs, fmt.Errorf("input base-manifest applies to command run, not %s", in.Command))
	}
	if in.Hosted && in.Command != "canary" {
		errs = append(errs, fmt.Errorf("input hosted applies to command canary, not %s", in.Command))
	}
	if in.Base != "" && in.Command != "shadow" {
		errs = append(errs, fmt.Errorf("input base applies to command shadow, not %s", in.Command))
	}
	if in.Command == "shadow" && in.Base == "" {
		errs = append(errs, errors.New("input base: command shadow needs the path of the old grader source"))
	}
	switch {
	case (in.JudgeCache != "" || in.JudgeCacheMode != "") && in.Command != "run" && in.Command != "canary" && in.Command != "shadow":
		errs = append(errs, fmt.Errorf("inputs judge-cache and judge-cache-mode apply to commands run, canary and shadow, not %s", in.Command))
	case in.JudgeCacheMode != "" && in.JudgeCache == "":
		errs = append(errs, errors.New("input judge-cache-mode needs judge-cache, the folder of recorded model calls"))
	}
	if in.Comment && !Posts(in.Command) {
		errs = append(errs, fmt.Errorf("input comment applies to commands run, canary, merge, mutate and shadow, not %s", in.Command))
	}
	if in.Results != "" && !Posts(in.Command) {
		errs = append(errs, fmt.Errorf("input results applies to commands run, canary, merge, mutate and shadow, not %s", in.Command))
	}
	if in.Command == "merge" && in.Results == "" {
		errs = append(errs, errors.New("input results: command merge needs the shard results files (paths or globs, one per line)"))
	}
	return in, errors.Join(errs...)
}

// Posts reports the commands the action reports as a step summary, outputs
// and a check run: run, canary and merge with their results
// document, mutate and shadow with their own reports.
func Posts(command string) bool {
	switch command {
	case "run", "canary", "merge", "mutate", "shadow":
		return true
	}
	return false
}

// CheckImage holds the image input to the image the step runs in
// (GRADEGATE_IMAGE, empty outside the published images). A container
// action's image is fixed by its path, so the input cannot switch it; a
// mismatch stops the step with the path that runs the wanted image.
func CheckImage(want, running string) error {
	if want == "" || running == "" || want == running {
		return nil
	}
	path := "gradegate/gradegate"
	if want == "slim" {
		path = "gradegate/gradegate/slim"
	}
	return fmt.Errorf("input image is %s, but this step runs the %s image: the image comes with the action path, so use `uses: %s@<commit>` for the %s image", want, running, path, want)
}

// ReadInputs reads and checks the inputs in the environment getenv.
func ReadInputs(getenv func(string) string) (Inputs, error) {
	return readInputs(githubactions.New(githubactions.WithGetenv(getenv)))
}

// Environment is the environment the command runs with: getenv, except
// that outside the published images (imageEnv unset) imageEnv names the
// image the input asks for, so the grader lint checks imports against it.
// An image input the step does not run in is an error (CheckImage).
func (in Inputs) Environment(getenv func(string) string, imageEnv string) (func(string) string, error) {
	running := getenv(imageEnv)
	if err := CheckImage(in.Image, running); err != nil {
		return nil, err
	}
	if in.Image == "" || running != "" {
		return getenv, nil
	}
	return func(k string) string {
		if k == imageEnv {
			return in.Image
		}
		return getenv(k)
	}, nil
}

// ResultsFile is where the command writes its results: the results input,
// or, for a command that posts and no input (and for merge, whose results
// input names the shards), a fresh file in RUNNER_TEMP. The output
// "results" is always set; RUNNER_TEMP is inside the action's container, so
// a later step that needs the file sets the results input to a workspace
// path.
func (in Inputs) ResultsFile(getenv func(string) string) (string, error) {
	if in.Command != "merge" && (in.Results != "" || !Posts(in.Command)) {
		return in.Results, nil
	}
	return TempResultsFile(getenv("RUNNER_TEMP"))
}

// OutputRoots are the folders the Action may write files in:
// GITHUB_WORKSPACE and the runner's temporary folder (TempDir). Without a
// workspace it confines nothing (nil).
func OutputRoots(getenv func(string) string) []string {
	if getenv("GITHUB_WORKSPACE") == "" {
		return nil
	}
	roots := []string{}
	for _, d := range []string{getenv("GITHUB_WORKSPACE"), TempDir(getenv("RUNNER_TEMP"))} {
		if abs, err := filepath.Abs(d); err == nil {
			roots = append(roots, abs)
		}
	}
	return roots
}
