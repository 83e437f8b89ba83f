package judge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// templateRE finds the {{ namespace.path }} templates of a message.
var templateRE = regexp.MustCompile(`\{\{(.*?)\}\}`)

// pathStepRE splits a template path into field names and list indexes.
var pathStepRE = regexp.MustCompile(`\.([A-Za-z_][A-Za-z0-9_\-]*)|\[([0-9]+)\]`)

// TemplateError is a template that names a value the sample or item does
// not have: a fixture defect, so the case errors (grader_exception) the way
// a Python grader's KeyError would.
type TemplateError struct {
	Template string
	Msg      string
}

func (e *TemplateError) Error() string { return e.Template + ": " + e.Msg }

// vars are a task's sample and item, decoded once for every template.
type vars struct {
	sample, item any
}

func decodeVars(sample, item json.RawMessage) (vars, error) {
	var v vars
	for _, p := range []struct {
		name string
		raw  json.RawMessage
		dst  *any
	}{{"sample", sample, &v.sample}, {"item", item, &v.item}} {
		if len(p.raw) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(p.raw))
		// Numbers keep the text they were written with, so {{item.total}}
		// renders 2599 and never 2599.0 or 2.599e+03.
		dec.UseNumber()
		if err := dec.Decode(p.dst); err != nil {
			return vars{}, fmt.Errorf("the %s is not JSON: %w", p.name, err)
		}
	}
	return v, nil
}

// render replaces every template of text with the value it names: a
// string as itself, anything else as compact JSON. The manifest checked
// each template's syntax; a value that is not there is a *TemplateError.
func render(text string, v vars) (string, error) {
	var firstErr error
	out := templateRE.ReplaceAllStringFunc(text, func(m string) string {
		if firstErr != nil {
			return m
		}
		s, err := lookup(strings.TrimSpace(m[2:len(m)-2]), v)
		if err != nil {
			firstErr = &TemplateError{Template: m, Msg: err.Error()}
			return m
		}
		return s
	})
	return out, firstErr
}

func lookup(path string, v vars) (string, error) {
	var cur any
	var rest string
	switch {
	case strings.HasPrefix(path, "item"):
		cur, rest = v.item, path[len("item"):]
	case strings.HasPrefix(path, "sample"):
		cur, rest = v.sample, path[len("sample"):]
	default:
		return "", fmt.Errorf("only the item and sample namespaces exist")
	}
	where := path[:len(path)-len(rest)]
	for _, step := range pathStepRE.FindAllStringSubmatch(rest, -1) {
		switch {
		case step[1] != "":
			obj, ok := cur.(map[string]any)
			if !ok {
				return "", fmt.Errorf("%s is %s, not an object with field %s", where, kind(cur), step[1])
			}
			next, ok := obj[step[1]]
			if !ok {
				return "", fmt.Errorf("%s has no field %s", where, step[1])
			}
			cur = next
		default:
			list, ok := cur.([]any)
			if !ok {
				return "", fmt.Errorf("%s is %s, not a list", where, kind(cur))
			}
			i, _ := strconv.Atoi(step[2])
			if i >= len(list) {
				return "", fmt.Errorf("%s has %d elements, no index %d", where, len(list), i)
			}
			cur = list[i]
		}
		where += step[0]
	}
	if s, ok := cur.(string); ok {
		return s, nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(cur); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}
