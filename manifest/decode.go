package manifest

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// decoder walks a manifest's yaml.Node tree, collecting every problem rather
// than stopping at the first, and the line of every key it sees.
type decoder struct {
	file  string
	errs  []*Error
	lines map[string]int
}

func (d *decoder) fail(line int, key, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
}

// err joins the collected problems in the order they appear in the file.
func (d *decoder) err() error {
	return joinErrors(d.errs)
}

func joinErrors(errs []*Error) error {
	if len(errs) == 0 {
		return nil
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
	all := make([]error, len(errs))
	for i, e := range errs {
		all[i] = e
	}
	return errors.Join(all...)
}

func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// resolve follows aliases, so `*anchor` reads as the node it names.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// section is one YAML mapping of the manifest, with its keys checked against
// the ones the contract allows.
type section struct {
	d    *decoder
	path string // dotted path of the mapping itself; "" for the root
	line int    // where the mapping's key was written, for "missing key" errors
	vals map[string]*yaml.Node
	// empty are the keys written without a value that were reported so
	// (each once, whichever reader asks first).
	empty map[string]bool
}

// mapping checks that n is a mapping whose keys are all in allowed. It reports
// unknown and duplicate keys and records every key's line.
func (d *decoder) mapping(n *yaml.Node, path string, line int, allowed ...string) (*section, bool) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		d.fail(nodeLine(n, line), path, "must be a mapping, got %s", describe(n))
		return nil, false
	}
	s := &section{d: d, path: path, line: line, vals: map[string]*yaml.Node{}}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.fail(k.Line, path, "keys must be plain names, got %s", describe(k))
			continue
		}
		key := joinKey(path, k.Value)
		if first, dup := seen[k.Value]; dup {
			d.fail(k.Line, joinKey(path, keyText(k.Value)), "duplicate key (first at line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		if !contains(allowed, k.Value) {
			d.fail(k.Line, joinKey(path, keyText(k.Value)), "unknown key%s; expected one of: %s", suggest(k.Value, allowed), strings.Join(allowed, ", "))
			continue
		}
		d.lines[key] = k.Line
		s.vals[k.Value] = resolve(v)
	}
	return s, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// suggest names the allowed key closest to a misspelt one, when one is close
// enough to be what the user meant.
func suggest(key string, allowed []string) string {
	if best := closest(key, allowed); best != "" {
		return fmt.Sprintf(" (did you mean %s?)", best)
	}
	return ""
}

