package dataset

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// The near-duplicate screen reads each item once, as bytes that the reader
// has already checked to be valid JSON, and only needs its strings and their
// paths: a small scanner does that without building a map of every value.
// Each function takes the position of a value's first byte (after any
// whitespace) and returns the position just past it; on bytes that are not
// JSON after all it returns -1, and the row is simply not compared.

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanString returns the end of the string starting at data[i] == '"', and
// whether it holds an escape.
func scanString(data []byte, i int) (end int, escaped bool) {
	rest := data[i+1:]
	q := bytes.IndexByte(rest, '"')
	if q < 0 {
		return -1, false
	}
	if bytes.IndexByte(rest[:q], '\\') < 0 {
		return i + 1 + q + 1, false
	}
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '"':
			return j + 1, true
		case '\\':
			j++
		}
	}
	return -1, true
}

// skipValue returns the end of the value starting at data[i].
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		end, _ := scanString(data, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, _ := scanString(data, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default: // number, true, false, null
		j := i
		for j < len(data) {
			switch data[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if j == i {
					// No value at all ("[}"): not JSON. Returning i would
					// leave an array's loop where it was, for ever.
					return -1
				}
				return j
			}
			j++
		}
		return j
	}
}

// unquote returns the text of the JSON string raw (with its quotes),
// unescaped into buf when it holds escapes.
func unquote(raw []byte, escaped bool, buf []byte) []byte {
	s := raw[1 : len(raw)-1]
	if !escaped {
		return s
	}
	buf = buf[:0]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			buf = append(buf, c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			buf = append(buf, '\n')
		case 't':
			buf = append(buf, '\t')
		case 'r':
			buf = append(buf, '\r')
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'u':
			r, n := hex4(s[i+1:])
			if n == 0 {
				buf = append(buf, '\\', 'u')
				continue
			}
			i += n
			if utf16.IsSurrogate(r) && i+2 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				if r2, n2 := hex4(s[i+3:]); n2 > 0 {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						r = dec
						i += 2 + n2
					}
				}
			}
			buf = utf8.AppendRune(buf, r)
		default: // '"', '\\', '/'
			buf = append(buf, s[i])
		}
	}
	return buf
}

// hex4 reads the four hex digits of a \u escape.
func hex4(s []byte) (rune, int) {
	if len(s) < 4 {
		return 0, 0
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, 0
		}
	}
	return r, 4
}

// objectField returns the value of key in the JSON object data (the last
// of a repeated key, as the reader and Python take it), or nil.
func objectField(data []byte, key string) []byte {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil
	}
	i = skipSpace(data, i+1)
	var buf, found []byte
	for i < len(data) && data[i] == '"' {
		end, esc := scanString(data, i)
		if end < 0 {
			return nil
		}
		k := unquote(data[i:end], esc, buf)
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return nil
		}
		i = skipSpace(data, i+1)
		vend := skipValue(data, i)
		if vend < 0 {
			return nil
		}
		if string(k) == key {
			found = data[i:vend] // the last of a repeated key, as the reader takes it
		}
		i = skipSpace(data, vend)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return found
}
