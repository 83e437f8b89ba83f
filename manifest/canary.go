package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

func canaryKeys() []string {
	return []string{"name", "sample", "item", "expect", "expect_error", "tolerance"}
}

// canaries reads the canaries key: an inline list, or {path: FILE} whose
// path is returned for Load to read.
func (d *decoder) canaries(n *yaml.Node, line int) ([]Canary, string) {
	switch n.Kind {
	case yaml.SequenceNode:
		list := make([]Canary, 0, len(n.Content))
		for i, item := range n.Content {
			item = resolve(item)
			key := fmt.Sprintf("canaries.%d", i)
			d.lines[key] = item.Line
			if c, ok := d.canary(item, key); ok {
				list = append(list, c)
			}
		}
		return list, ""
	case yaml.MappingNode:
		s, ok := d.mapping(n, "canaries", line, "path")
		if !ok {
			return nil, ""
		}
		s.require("path")
		p, _ := s.relPath("path")
		return nil, p
	}
	d.fail(nodeLine(n, line), "canaries", "must be a list of canaries or {path: FILE}, got %s", describe(n))
	return nil, ""
}

func (d *decoder) canary(n *yaml.Node, key string) (Canary, bool) {
	before := len(d.errs)
	s, ok := d.mapping(n, key, n.Line, canaryKeys()...)
	if !ok {
		return Canary{}, false
	}
	s.require("name", "sample", "item")
	c := Canary{File: d.file, Line: n.Line}
	c.Name, _ = s.str("name")
	for _, f := range []struct {
		field string
		dst   *json.RawMessage
	}{{"sample", &c.Sample}, {"item", &c.Item}} {
		field, dst := f.field, f.dst
		v := s.node(field)
		if v == nil {
			continue
		}
		if v.Kind != yaml.MappingNode {
			d.fail(v.Line, s.key(field), "must be a mapping, got %s", describe(v))
			continue
		}
		raw, bad := yamlToJSON(v)
		if bad != nil {
			d.fail(bad.line, s.key(field), "%s", bad.msg)
			continue
		}
		*dst = raw
	}
	expect, expectOK := s.number("expect")
	if expectOK {
		c.Expect = &expect
	}
	var expectErrorOK bool
	c.ExpectError, expectErrorOK = s.boolean("expect_error")
	// A mistyped expect or expect_error is reported once, by its own check.
	mistyped := (s.written("expect") && !expectOK) || (s.written("expect_error") && !expectErrorOK)
	tol, hasTol := s.number("tolerance")
	c.Tolerance = tol
	for _, p := range canaryRules(c, mistyped, hasTol) {
		line := n.Line
		if v := s.node(p.key); v != nil {
			line = v.Line
		}
		d.fail(line, s.key(p.key), "%s", p.msg)
	}
	return c, len(d.errs) == before
}

type problem struct {
	key, msg string
}

// canaryRules checks what a canary must say about its outcome, wherever the
// canary was written.
func canaryRules(c Canary, mistyped, hasTolerance bool) []problem {
	var ps []problem
	switch {
	case mistyped:
	case c.Expect != nil && c.ExpectError:
		ps = append(ps, problem{"expect_error", "set either expect or expect_error: true, not both"})
	case c.Expect == nil && !c.ExpectError:
		ps = append(ps, problem{"expect", "required: the exact reward the grader must return, or expect_error: true when it must raise"})
	}
	if hasTolerance {
		switch {
		case c.Tolerance < 0:
			ps = append(ps, problem{"tolerance", fmt.Sprintf("must not be negative, got %g", c.Tolerance)})
		case c.ExpectError:
			ps = append(ps, problem{"tolerance", "applies to expect only, not to expect_error"})
		}
	}
	return ps
}

