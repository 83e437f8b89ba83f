package dataset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of objects and arrays a dataset or samples
// line may have. Python's json module recurses once per level and stops at
// its recursion limit (1000 by default, less what the worker's own frames
// use), so a row nested deeper than this could be accepted here and then
// fail to decode in the grader's process; 256 leaves a wide margin and is
// far deeper than any real eval item.
const MaxDepth = 256

// member is one key and value of a JSON object, the value as a span of the
// line (not copied).
type member struct {
	key  string
	kraw []byte // the key as written, quotes included
	val  []byte
}

// repeatedMsg says why a key given twice is refused.
const repeatedMsg = "given twice; Python's json keeps the last value and a reader of the file may take the first, so the line is refused rather than read one way in review and another in the grader"

// repeatedKey returns a key ms holds more than once. A line's members are
// few (a dataset item has about ten), so the common case compares them
// pairwise; the keys of a line come from one table and mostly share their
// bytes.
func repeatedKey(ms []member) (string, bool) {
	if len(ms) <= 16 {
		for i := 1; i < len(ms); i++ {
			for j := range i {
				if ms[i].key == ms[j].key {
					return ms[i].key, true
				}
			}
		}
		return "", false
	}
	seen := make(map[string]struct{}, len(ms))
	for _, m := range ms {
		if _, ok := seen[m.key]; ok {
			return m.key, true
		}
		seen[m.key] = struct{}{}
	}
	return "", false
}

// Member is one key of a JSON object and its value as written.
type Member struct {
	Key string
	Val []byte // a span of the object's bytes (capacity cut to it), not a copy
}

// Members lists the members of the JSON object raw in the order written,
// found by the reader's own scanner in one pass: false when raw is not one
// JSON object, or is one Python's json would refuse (invalid UTF-8,
// nesting past MaxDepth, an integer past MaxIntDigits). A repeated key is
// listed each time.
func Members(raw []byte) ([]Member, bool) {
	sc := scanLine(raw, "")
	if sc.syntax || sc.unreadable != "" {
		return nil, false
	}
	out := make([]Member, len(sc.top))
	for i, m := range sc.top {
		out[i] = Member{Key: m.key, Val: m.val[:len(m.val):len(m.val)]}
	}
	return out, true
}

// scanned is what one pass over a JSON line found.
type scanned struct {
	top  []member // the line object's members, in order
	item []member // the members of top["item"] (or top["sample"]'s owner), when it is an object
	// unreadable says why Python would refuse the line although it is
	// well-formed JSON: invalid UTF-8 in a string, or nesting deeper than
	// MaxDepth. Empty when it would not.
	unreadable string
	syntax     bool // not well-formed JSON: the caller asks encoding/json why
}

// lineScanner walks one JSON line once: it checks the grammar, that every
// string is valid UTF-8 and that nesting stays within MaxDepth, and records
// the spans of the top-level members and of the members of the object under
// nestKey ("item" for a dataset line). Nothing is decoded or copied.
type lineScanner struct {
	data    []byte
	i       int
	depth   int
	nestKey string
	// captureItem is set while the object under nestKey is scanned.
	captureItem bool
	out         scanned
	keys        *keyTable // nil: every key is a new string
}

// keyTable hands out one string per distinct key: the rows of a dataset
// share their keys, so a key costs an allocation once, not once a row. It
// also remembers how many members the last line had, at the top and in the
// item, so the next line's lists are allocated once at that size instead
// of grown from empty.
type keyTable struct {
	m           map[string]string
	tops, items int
}

// maxKeys bounds a table: a dataset whose keys are all different (ids used
// as keys) gets new strings past it, not an ever-growing table.
const maxKeys = 4096

func (t *keyTable) get(b []byte) string {
	if k, ok := t.m[string(b)]; ok {
		return k
	}
	k := string(b)
	if t.m == nil {
		t.m = map[string]string{}
	}
	if len(t.m) < maxKeys {
		t.m[k] = k
	}
	return k
}

