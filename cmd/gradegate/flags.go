package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/gradegate/gradegate/gate/sandbox"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/input"
)

// parseInterleaved parses flags that may appear before or after positional
// arguments (`gradegate run suite.yaml --format json`), which the standard
// flag package alone stops at.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		if args[0] == "--" {
			return append(positional, args[1:]...), nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// newFlagSet returns a command's flag set. It prints nothing itself:
// (*app).parseFlags reports a usage error like every other input error, and
// prints the command's usage for -h and --help.
func newFlagSet(name string, _ io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("gradegate "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses a command's arguments with parseInterleaved. done is
// non-nil when the command must stop: -h or --help printed the command's
// usage on stdout (exit 0), or the command line cannot be used (exit 2,
// reported as every input error is, in the --format asked for when it was
// parsed before the problem).
func (a *app) parseFlags(fs *flag.FlagSet, args []string) (pos []string, done *outcome) {
	if fs.Lookup("color") == nil {
		fs.Var(&a.color, "color", "color the terminal output: auto, always or never (auto: on a terminal, unless NO_COLOR is set; CLICOLOR_FORCE forces it)")
	}
	pos, err := parseInterleaved(fs, args)
	if f := fs.Lookup("format"); f != nil {
		a.format = format(f.Value.String())
	}
	if err == nil {
		return pos, nil
	}
	name := strings.TrimPrefix(fs.Name(), "gradegate ")
	if errors.Is(err, flag.ErrHelp) {
		if werr := commandUsage(a.stdout, fs); werr != nil {
			o := a.fail(name, werr)
			return nil, &o
		}
		return nil, &outcome{code: exitPass}
	}
	o := a.fail(name, &manifest.Error{Msg: fmt.Sprintf("%s (gradegate %s --help shows the usage)", dashes(err.Error()), name), Err: err})
	return nil, &o
}

// flagNames finds the flag names in the flag package's messages ("flag
// provided but not defined: -x", "invalid value … for flag -workers: …").
var flagNames = regexp.MustCompile(`(defined: |argument: |flag )-([A-Za-z0-9][\w-]*)`)

// dashes spells the flag names of a flag package message as gradegate's
// help does: --workers, not -workers.
func dashes(msg string) string {
	return flagNames.ReplaceAllString(msg, "$1--$2")
}

// commandUsage writes a command's usage line, with its positional
// arguments, what it does, its flags (spelt --name, as the usage line
// spells them), an example and, for a command that gates, its exit codes.
func commandUsage(w io.Writer, fs *flag.FlagSet) error {
	name := strings.TrimPrefix(fs.Name(), "gradegate ")
	var b strings.Builder
	var cmd command
	for _, c := range commands() {
		if c.name == name {
			cmd = c
			fmt.Fprintf(&b, "Usage: gradegate %s\n\n%s.\n", c.usage, c.summary)
		}
	}
	b.WriteString("\nFlags:\n")
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name, ok := argNames()[f.Name]; ok {
			arg = name
		} else if arg != "" {
			arg = strings.ToUpper(arg)
		}
		if arg != "" && !isBool(f) {
			line += " " + arg
		}
		fmt.Fprintf(&b, "%s\n      %s", line, usage)
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			fmt.Fprintf(&b, " (default %s)", f.DefValue)
		}
		b.WriteString("\n")
	})
	if cmd.example != "" {
		fmt.Fprintf(&b, "\nExample:\n  %s\n", cmd.example)
	}
	if cmd.exits != "" {
		fmt.Fprintf(&b, "\nExit codes: %s.\n", cmd.exits)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// argNames names the argument of each flag in the help, as the usage lines
// name it.
func argNames() map[string]string {
	return map[string]string{
		"format": "F", "results": "FILE", "baseline": "BASE_RESULTS.json", "base-manifest": "BASE_MANIFEST", "shard": "K/N", "workers": "N",
		"color": "WHEN", "max-input": "KIND=SIZE", "judge-cache": "DIR", "judge-cache-mode": "M",
		"judge-concurrency": "N", "python": "PATH", "canary-seed": "SEED", "hosted-url": "URL",
		"manifest": "MANIFEST", "base": "OLD_GRADER.py|BASE_MANIFEST",
	}
}

// isBool reports whether a flag takes no argument (--wide).
func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// format is the --format value.
type format string

const (
	formatHuman    format = "human"
	formatJSON     format = "json"
	formatMarkdown format = "markdown"
)

func (f *format) String() string { return string(*f) }

func (f *format) Set(s string) error {
	switch format(s) {
	case formatHuman, formatJSON, formatMarkdown:
		*f = format(s)
		return nil
	}
	return fmt.Errorf("want human, json or markdown, got %q", s)
}

// maxWorkers bounds --workers: each grader process runs as its own uid from
// the sandbox's block, which holds sandbox.UIDBlockSize of them.
const maxWorkers = sandbox.UIDBlockSize

// positive is an int flag that must be at least 1 and at most max
// (--workers), checked when the command line is parsed, before any work.
type positive struct {
	n   *int
	max int
}

func (p positive) String() string {
	if p.n == nil {
		return ""
	}
	return strconv.Itoa(*p.n)
}

func (p positive) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 || (p.max > 0 && v > p.max) {
		if p.max > 0 {
			return fmt.Errorf("want a whole number between 1 and %d, got %q", p.max, s)
		}
		return fmt.Errorf("want a whole number of at least 1, got %q", s)
	}
	*p.n = v
	return nil
}

// registerLimits adds --max-input, which raises (or lowers) the size limit of
// one kind of input file: --max-input dataset=16GiB. It may be repeated.
func registerLimits(fs *flag.FlagSet, l *input.Limits) {
	fs.Var(l, "max-input", "size limit of one kind of input file, KIND=SIZE (kinds: "+strings.Join(input.KindNames(), ", ")+"); repeatable")
}