// checkCanaries applies the rules over a whole canary set: unique names, and
// at least one positive and one negative at threshold, since a grader
// that can only pass (or only fail) is exactly what canaries must catch.
// file and line point at the canaries key of the manifest.
func checkCanaries(list []Canary, threshold float64, file string, line int) []*Error {
	var errs []*Error
	first := map[string]Canary{}
	for _, c := range list {
		if prev, dup := first[c.Name]; dup {
			where := fmt.Sprintf("line %d", prev.Line)
			if prev.File != c.File {
				where = fmt.Sprintf("%s:%d", prev.File, prev.Line)
			}
			errs = append(errs, &Error{File: c.File, Line: c.Line, Key: "canaries", Msg: fmt.Sprintf("duplicate canary name %s (first at %s)", quote(c.Name), where)})
			continue
		}
		first[c.Name] = c
	}
	var pos, neg bool
	for _, c := range list {
		pos = pos || c.Positive(threshold)
		neg = neg || c.Negative(threshold)
	}
	var missing []string
	if !pos {
		missing = append(missing, fmt.Sprintf("a positive canary (expect >= pass_threshold %g)", threshold))
	}
	if !neg {
		missing = append(missing, fmt.Sprintf("a negative canary (expect < %g; an expect_error canary does not count: raising on a broken fixture is not failing a candidate)", threshold))
	}
	if len(missing) > 0 {
		errs = append(errs, &Error{File: file, Line: line, Key: "canaries", Msg: fmt.Sprintf("needs at least one positive and one negative canary; missing %s", strings.Join(missing, " and "))})
	}
	return errs
}

// parseCanaries reads a canaries file: JSON Lines, one canary per line,
// blank lines skipped.
func parseCanaries(data []byte, file string) ([]Canary, []*Error) {
	var list []Canary
	var errs []*Error
	for i, text := range bytes.Split(data, []byte("\n")) {
		lineNo := i + 1
		text = bytes.TrimSpace(text)
		if len(text) == 0 {
			continue
		}
		fail := func(key, format string, args ...any) {
			errs = append(errs, &Error{File: file, Line: lineNo, Key: key, Msg: fmt.Sprintf(format, args...)})
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(text, &obj); err != nil || obj == nil {
			fail("", "must be one JSON object per line: %v", jsonProblem(err))
			continue
		}
		if k, ok := repeatedKey(text); ok {
			fail(k, "given twice; a JSON object's repeated key is read as its last value, so the line is refused rather than read one way in review and another by gradegate")
			continue
		}
		before := len(errs)
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if !contains(canaryKeys(), k) {
				fail(k, "unknown key%s; expected one of: %s", suggest(k, canaryKeys()), strings.Join(canaryKeys(), ", "))
			}
		}
		c := Canary{File: file, Line: lineNo}
		if raw, ok := present(obj, "name"); !ok {
			fail("name", "required key is missing")
		} else if json.Unmarshal(raw, &c.Name) != nil || strings.TrimSpace(c.Name) == "" {
			fail("name", "must be a non-empty string, got %s", clip(string(raw)))
		}
		for _, f := range []struct {
			field string
			dst   *json.RawMessage
		}{{"sample", &c.Sample}, {"item", &c.Item}} {
			field, dst := f.field, f.dst
			raw, ok := present(obj, field)
			switch {
			case !ok:
				fail(field, "required key is missing")
			case raw[0] != '{':
				fail(field, "must be a JSON object, got %s", clip(string(raw)))
			default:
				var buf bytes.Buffer
				_ = json.Compact(&buf, raw) // raw came out of a successful Unmarshal
				*dst = buf.Bytes()
			}
		}
		mistyped := false
		if raw, ok := present(obj, "expect"); ok {
			var f float64
			if json.Unmarshal(raw, &f) != nil {
				fail("expect", "must be a number, got %s", clip(string(raw)))
				mistyped = true
			} else {
				c.Expect = &f
			}
		}
		if raw, ok := present(obj, "expect_error"); ok && json.Unmarshal(raw, &c.ExpectError) != nil {
			fail("expect_error", "must be true or false, got %s", clip(string(raw)))
			mistyped = true
		}
		raw, hasTol := present(obj, "tolerance")
		if hasTol && json.Unmarshal(raw, &c.Tolerance) != nil {
			fail("tolerance", "must be a number, got %s", clip(string(raw)))
		}
		for _, p := range canaryRules(c, mistyped, hasTol) {
			fail(p.key, "%s", p.msg)
		}
		if len(errs) == before {
			list = append(list, c)
		}
	}
	return list, errs
}