// scanLine scans one JSON line that should hold an object.
func scanLine(data []byte, nestKey string) scanned {
	return scanLineKeys(data, nestKey, nil)
}

// scanLineKeys is scanLine with keys taken from a table.
func scanLineKeys(data []byte, nestKey string, keys *keyTable) scanned {
	s := lineScanner{data: data, nestKey: nestKey, keys: keys}
	if keys != nil {
		s.out.top = make([]member, 0, max(keys.tops, 2))
		s.out.item = make([]member, 0, max(keys.items, 4))
		defer func() { keys.tops, keys.items = len(s.out.top), len(s.out.item) }()
	}
	s.ws()
	if s.i >= len(s.data) || s.data[s.i] != '{' {
		// Not an object: whatever it is, encoding/json says what is wrong
		// or what kind of value it is.
		s.out.syntax = true
		return s.out
	}
	if !s.object(1) {
		s.out.syntax = s.out.unreadable == "" || s.out.syntax
		return s.out
	}
	s.ws()
	if s.i != len(s.data) {
		s.out.syntax = true
	}
	return s.out
}

func (s *lineScanner) ws() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value scans one value at nesting level (1 for the line object's members).
func (s *lineScanner) value(level int) bool {
	if s.i >= len(s.data) {
		return false
	}
	switch c := s.data[s.i]; {
	case c == '{':
		return s.object(level + 1)
	case c == '[':
		return s.array(level + 1)
	case c == '"':
		_, ok := s.str()
		return ok
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	}
	return false
}

func (s *lineScanner) enter() bool {
	s.depth++
	if s.depth > MaxDepth {
		s.out.unreadable = "nested deeper than " + itoa(MaxDepth) + " levels, which Python's json module may refuse"
		return false
	}
	return true
}

// object scans an object; at level 1 its members are recorded in out.top,
// and at level 2 those of the member named nestKey in out.item.
func (s *lineScanner) object(level int) bool {
	if !s.enter() {
		return false
	}
	s.i++ // {
	s.ws()
	if s.i < len(s.data) && s.data[s.i] == '}' {
		s.i++
		s.depth--
		return true
	}
	for {
		s.ws()
		if s.i >= len(s.data) || s.data[s.i] != '"' {
			return false
		}
		keyStart := s.i
		plain, ok := s.str()
		if !ok {
			return false
		}
		keyEnd := s.i
		s.ws()
		if s.i >= len(s.data) || s.data[s.i] != ':' {
			return false
		}
		s.i++
		s.ws()
		valStart := s.i
		var key string
		if level <= 2 {
			if plain && s.keys != nil {
				key = s.keys.get(s.data[keyStart+1 : keyEnd-1])
			} else {
				key = keyString(s.data[keyStart:keyEnd], plain)
			}
		}
		nested := level == 1 && key == s.nestKey
		if nested && s.i < len(s.data) && s.data[s.i] == '{' {
			// A repeated key: the last one wins, as in encoding/json and Python.
			s.out.item = s.out.item[:0]
			s.captureItem = true
			ok := s.object(level + 1)
			s.captureItem = false
			if !ok {
				return false
			}
		} else if !s.value(level) {
			return false
		}
		switch {
		case level == 1:
			s.out.top = append(s.out.top, member{key, s.data[keyStart:keyEnd], s.data[valStart:s.i]})
		case level == 2 && s.captureItem:
			s.out.item = append(s.out.item, member{key, s.data[keyStart:keyEnd], s.data[valStart:s.i]})
		}
		s.ws()
		if s.i >= len(s.data) {
			return false
		}
		switch s.data[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			s.depth--
			return true
		default:
			return false
		}
	}
}

func (s *lineScanner) array(level int) bool {
	if !s.enter() {
		return false
	}
	s.i++ // [
	s.ws()
	if s.i < len(s.data) && s.data[s.i] == ']' {
		s.i++
		s.depth--
		return true
	}
	for {
		s.ws()
		if !s.value(level) {
			return false
		}
		s.ws()
		if s.i >= len(s.data) {
			return false
		}
		switch s.data[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			s.depth--
			return true
		default:
			return false
		}
	}
}

// str scans a string; plain reports that it has no escapes, so its bytes
// between the quotes are its value.
func (s *lineScanner) str() (plain, ok bool) {
	s.i++ // opening quote
	plain = true
	for s.i < len(s.data) {
		// The run of plain ASCII first, in locals: most of a long text.
		d, i := s.data, s.i
		for i < len(d) && d[i] >= 0x20 && d[i] < utf8.RuneSelf && d[i] != '"' && d[i] != '\\' {
			i++
		}
		s.i = i
		if i == len(d) {
			break
		}
		c := s.data[s.i]
		switch {
		case c == '"':
			s.i++
			return plain, true
		case c == '\\':
			plain = false
			s.i++
			if s.i >= len(s.data) {
				return false, false
			}
			switch s.data[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				if s.i+5 > len(s.data) {
					return false, false
				}
				for _, h := range s.data[s.i+1 : s.i+5] {
					if !isHex(h) {
						return false, false
					}
				}
				s.i += 5
			default:
				return false, false
			}
		case c < 0x20:
			return false, false
		case c < utf8.RuneSelf:
			s.i++
		default:
			r, size := utf8.DecodeRune(s.data[s.i:])
			if r == utf8.RuneError && size <= 1 && s.out.unreadable == "" {
				s.out.unreadable = "a string holds bytes that are not valid UTF-8, which Python's json module refuses"
			}
			s.i += max(size, 1)
		}
	}
	return false, false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func (s *lineScanner) lit(word string) bool {
	if !bytes.HasPrefix(s.data[s.i:], []byte(word)) {
		return false
	}
	s.i += len(word)
	return true
}

// MaxIntDigits is how many digits an integer may have: past it Python's
// int() refuses the string (int_max_str_digits, 4,300 by default since
// Python 3.11 and the security releases of 2022), and so does its json
// module. A float has no such bound: Python reads it with float().
const MaxIntDigits = 4300

// number scans -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? and marks the
// row unreadable when it is an integer past MaxIntDigits.
func (s *lineScanner) number() bool {
	d := s.data
	if s.i < len(d) && d[s.i] == '-' {
		s.i++
	}
	start := s.i
	switch {
	case s.i < len(d) && d[s.i] == '0':
		s.i++
	case s.i < len(d) && d[s.i] >= '1' && d[s.i] <= '9':
		s.digits()
	default:
		return false
	}
	intDigits, integer := s.i-start, true
	if s.i < len(d) && d[s.i] == '.' {
		s.i++
		if !s.digits() {
			return false
		}
		integer = false
	}
	if s.i < len(d) && (d[s.i] == 'e' || d[s.i] == 'E') {
		s.i++
		if s.i < len(d) && (d[s.i] == '+' || d[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return false
		}
		integer = false
	}
	if integer && intDigits > MaxIntDigits && s.out.unreadable == "" {
		s.out.unreadable = fmt.Sprintf("an integer of %d digits, past the %d Python's int() reads, which Python's json module refuses", intDigits, MaxIntDigits)
	}
	return true
}

func (s *lineScanner) digits() bool {
	start := s.i
	for s.i < len(s.data) && s.data[s.i] >= '0' && s.data[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// keyString is a key's value from its quoted span.
func keyString(quoted []byte, plain bool) string {
	if plain {
		return string(quoted[1 : len(quoted)-1])
	}
	var k string
	if json.Unmarshal(quoted, &k) != nil {
		return string(quoted)
	}
	return k
}

// stringValue reads a JSON string value from its span; ok is false when
// the span is not a string.
func stringValue(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	return v, true
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for n >= 10 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	i--
	b[i] = byte('0' + n)
	return string(b[i:])
}
