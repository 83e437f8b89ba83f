package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
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
	o := a.fail(name, &manifest.Error{Msg: fmt.Sprintf("%v (gradegate %s --help shows the usage)", err, name), Err: err})
	return nil, &o
}

// commandUsage writes a command's usage line, with its positional
// arguments, what it does and its flags.
func commandUsage(w io.Writer, fs *flag.FlagSet) error {
	name := strings.TrimPrefix(fs.Name(), "gradegate ")
	var b strings.Builder
	for _, c := range commands() {
		if c.name == name {
			fmt.Fprintf(&b, "Usage: gradegate %s\n\n%s.\n", c.usage, c.summary)
		}
	}
	b.WriteString("\nFlags:\n")
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	b.WriteString("\nExit codes: 0 pass, 1 hold, 2 unusable input, 3 gradegate or its sandbox failed.\n")
	_, err := io.WriteString(w, b.String())
	return err
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

// shardFlag is the --shard K/N value.
type shardFlag struct{ index, count int }

func (s *shardFlag) String() string {
	if s.count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.index, s.count)
}

func (s *shardFlag) Set(v string) error {
	k, n, ok := strings.Cut(v, "/")
	if !ok {
		return fmt.Errorf("want K/N (for example 2/4), got %q", v)
	}
	ki, err1 := strconv.Atoi(k)
	ni, err2 := strconv.Atoi(n)
	if err1 != nil || err2 != nil || ni < 1 || ki < 1 || ki > ni {
		return fmt.Errorf("want K/N with 1 <= K <= N, got %q", v)
	}
	s.index, s.count = ki, ni
	return nil
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
	fs.Var(l, "max-input", "size limit of one kind of input file, KIND=SIZE (kinds: "+strings.Join(kindNames(), ", ")+"); repeatable")
}

func kindNames() []string {
	var out []string
	for _, k := range input.Kinds() {
		out = append(out, string(k))
	}
	return out
}
