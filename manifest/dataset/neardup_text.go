package dataset

import (
	"encoding/binary"
	"hash/maphash"
	"maps"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/gradegate/gradegate/manifest"
)

// minTextWords is the fewest words a string needs to count as text when
// near_duplicates.fields is not set: "USD" or "approved" is a category,
// not content that a duplicate would repeat.
const minTextWords = 5

// maxBoilerRaw bounds the spellings of context texts known by their bytes.
const maxBoilerRaw = 4096

// pathStep is one step of the path to the value being read: an object key
// (raw bytes of the item) or a list position.
type pathStep struct {
	key   []byte
	index int // -1 for an object key
}

// leaf is one compared string of an item.
type leaf struct {
	tag   uint64 // hash of the path without list positions
	exact uint64 // hash of the concrete path and the normalised text
	text  uint64 // hash of the normalised text alone
	words int
	// shingles is the leaf's shingle hashes, in text order, with repeats.
	shingles []uint64
}

// extractor finds the texts an item's rows are compared on, and hashes
// them. One extractor serves one screen; its buffers are reused row after
// row, so reading an item allocates nothing in the common case.
type extractor struct {
	skip     map[string]bool      // top-level fields never compared by default
	patterns []manifest.FieldPath // near_duplicates.fields; nil: the default rule
	seen     []bool               // seen[i]: some item has a value at patterns[i]
	// boiler holds the leaf texts (tag and text hash) left out as context.
	boiler map[[2]uint64]bool
	// boilerRaw knows context texts again by their bytes (see text).
	boilerRaw map[uint64]bool
	rawSeed   maphash.Seed
	// all passes on every string outside the skipped fields, short or
	// context, to learn the context texts.
	all bool
	// exactOnly leaves a leaf's shingles out, for a pass that needs only
	// its hashes.
	exactOnly bool

	path   []pathStep
	words  []uint64
	strBuf []byte
	keyBuf []byte

	// onLeaf receives each compared string; path is valid during the call.
	onLeaf func(l *leaf, path []pathStep)
	cur    leaf
}

// clone returns an extractor with the same rules and context texts, and
// buffers of its own, for another goroutine; it passes on shingles.
func (e *extractor) clone() *extractor {
	c := &extractor{skip: e.skip, patterns: e.patterns, seen: make([]bool, len(e.seen)),
		boiler: e.boiler, rawSeed: e.rawSeed, all: e.all}
	if e.boilerRaw != nil {
		c.boilerRaw = maps.Clone(e.boilerRaw)
	}
	return c
}

// item walks one item object and calls onLeaf for each compared string.
// It reports false when the bytes are not a JSON object after all.
func (e *extractor) item(data []byte) bool {
	e.path = e.path[:0]
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	return e.value(data, i) >= 0
}

// value reads the value at data[i] (the current path) and returns its end.
func (e *extractor) value(data []byte, i int) int {
	compared := len(e.path) > 0
	if e.patterns != nil {
		compared = false
		below := false
		for k, p := range e.patterns {
			switch matchPath(p, e.path) {
			case matchExact:
				e.seen[k] = true
				compared = true
			case matchInside:
				compared = true
			case matchPrefix:
				below = true
			}
		}
		if !compared && !below {
			return skipValue(data, i)
		}
	} else if len(e.path) == 1 && e.skip[string(e.path[0].key)] {
		return skipValue(data, i)
	}
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		end, esc := scanString(data, i)
		if end < 0 {
			return -1
		}
		if compared {
			text := data[i+1 : end-1]
			if esc {
				e.strBuf = unquote(data[i:end], true, e.strBuf[:0])
				text = e.strBuf
			}
			e.text(text)
		}
		return end
	case '{':
		i = skipSpace(data, i+1)
		for i < len(data) && data[i] == '"' {
			end, esc := scanString(data, i)
			if end < 0 {
				return -1
			}
			key := data[i+1 : end-1]
			if esc {
				e.keyBuf = unquote(data[i:end], true, e.keyBuf[:0])
				key = append([]byte(nil), e.keyBuf...)
			}
			i = skipSpace(data, end)
			if i >= len(data) || data[i] != ':' {
				return -1
			}
			e.path = append(e.path, pathStep{key: key, index: -1})
			i = e.value(data, skipSpace(data, i+1))
			e.path = e.path[:len(e.path)-1]
			if i < 0 {
				return -1
			}
			i = skipSpace(data, i)
			if i < len(data) && data[i] == ',' {
				i = skipSpace(data, i+1)
			}
		}
		if i >= len(data) || data[i] != '}' {
			return -1
		}
		return i + 1
	case '[':
		i = skipSpace(data, i+1)
		for n := 0; i < len(data) && data[i] != ']'; n++ {
			e.path = append(e.path, pathStep{index: n})
			i = e.value(data, i)
			e.path = e.path[:len(e.path)-1]
			if i < 0 {
				return -1
			}
			i = skipSpace(data, i)
			if i < len(data) && data[i] == ',' {
				i = skipSpace(data, i+1)
			}
		}
		if i >= len(data) {
			return -1
		}
		return i + 1
	default:
		return skipValue(data, i)
	}
}

