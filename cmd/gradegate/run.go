package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/gradegate/gradegate/gate"
	"io"
	"strings"
	"time"

	"github.com/gradegate/gradegate/gate/output"
	"github.com/gradegate/gradegate/gate/render"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// outcome is what one command produced: its exit code and, for the commands
// that grade, the results the action reports.
type outcome struct {
	command string           // run, validate, canary, …
	results *results.Results // nil when the command produces none
	// report is what mutate and shadow, which produce no results, give the
	// action to post; nil for the other commands and when they failed.
	report *commandReport
	code   int
}

// app is what every command may touch. Nothing reads the process
// environment or writes to os.Stdout behind it.
type app struct {
	getenv func(string) string
	stdout io.Writer
	stderr io.Writer
	// tty is stderr as the caller gave it, before the guard that cuts and
	// neutralises every line: whether it is a terminal decides the progress
	// bar, which draws on it (its text is gradegate's own).
	tty io.Writer
	now func() time.Time
	// color is the command's --color.
	color colorMode

	// host is what the gate's pipeline may touch of this process: the
	// environment above and the error stream.
	host *gate.Host

	// format is the command's --format, once its flags are parsed: fail
	// writes the problems in it.
	format format

	// outputRoots confine every file gradegate writes (the Action: the
	// workspace and RUNNER_TEMP); nil allows any path.
	outputRoots []string
}

// command is one subcommand.
type command struct {
	name    string
	usage   string
	summary string
	run     func(a *app, ctx context.Context, args []string) outcome
	// example is a command line its help shows.
	example string
	// exits explains the exit codes of a command that gates; "" for the
	// others (pin, init, version, compare), which exit 0 unless they fail.
	exits string
}

// Exit code lines of the commands that gate.
const (
	exitsGate     = "0 pass, 1 hold, 2 unusable input, 3 gradegate or its sandbox failed"
	exitsValidate = "0 clean, 1 a finding that would hold, 2 unusable input, 3 gradegate failed"
	exitsMutate   = "0 the mutation score meets gate.min_mutation_score (or no mutant survived), 1 it does not, 2 unusable input, 3 gradegate failed"
	exitsShadow   = "0 no case changed, 1 some changed, 2 unusable input, 3 gradegate failed"
	exitsDoctor   = "0 the sandbox's network boundary can be established, 3 it cannot"
)

func commands() []command {
	return []command{
		{"run", "run [MANIFEST] [--results FILE] [--format F] [--wide] [--shard K/N] [--baseline BASE_RESULTS.json] [--base-manifest BASE_MANIFEST] [--workers N] [--unsandboxed] [--judge-cache DIR] [--judge-cache-mode M]", "the full gate", (*app).cmdRun,
			"gradegate run evals/support/gradegate.yaml --results results.json", exitsGate},
		{"validate", "validate [MANIFEST] [--format F]", "manifest, digests and dataset contract; no grading", (*app).cmdValidate,
			"gradegate validate evals/support/gradegate.yaml", exitsValidate},
		{"canary", "canary [MANIFEST] [--hosted] [--hosted-url URL] [--results FILE] [--format F] [--wide]", "canaries only", (*app).cmdCanary,
			"gradegate canary evals/support/gradegate.yaml --hosted", exitsGate},
		{"pin", "pin [MANIFEST] [--format F]", "rewrite the manifest's sha256 fields to the files' current digests", (*app).cmdPin,
			"gradegate pin evals/support/gradegate.yaml", ""},
		{"merge", "merge --manifest MANIFEST SHARD.json... [--results FILE] [--format F] [--wide]", "combine shard results into one verdict", (*app).cmdMerge,
			"gradegate merge --manifest evals/support/gradegate.yaml shard-1.json shard-2.json --results results.json", exitsGate},
		{"doctor", "doctor [--format F]", "try each sandbox layer on this machine", (*app).cmdDoctor,
			"gradegate doctor", exitsDoctor},
		{"mutate", "mutate [MANIFEST] [--format F] [--results FILE]", "mutation-test the grader against its canaries", (*app).cmdMutate,
			"gradegate mutate evals/support/gradegate.yaml", exitsMutate},
		{"shadow", "shadow [MANIFEST] --base OLD_GRADER.py|BASE_MANIFEST [--format F] [--results FILE]", "grade the cases with the old and the new grader", (*app).cmdShadow,
			"gradegate shadow evals/support/gradegate.yaml --base old_grader.py", exitsShadow},
		{"compare", "compare BASE.json HEAD.json [--format F]", "matched-cohort comparison of two results files", (*app).cmdCompare,
			"gradegate compare base/results.json head/results.json", ""},
		{"init", "init [DIR] [--format F]", "write a starter suite (manifest, grader, dataset, samples, canaries), pinned, into DIR", (*app).cmdInit,
			"gradegate init evals/support", ""},
		{"version", "version [--format F]", "print the version (also: gradegate --version)", (*app).cmdVersion,
			"gradegate version --format json", ""},
	}
}

