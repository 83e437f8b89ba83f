//go:build linux

package worker

import (
	"slices"
	"strings"
)

// A variant of the grader (a mutant) loads in a child forked from a zygote
// that loaded no grader, so each child imported the grader's modules
// afresh: `import json` alone is about 5 ms of CPU a child (json.decoder
// imports re, and re enum), most of what grading one mutant of the example
// cost. The zygote now imports, before it forks, the modules of
// preloadable that the grader's source names in an import statement; a
// child then finds them loaded. These are standard-library modules whose
// import only defines code, constants and caches: a fresh interpreter that
// imports one is in the state the zygote's child inherits. Modules whose
// import leaves state a child could tell apart (a random seed, threads,
// handlers, temporary names) are not on the list. The zygote imports a
// name only when the interpreter's own standard library answers for it, so
// a file of the repository's that shadows one is never run there
// (worker.py's preload).
var preloadable = []string{
	"abc", "ast", "base64", "binascii", "bisect", "calendar", "cmath", "collections",
	"collections.abc", "copy", "csv", "dataclasses", "datetime", "decimal", "difflib",
	"enum", "fnmatch", "fractions", "functools", "hashlib", "heapq", "html", "inspect",
	"ipaddress", "itertools", "json", "keyword", "math", "numbers", "operator", "pprint",
	"re", "shlex", "statistics", "string", "struct", "textwrap", "types", "typing",
	"unicodedata", "urllib.parse",
}

// preloads returns the modules of preloadable that src imports, sorted: the
// names after `import` (each of a comma-separated list, without `as`) and
// after `from` on any line, wherever it stands; the zygote importing one
// the grader only imports in a function is harmless, as the list is.
func preloads(src []byte) []string {
	var out []string
	add := func(name string) {
		if slices.Contains(preloadable, name) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	for line := range strings.Lines(string(src)) {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "import "); ok {
			for _, part := range strings.Split(rest, ",") {
				name, _, _ := strings.Cut(strings.TrimSpace(part), " ")
				add(name)
			}
		} else if rest, ok := strings.CutPrefix(line, "from "); ok {
			name, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
			add(name)
		}
	}
	slices.Sort(out)
	return out
}