// How a pattern relates to the path of a value.
const (
	matchNone   = iota
	matchPrefix // the path leads towards the pattern: read on
	matchExact  // the path is the pattern
	matchInside // the path is inside the value the pattern names
)

func matchPath(p manifest.FieldPath, path []pathStep) int {
	n := min(len(p), len(path))
	for k := range n {
		st, ps := p[k], path[k]
		if st.IsList() {
			if ps.index < 0 || (st.Index != manifest.AnyIndex && st.Index != ps.index) {
				return matchNone
			}
		} else if ps.index >= 0 || st.Key != string(ps.key) {
			return matchNone
		}
	}
	switch {
	case len(path) < len(p):
		return matchPrefix
	case len(path) == len(p):
		return matchExact
	default:
		return matchInside
	}
}

// text hashes one string value at the current path and passes it on when
// it is compared.
func (e *extractor) text(s []byte) {
	tag := pathTag(e.path)
	var raw uint64
	if len(e.boiler) > 0 && !e.all {
		// A context text recurs byte for byte in most rows: know it
		// again by a fast hash of its bytes rather than reading its words.
		raw = maphash.Bytes(e.rawSeed, s) ^ tag
		if e.boilerRaw[raw] {
			return
		}
	}
	words, exact := e.splitWords(s)
	if len(words) == 0 {
		return
	}
	if e.patterns == nil && len(words) < minTextWords && !e.all {
		return
	}
	if e.boiler[[2]uint64{tag, exact}] && !e.all {
		if len(e.boilerRaw) < maxBoilerRaw {
			e.boilerRaw[raw] = true
		}
		return
	}
	l := &e.cur
	l.tag, l.text, l.words = tag, exact, len(words)
	l.exact = mix64(concretePathHash(e.path) ^ mix64(exact))
	l.shingles = l.shingles[:0]
	n := max(1, len(words)-shingleWords+1)
	if e.exactOnly {
		n = 0
	}
	for i := range n {
		h := tag
		for k, w := range words[i:min(i+shingleWords, len(words))] {
			h += w * shinglePrimes[k]
		}
		l.shingles = append(l.shingles, mix64(h))
	}
	e.onLeaf(l, e.path)
}

var shinglePrimes = [shingleWords]uint64{0x9e3779b97f4a7c15, 0xc2b2ae3d27d4eb4f, 0x165667b19e3779f9, 0xd6e8feb86659fd93, 0xff51afd7ed558ccd}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// Byte classes for the ASCII fast path of splitWords.
const (
	classOther = iota
	classWord
	classSpace
	classMulti // the first byte of a multi-byte rune, or a byte inside one
)

// byteClass classifies each byte; it is never written after initialisation.
var byteClass = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c >= utf8.RuneSelf:
			t[c] = classMulti
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
			t[c] = classWord
		case c == ' ', c == '\t', c == '\n', c == '\r', c == '\v', c == '\f':
			t[c] = classSpace
		}
	}
	return t
}()

