package metamorphic

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
)

// node is one JSON value with its object keys in the order written:
// encoding/json's maps would lose the order, and the order is what the
// keys-reordered variant changes.
type node struct {
	kind byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	keys []string
	vals []*node
	lit  string // a string's value, a number's literal, "true" or "false"
}

// parseJSON reads exactly one JSON value (whitespace around it allowed).
func parseJSON(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return n, nil
}

func parseValue(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	return parseToken(dec, tok)
}

func parseToken(dec *json.Decoder, tok json.Token) (*node, error) {
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &node{kind: 'o'}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := k.(string)
				if !ok {
					return nil, errors.New("object key is not a string")
				}
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, key)
				n.vals = append(n.vals, v)
			}
			_, err := dec.Token()
			return n, err
		case '[':
			n := &node{kind: 'a'}
			for dec.More() {
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				n.vals = append(n.vals, v)
			}
			_, err := dec.Token()
			return n, err
		}
		return nil, errors.New("unexpected delimiter")
	case string:
		return &node{kind: 's', lit: t}, nil
	case json.Number:
		return &node{kind: 'n', lit: t.String()}, nil
	case bool:
		return &node{kind: 'b', lit: strconv.FormatBool(t)}, nil
	case nil:
		return &node{kind: 'z'}, nil
	}
	return nil, errors.New("unexpected token")
}

// style is how a tree is written out.
type style struct {
	indent    string // "" compact
	reverse   bool   // object keys in reverse order
	escapeAll bool   // every character of every string as a \u escape
}

func (n *node) encode(st style) string {
	var b strings.Builder
	n.write(&b, st, 0)
	return b.String()
}

func (n *node) write(b *strings.Builder, st style, depth int) {
	newline := func(d int) {
		if st.indent != "" {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat(st.indent, d))
		}
	}
	colon := ":"
	if st.indent != "" {
		colon = ": "
	}
	switch n.kind {
	case 'o':
		b.WriteByte('{')
		for j := range n.keys {
			i := j
			if st.reverse {
				i = len(n.keys) - 1 - j
			}
			if j > 0 {
				b.WriteByte(',')
			}
			newline(depth + 1)
			writeString(b, n.keys[i], st.escapeAll)
			b.WriteString(colon)
			n.vals[i].write(b, st, depth+1)
		}
		if len(n.keys) > 0 {
			newline(depth)
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for i, v := range n.vals {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(depth + 1)
			v.write(b, st, depth+1)
		}
		if len(n.vals) > 0 {
			newline(depth)
		}
		b.WriteByte(']')
	case 's':
		writeString(b, n.lit, st.escapeAll)
	case 'n', 'b':
		b.WriteString(n.lit)
	default:
		b.WriteString("null")
	}
}

func writeString(b *strings.Builder, s string, escapeAll bool) {
	if !escapeAll {
		// encoding/json's Marshal escapes <, > and & for HTML; a model's
		// JSON does not, and a variant must differ from the original only
		// where it means to.
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.Encode(s) // a string always encodes
		b.Write(bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}))
		return
	}
	b.WriteByte('"')
	for _, r := range s {
		for _, u := range utf16.Encode([]rune{r}) {
			b.WriteString(`\u`)
			h := strconv.FormatUint(uint64(u), 16)
			b.WriteString(strings.Repeat("0", 4-len(h)))
			b.WriteString(h)
		}
	}
	b.WriteByte('"')
}

// clone copies a tree.
func (n *node) clone() *node {
	c := &node{kind: n.kind, lit: n.lit, keys: append([]string(nil), n.keys...)}
	for _, v := range n.vals {
		c.vals = append(c.vals, v.clone())
	}
	return c
}

// site is one place in a tree: its path for people, and the node.
type site struct {
	path string
	n    *node
	// parent and index locate it, for replacing or deleting it; parent is
	// nil for the root.
	parent *node
	index  int
}

// sites lists every node of a tree in document order.
func (n *node) sites() []site {
	var out []site
	var walk func(path string, x, parent *node, i int)
	walk = func(path string, x, parent *node, i int) {
		out = append(out, site{path: path, n: x, parent: parent, index: i})
		switch x.kind {
		case 'o':
			for k, key := range x.keys {
				p := key
				if path != "" {
					p = path + "." + key
				}
				walk(p, x.vals[k], x, k)
			}
		case 'a':
			for k, v := range x.vals {
				walk(path+"["+strconv.Itoa(k)+"]", v, x, k)
			}
		}
	}
	walk("", n, nil, 0)
	return out
}