// closest is the one of allowed that key most likely means, or "": the
// nearest by edit distance when it is near enough (a typo), else the one
// allowed key that key is a word-part of (threshold → pass_threshold,
// timeout → timeout_seconds), else the key that other tools' name for the
// same thing stands for (file → path, digest → sha256).
func closest(key string, allowed []string) string {
	best, bestDist := "", math.MaxInt
	for _, a := range allowed {
		if d := editDistance(key, a); d < bestDist {
			best, bestDist = a, d
		}
	}
	if best != "" && bestDist <= max(2, len(key)/3) {
		return best
	}
	var parts []string
	for _, a := range allowed {
		if key != "" && (strings.HasPrefix(a, key+"_") || strings.HasSuffix(a, "_"+key)) {
			parts = append(parts, a)
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	if to, ok := synonyms()[strings.ToLower(key)]; ok && slices.Contains(allowed, to) {
		return to
	}
	return ""
}

// synonyms maps what other tools call a key to gradegate's name for it.
func synonyms() map[string]string {
	return map[string]string{
		"file": "path", "filename": "path", "file_path": "path", "filepath": "path", "location": "path",
		"digest": "sha256", "hash": "sha256", "checksum": "sha256", "sha": "sha256", "sha_256": "sha256",
		"script": "source", "code": "source", "file_name": "path",
		"timeout": "timeout_seconds", "memory": "memory_mb",
	}
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func nodeLine(n *yaml.Node, fallback int) int {
	if n != nil && n.Line > 0 {
		return n.Line
	}
	return fallback
}

// describe names a node's YAML type the way a user reads it.
func describe(n *yaml.Node) string {
	switch {
	case n == nil || isNull(n):
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	}
	switch n.ShortTag() {
	case "!!str":
		return fmt.Sprintf("the string %q", clip(n.Value))
	case "!!int":
		return "the integer " + clip(n.Value)
	case "!!float":
		return "the number " + clip(n.Value)
	case "!!bool":
		return n.Value
	}
	return fmt.Sprintf("%s %q", n.ShortTag(), clip(n.Value))
}

// valueRunes bounds a value a message quotes: a 50 MB value costs a line,
// not 50 MB of output, and the message says how long it was.
const valueRunes = 200

// quote is a value as a message shows it: quoted with its control and
// invisible characters escaped, cut to valueRunes with its length noted.
func quote(s string) string {
	n := utf8.RuneCountInString(s)
	if n <= valueRunes {
		return strconv.QuoteToGraphic(s)
	}
	return strconv.QuoteToGraphic(string([]rune(s[:min(len(s), 4*valueRunes)])[:valueRunes])) + fmt.Sprintf("… (%d characters)", n)
}

// keyText is a key as a message names it: as written when it is a short
// plain name, quoted otherwise (a key holding a newline or a terminal escape
// must not reach the output as it is).
func keyText(s string) string {
	if utf8.RuneCountInString(s) > valueRunes {
		return quote(s)
	}
	for _, r := range s {
		if !unicode.IsGraphic(r) || unicode.Is(unicode.Cf, r) || r == '"' || r == '\\' {
			return quote(s)
		}
	}
	return s
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// node returns a key's value, or nil when the key is absent or left empty.
func (s *section) node(key string) *yaml.Node {
	if n := s.vals[key]; !isNull(n) {
		return n
	}
	return nil
}

// scalar returns the value of a key that holds a value (a string, number,
// boolean or list), or nil when the key is absent. A key written without
// a value (`mandatory:`, `~`, `null`) is an input error, not the default:
// `mandatory:` with its value forgotten would otherwise make a mandatory
// slice an ordinary one without a word.
func (s *section) scalar(key string) *yaml.Node {
	n, ok := s.vals[key]
	if !ok {
		return nil
	}
	if isNull(n) {
		s.noValue(key, n, "write one, or remove the key")
		return nil
	}
	return n
}

// noValue reports that key was written without a value, once.
func (s *section) noValue(key string, n *yaml.Node, hint string) {
	if s.empty[key] {
		return
	}
	if s.empty == nil {
		s.empty = map[string]bool{}
	}
	s.empty[key] = true
	s.d.fail(nodeLine(n, s.line), s.key(key), "has no value; %s", hint)
}

// written reports whether key was written, with a value or without.
func (s *section) written(key string) bool {
	_, ok := s.vals[key]
	return ok
}

func (s *section) key(key string) string { return joinKey(s.path, key) }

func (s *section) require(keys ...string) {
	for _, k := range keys {
		n, present := s.vals[k]
		switch {
		case present && isNull(n) && k == "sha256":
			s.noValue(k, n, s.d.pinHint())
		case present && isNull(n):
			s.noValue(k, n, "it is required")
		case !present:
			s.d.fail(s.line, s.key(k), "required key is missing")
		}
	}
}

// str reads a non-empty string. Plain scalars that YAML would read as a date
// or number are taken as written, since these keys only ever hold text.
func (s *section) str(key string) (string, bool) {
	n := s.scalar(key)
	if n == nil {
		return "", false
	}
	if n.Kind != yaml.ScalarNode {
		s.d.fail(n.Line, s.key(key), "must be a string, got %s", describe(n))
		return "", false
	}
	switch n.ShortTag() {
	case "!!str", "!!int", "!!float", "!!timestamp":
	default:
		s.d.fail(n.Line, s.key(key), "must be a string, got %s", describe(n))
		return "", false
	}
	if strings.TrimSpace(n.Value) == "" {
		s.d.fail(n.Line, s.key(key), "must not be empty")
		return "", false
	}
	return n.Value, true
}

// relPath reads a path relative to the manifest's folder.
func (s *section) relPath(key string) (string, bool) {
	p, ok := s.str(key)
	if ok && strings.HasPrefix(p, "/") {
		s.d.fail(s.node(key).Line, s.key(key), "must be relative to the manifest's folder, got %s", quote(p))
		return "", false
	}
	return p, ok
}

func (s *section) enum(key string, options ...string) (string, bool) {
	v, ok := s.str(key)
	if ok && !contains(options, v) {
		s.d.fail(s.node(key).Line, s.key(key), "must be one of %s, got %s", strings.Join(options, " | "), quote(v))
		return "", false
	}
	return v, ok
}

// pinHint says how to write a file's digest into the manifest.
func (d *decoder) pinHint() string {
	return fmt.Sprintf("run `gradegate pin %s` to write the file's current digest", d.file)
}

func (s *section) digest(key string) (string, bool) {
	if n, ok := s.vals[key]; ok && isNull(n) {
		s.noValue(key, n, s.d.pinHint())
		return "", false
	}
	v, ok := s.str(key)
	if !ok {
		return "", false
	}
	if !ValidDigest(v) {
		s.d.fail(s.node(key).Line, s.key(key), "must be 64 lowercase hex digits, optionally prefixed \"sha256:\", got %q: %s", clip(v), s.d.pinHint())
		return "", false
	}
	return NormalizeDigest(v), true
}

func (s *section) boolean(key string) (bool, bool) {
	n := s.scalar(key)
	if n == nil {
		return false, false
	}
	var b bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
		s.d.fail(n.Line, s.key(key), "must be true or false, got %s", describe(n))
		return false, false
	}
	return b, true
}

// integer reads an int within [lo, hi].
func (s *section) integer(key string, lo, hi int) (int, bool) {
	n := s.scalar(key)
	if n == nil {
		return 0, false
	}
	var v int
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil {
		s.d.fail(n.Line, s.key(key), "must be an integer, got %s", describe(n))
		return 0, false
	}
	if v < lo || v > hi {
		s.d.fail(n.Line, s.key(key), "must be %s, got %d", rangeText(lo, hi), v)
		return 0, false
	}
	return v, true
}

func rangeText(lo, hi int) string {
	if hi == math.MaxInt {
		return fmt.Sprintf("at least %d", lo)
	}
	return fmt.Sprintf("between %d and %d", lo, hi)
}

// number reads a finite int or float.
func (s *section) number(key string) (float64, bool) {
	n := s.scalar(key)
	if n == nil {
		return 0, false
	}
	f, err := yamlNumber(n)
	if err != "" {
		s.d.fail(n.Line, s.key(key), "%s", err)
		return 0, false
	}
	return f, true
}

func yamlNumber(n *yaml.Node) (float64, string) {
	var f float64
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") || n.Decode(&f) != nil {
		return 0, fmt.Sprintf("must be a number, got %s", describe(n))
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Sprintf("must be a finite number, got %s", n.Value)
	}
	return f, ""
}

// fraction reads a number within [0, 1].
func (s *section) fraction(key string) (float64, bool) {
	f, ok := s.number(key)
	if ok && (f < 0 || f > 1) {
		s.d.fail(s.node(key).Line, s.key(key), "must be between 0 and 1, got %g", f)
		return 0, false
	}
	return f, ok
}

// strings reads a list of non-empty strings.
func (s *section) strings(key string) ([]string, bool) {
	n := s.scalar(key)
	if n == nil {
		return nil, false
	}
	if n.Kind != yaml.SequenceNode {
		s.d.fail(n.Line, s.key(key), "must be a list of strings, got %s", describe(n))
		return nil, false
	}
	out := make([]string, 0, len(n.Content))
	ok := true
	for i, e := range n.Content {
		e = resolve(e)
		if e.Kind != yaml.ScalarNode || e.ShortTag() != "!!str" || e.Value == "" {
			s.d.fail(e.Line, fmt.Sprintf("%s.%d", s.key(key), i), "must be a non-empty string, got %s", describe(e))
			ok = false
			continue
		}
		out = append(out, e.Value)
	}
	return out, ok
}

// MaxAliasExpansion bounds what YAML aliases may add to a manifest: the
// document, with every alias replaced by what it names, may hold at most this
// many times the nodes written in it (and never fewer than minExpandedNodes,
// so a small manifest keeps room for an anchor reused a few times). Without
// the bound nine levels of `&l0 [*l0, *l0, ...]` in 6 KB expand past 5 GB
// when a canary's sample or item is turned into JSON; mature YAML consumers
// refuse such a "billion laughs" the same way.
const (
	MaxAliasExpansion = 10
	minExpandedNodes  = 1000
)

// checkAliases refuses a document whose aliases expand it past the bound, or
// an anchor whose value contains an alias to itself (which would expand
// forever). It counts with memory of each node's expanded size, so the check
// itself costs one walk of the written nodes, however large the expansion.
func checkAliases(root *yaml.Node, file string) error {
	own := 0
	hasAlias := false
	var count func(n *yaml.Node)
	count = func(n *yaml.Node) {
		own++
		if n.Kind == yaml.AliasNode {
			hasAlias = true
			return
		}
		for _, c := range n.Content {
			count(c)
		}
	}
	count(root)
	if !hasAlias {
		return nil
	}
	limit := max(MaxAliasExpansion*own, minExpandedNodes)
	sizes := map[*yaml.Node]int{}
	const busy = -1
	var cycle *yaml.Node
	var size func(n *yaml.Node) int
	size = func(n *yaml.Node) int {
		if n.Kind == yaml.AliasNode {
			if n.Alias == nil {
				return 1
			}
			return size(n.Alias)
		}
		switch s, seen := sizes[n]; {
		case seen && s == busy:
			cycle = n
			return limit + 1
		case seen:
			return s
		}
		sizes[n] = busy
		total := 1
		for _, c := range n.Content {
			// Saturate: past the limit the exact count no longer matters.
			total = min(total+size(c), limit+1)
			if cycle != nil {
				break
			}
		}
		sizes[n] = total
		return total
	}
	total := size(root)
	if cycle != nil {
		name := cycle.Anchor
		return &Error{File: file, Line: cycle.Line, Msg: fmt.Sprintf("invalid YAML: anchor %q contains an alias to itself, which would expand forever", clip(name))}
	}
	if total > limit {
		return &Error{File: file, Line: root.Line, Msg: fmt.Sprintf(
			"invalid YAML: aliases expand the document past %d nodes, %d times the %d written in it; gradegate refuses such an expansion (write the values out, or reuse fewer anchors)",
			limit, MaxAliasExpansion, own)}
	}
	return nil
}