// splitWords hashes the words of s (runs of letters and digits, lower
// case) into e.words, and returns with them a hash of s in lower case with
// each run of white space made one space and the ends trimmed. ASCII runs
// are hashed eight bytes at a time; other runes one by one.
func (e *extractor) splitWords(s []byte) (words []uint64, exact uint64) {
	words = e.words[:0]
	exact = fnvOffset
	var (
		w       uint64
		inWord  bool
		started bool
		space   bool
	)
	for i := 0; i < len(s); {
		c := s[i]
		var (
			chunk  uint64
			isWord bool
		)
		if class := byteClass[c]; class != classMulti {
			switch class {
			case classWord:
				j := i + 1
				for j < len(s) && byteClass[s[j]] == classWord {
					j++
				}
				chunk, isWord = hashLowerASCII(s, i, j), true
				i = j
			case classSpace:
				i++
				space = started
				if inWord {
					words = append(words, w)
					inWord = false
				}
				continue
			default:
				i++
				chunk = uint64(c) | punctMark
			}
		} else {
			r, size := utf8.DecodeRune(s[i:])
			i += size
			if unicode.IsSpace(r) {
				space = started
				if inWord {
					words = append(words, w)
					inWord = false
				}
				continue
			}
			r = unicode.ToLower(r)
			chunk, isWord = mix64(uint64(r)|runeMark), unicode.IsLetter(r) || unicode.IsDigit(r)
		}
		if space {
			exact = (exact ^ spaceMark) * fnvPrime
			space = false
		}
		started = true
		exact = (exact ^ chunk) * fnvPrime
		switch {
		case isWord && inWord:
			w = (w ^ chunk) * fnvPrime
		case isWord:
			w, inWord = chunk, true
		case inWord:
			words = append(words, w)
			inWord = false
		}
	}
	if inWord {
		words = append(words, w)
	}
	e.words = words
	return words, exact
}

// Marks keep a punctuation byte, a rune and a space from hashing like a
// word.
const (
	punctMark = 1 << 62
	runeMark  = 1 << 61
	spaceMark = 1<<60 | ' '
)

// hashLowerASCII hashes s[i:j], a run of ASCII letters and digits, in lower
// case: setting bit 0x20 lowers a letter and leaves a digit as it is. A
// run of up to eight bytes is one load when s has eight bytes from i.
func hashLowerASCII(s []byte, i, j int) uint64 {
	n := j - i
	h := uint64(n) * 0x9e3779b97f4a7c15
	for j-i >= 8 {
		v := binary.LittleEndian.Uint64(s[i:]) | 0x2020202020202020
		h = (h ^ v) * 0xbf58476d1ce4e5b9
		h ^= h >> 31
		i += 8
	}
	var v uint64
	if rest := j - i; rest > 0 {
		if len(s)-i >= 8 {
			mask := uint64(1)<<(8*rest) - 1
			v = (binary.LittleEndian.Uint64(s[i:]) | 0x2020202020202020) & mask
		} else {
			for k, c := range s[i:j] {
				v |= uint64(c|0x20) << (8 * k)
			}
		}
	}
	h = (h ^ v) * 0x94d049bb133111eb
	return h ^ h>>29
}

// pathTag hashes a path without its list positions, so the same text in
// another message of a conversation still matches, while words never join
// across fields and a text never matches the same words in another field.
func pathTag(path []pathStep) uint64 {
	h := uint64(fnvOffset)
	for _, st := range path {
		if st.index >= 0 {
			h = (h ^ '[') * fnvPrime
			continue
		}
		h = (h ^ '.') * fnvPrime
		for _, c := range st.key {
			h = (h ^ uint64(c)) * fnvPrime
		}
	}
	return mix64(h)
}

// concretePathHash hashes a path with its list positions.
func concretePathHash(path []pathStep) uint64 {
	h := uint64(fnvOffset)
	for _, st := range path {
		if st.index >= 0 {
			h = (h ^ '[') * fnvPrime
			h = (h ^ uint64(st.index)) * fnvPrime
			continue
		}
		h = (h ^ '.') * fnvPrime
		for _, c := range st.key {
			h = (h ^ uint64(c)) * fnvPrime
		}
	}
	return h
}

// appendPath writes a path as findings name it, messages[1].content, to b.
func appendPath(b []byte, path []pathStep) []byte {
	for i, st := range path {
		if st.index >= 0 {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(st.index), 10)
			b = append(b, ']')
			continue
		}
		if i > 0 {
			b = append(b, '.')
		}
		b = append(b, st.key...)
	}
	return b
}

// mix64 is the splitmix64 finaliser: every input bit moves every output bit.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