// present returns a key's raw JSON value unless it is absent or null.
func present(obj map[string]json.RawMessage, key string) (json.RawMessage, bool) {
	raw, ok := obj[key]
	if !ok || string(raw) == "null" {
		return nil, false
	}
	return raw, true
}

func jsonProblem(err error) string {
	if err == nil {
		return "got null"
	}
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		return "got a JSON " + te.Value
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

type badNode struct {
	line int
	msg  string
}

// yamlToJSON converts a YAML value to JSON bytes, keeping mapping keys in the
// order written and each scalar's YAML type: the grader must receive the
// same types as the user wrote (an int 1 and a float 1.0 differ to Python).
func yamlToJSON(n *yaml.Node) (json.RawMessage, *badNode) {
	var buf bytes.Buffer
	if bad := writeJSON(&buf, n); bad != nil {
		return nil, bad
	}
	return buf.Bytes(), nil
}

func writeJSON(buf *bytes.Buffer, n *yaml.Node) *badNode {
	n = resolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		buf.WriteByte('{')
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := resolve(n.Content[i])
			if k.Kind != yaml.ScalarNode {
				return &badNode{k.Line, "mapping keys must be strings, got " + describe(k)}
			}
			if first, dup := seen[k.Value]; dup {
				return &badNode{k.Line, fmt.Sprintf("duplicate key %s (first at line %d)", quote(k.Value), first)}
			}
			seen[k.Value] = k.Line
			if i > 0 {
				buf.WriteByte(',')
			}
			writeJSONString(buf, k.Value)
			buf.WriteByte(':')
			if bad := writeJSON(buf, n.Content[i+1]); bad != nil {
				return bad
			}
		}
		buf.WriteByte('}')
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, e := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if bad := writeJSON(buf, e); bad != nil {
				return bad
			}
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		return writeScalar(buf, n)
	default:
		return &badNode{n.Line, "unsupported YAML node"}
	}
	return nil
}

func writeScalar(buf *bytes.Buffer, n *yaml.Node) *badNode {
	switch n.ShortTag() {
	case "!!null":
		buf.WriteString("null")
	case "!!bool":
		var b bool
		if n.Decode(&b) != nil {
			return &badNode{n.Line, "invalid boolean " + n.Value}
		}
		buf.WriteString(strconv.FormatBool(b))
	case "!!int":
		var i int64
		var u uint64
		switch {
		case n.Decode(&i) == nil:
			buf.WriteString(strconv.FormatInt(i, 10))
		case n.Decode(&u) == nil:
			buf.WriteString(strconv.FormatUint(u, 10))
		default:
			return &badNode{n.Line, "integer out of range: " + n.Value}
		}
	case "!!float":
		var f float64
		if n.Decode(&f) != nil {
			return &badNode{n.Line, "invalid number " + n.Value}
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return &badNode{n.Line, n.Value + " has no JSON form"}
		}
		s := strconv.FormatFloat(f, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0" // a YAML float stays a float in JSON
		}
		buf.WriteString(s)
	case "!!str", "!!timestamp", "!!binary":
		// Dates stay as written: JSON has no date type and the grader
		// should see the text the user typed.
		writeJSONString(buf, n.Value)
	default:
		return &badNode{n.Line, fmt.Sprintf("unsupported YAML tag %s", n.Tag)}
	}
	return nil
}

// writeJSONString writes s as a JSON string without HTML escaping, so a
// canary's "<" reaches the grader's JSON as written.
func writeJSONString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // encoding a string cannot fail
	buf.Truncate(buf.Len() - 1) // Encode ends with a newline
}

// repeatedKey returns a key the JSON object text gives twice at its top
// level. text is known to be an object.
func repeatedKey(text []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(text))
	if _, err := dec.Token(); err != nil {
		return "", false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		k, _ := tok.(string)
		if seen[k] {
			return k, true
		}
		seen[k] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return "", false
		}
	}
	return "", false
}