// run is the whole command line tool; main only wires the process to it.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 && getenv("GITHUB_ACTIONS") == "true" {
		return runAction(ctx, getenv, stdout, stderr)
	}
	// Undocumented in --help, for measuring gradegate itself:
	// GRADEGATE_CPUPROFILE and GRADEGATE_TRACE.
	stopProfiles, err := gate.StartProfiles(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "gradegate: %v\n", err)
		return exitInternal
	}
	defer stopProfiles()
	return execute(ctx, args, getenv, stdout, stderr).code
}

// execute runs one command line (without the program name).
func execute(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, opts ...func(*app)) outcome {
	a := &app{getenv: getenv, stdout: logStdout(getenv, stdout), stderr: render.NewGuard(stderr, render.LineRunes), tty: stderr, now: time.Now}
	for _, o := range opts {
		o(a)
	}
	a.host = gate.NewHost(a.getenv, a.stderr)
	if len(args) == 2 && args[0] == "help" {
		// gradegate help CMD is gradegate CMD --help.
		args = []string{args[1], "--help"}
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		a.usage(stdout)
		if len(args) == 0 {
			return outcome{code: exitInput}
		}
		return outcome{code: exitPass}
	}
	if args[0] == "--version" {
		args = append([]string{"version"}, args[1:]...)
	}
	for _, c := range commands() {
		if c.name == args[0] {
			o := c.run(a, ctx, args[1:])
			o.command = c.name
			return o
		}
	}
	fmt.Fprintf(stderr, "gradegate: unknown command %q%s\n\n", render.Text(args[0]), commandHint(args[0]))
	a.usage(stderr)
	return outcome{code: exitInput}
}

// logStdout is the writer of a command's stdout. Off a terminal it may be a
// log that GitHub's runner reads for workflow commands (a `run:` step, the
// container Action), whatever the format: it goes through the log's
// printer, which changes a JSON document only into JSON escapes of the same
// characters. A terminal is no runner's log, and its colors pass.
func logStdout(getenv func(string) string, stdout io.Writer) io.Writer {
	if render.IsTerminal(stdout) {
		return stdout
	}
	return render.NewStreamGuard(stdout)
}

func (a *app) usage(w io.Writer) {
	fmt.Fprintln(w, "gradegate gates evaluation graders in CI: it checks that the grader can still fail,\ngrades every intended case in a sandbox and says pass or hold.")
	fmt.Fprintln(w, "\nUsage:")
	cs := commands()
	width := 0
	for _, c := range cs {
		width = max(width, len(c.name))
	}
	for _, c := range cs {
		fmt.Fprintf(w, "  gradegate %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintln(w, "\nExample:\n  gradegate init evals/support && gradegate run evals/support/gradegate.yaml")
	fmt.Fprintln(w, "\ngradegate CMD --help shows a command's arguments, flags and exit codes; gradegate --version its version.")
	fmt.Fprintln(w, "\nExit codes of run, canary and merge: "+exitsGate+".")
}

// commandHint is " (did you mean run?)" for a name within two edits of one
// command (rn, valdiate), and "" otherwise.
func commandHint(name string) string {
	best, bestDist := "", 3
	for _, c := range commands() {
		if d := manifest.EditDistance(name, c.name); d < bestDist {
			best, bestDist = c.name, d
		}
	}
	if best == "" || bestDist >= len(name) {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

// fail reports err and returns the exit code it deserves: 2 for input the
// user can fix, 3 for everything else. Every problem of a joined error gets
// its own line on stderr. With --format json or markdown the problems are
// also data on stdout: the command's document with each problem as a
// finding (see render.Failure), so a caller that reads stdout learns every
// problem of the run, not an empty page.
func (a *app) fail(cmd string, err error) outcome {
	code := exitInternal
	if errors.Is(err, manifest.ErrInput) {
		code = exitInput
	}
	for _, line := range render.ErrorLines(err) {
		fmt.Fprintf(a.stderr, "gradegate %s: %s\n", cmd, line)
	}
	if werr := a.writeFailure(cmd, code, err); werr != nil {
		fmt.Fprintf(a.stderr, "gradegate %s: writing the findings: %v\n", cmd, werr)
		code = exitInternal
	}
	return outcome{code: code}
}

// writer is the writer of a's output files.
func (a *app) writer() output.Writer { return output.Writer{Roots: a.outputRoots} }

// manifestArg returns the manifest path from the positional arguments.
func manifestArg(cmd string, pos []string) (string, error) {
	switch len(pos) {
	case 0:
		return "gradegate.yaml", nil
	case 1:
		return pos[0], nil
	}
	return "", fmt.Errorf("%w: gradegate %s takes one manifest, got %d arguments: %s", manifest.ErrInput, cmd, len(pos), strings.Join(pos, " "))
}
