package manifest

import (
	"fmt"
	"strconv"
	"strings"
)

// FieldPath names a value inside an item: a top-level field, then object
// keys after dots and list positions in brackets, as in
// "messages[].content" (the content of every message), "messages[1].content"
// (the second message only) or "reference.answer". A key cannot itself hold
// '.', '[' or ']'.
type FieldPath []PathStep

// PathStep is one step of a FieldPath: an object key, or a list position.
type PathStep struct {
	Key   string // the object key; "" for a list step
	Index int    // the list position; AnyIndex for "[]"
}

// AnyIndex is the Index of a "[]" step: every element of the list.
const AnyIndex = -1

// IsList reports whether the step goes into a list rather than an object.
func (s PathStep) IsList() bool { return s.Key == "" }

// ParseFieldPath reads a field path. The error says what is wrong with it.
func ParseFieldPath(s string) (FieldPath, error) {
	var p FieldPath
	rest := s
	for first := true; rest != ""; first = false {
		switch {
		case rest[0] == '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("%q has a '[' without its ']'", s)
			}
			if first {
				return nil, fmt.Errorf("%q starts with a list position; it must start with a field name", s)
			}
			idx := AnyIndex
			if inner := rest[1:end]; inner != "" {
				n, err := strconv.Atoi(inner)
				if err != nil || n < 0 || strings.TrimLeft(inner, "0123456789") != "" {
					return nil, fmt.Errorf("%q has [%s]; a list position is [] or a number from 0", s, inner)
				}
				idx = n
			}
			p = append(p, PathStep{Index: idx})
			rest = rest[end+1:]
		case rest[0] == '.' && !first:
			rest = rest[1:]
			fallthrough
		default:
			end := strings.IndexAny(rest, ".[]")
			if end < 0 {
				end = len(rest)
			}
			if end == 0 {
				return nil, fmt.Errorf("%q has an empty field name", s)
			}
			p = append(p, PathStep{Key: rest[:end]})
			rest = rest[end:]
			if rest != "" && rest[0] != '.' && rest[0] != '[' {
				return nil, fmt.Errorf("%q has a ']' without its '['", s)
			}
			if rest == "." {
				return nil, fmt.Errorf("%q has an empty field name", s)
			}
		}
	}
	if len(p) == 0 {
		return nil, fmt.Errorf("%q is empty", s)
	}
	return p, nil
}

// String writes the path back in the syntax ParseFieldPath reads.
func (p FieldPath) String() string {
	var b strings.Builder
	for i, st := range p {
		switch {
		case !st.IsList():
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(st.Key)
		case st.Index == AnyIndex:
			b.WriteString("[]")
		default:
			fmt.Fprintf(&b, "[%d]", st.Index)
		}
	}
	return b.String()
}
