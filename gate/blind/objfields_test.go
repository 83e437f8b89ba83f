package blind

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gradegate/gradegate/manifest/dataset"
)

// decoderFields is objectFields as encoding/json's Decoder reads an object
// (what objectFields did before the reader's scanner read it), refusing
// besides what Python's json refuses and the Decoder does not: invalid
// UTF-8 and nesting past dataset.MaxDepth. It is the reference the
// scanner is compared with.
func decoderFields(raw json.RawMessage) ([]field, bool) {
	if !utf8.Valid(raw) || nesting(raw) > dataset.MaxDepth {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var out []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		k, ok := tok.(string)
		if !ok {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		if i := slices.IndexFunc(out, func(f field) bool { return f.key == k }); i >= 0 {
			out[i].val = v
			continue
		}
		out = append(out, field{k, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	// The Decoder stops at the object's end; objectFields also refuses
	// what follows it, but for spaces.
	if len(bytes.TrimSpace(raw[dec.InputOffset():])) > 0 {
		return nil, false
	}
	return out, true
}

// nesting is how deep raw's objects and arrays nest (its strings skipped).
func nesting(raw []byte) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

func sameFields(a, b []field) bool {
	return slices.EqualFunc(a, b, func(x, y field) bool { return x.key == y.key && bytes.Equal(x.val, y.val) })
}

// TestObjectFieldsMatchesDecoder: the scanner finds the keys and values
// encoding/json's Decoder does, and refuses what it refuses, over written
// cases and 40,000 random objects and their corruptions.
func TestObjectFieldsMatchesDecoder(t *testing.T) {
	cases := []string{
		`{}`, ` { } `, `{"a":1}`, `{"a": 1, "b": [1, 2, {"c": null}], "d": "x\"y\\z\u00e9\n"}`,
		`{"a":1,"a":2}`, `{"a\u0062":true,"ab":false}`, "{\"\xff\":1}", `{"a":-0.5e+10}`, `{"a":01}`,
		`{"a":1,}`, `{"a"}`, `{"a":}`, `{,}`, `[1]`, `"x"`, ``, `{"a":1} x`, `{"a":1}{}`, `{"a":tru}`,
		`{"a":"\x"}`, "{\"a\":\"\x01\"}", `{"a":"\u12"}`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`, `{"a":[1,]}`,
		`{"a":{"b":1,"b":2}}`, `{"a":"` + strings.Repeat("x", 1<<16) + `"}`,
		`{"a":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
		`{"a":` + strings.Repeat("[", 9998) + strings.Repeat("]", 9998) + `}`,
		`{"a":` + strings.Repeat("[", dataset.MaxDepth-1) + strings.Repeat("]", dataset.MaxDepth-1) + `}`,
		`{"a":` + strings.Repeat("[", dataset.MaxDepth) + strings.Repeat("]", dataset.MaxDepth) + `}`,
		`{"a":"caf` + "\xe9" + `"}`,
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b, _ := json.Marshal(randomObject(rng, 0))
		cases = append(cases, string(b))
		c := []byte(string(b))
		for range 1 + rng.IntN(3) {
			const junk = `{}[]",:\ 0-e.1atfnu`
			c[rng.IntN(len(c))] = junk[rng.IntN(len(junk))]
		}
		cases = append(cases, string(c))
	}
	for _, c := range cases {
		got, gotOK := objectFields(json.RawMessage(c))
		want, wantOK := decoderFields(json.RawMessage(c))
		if gotOK != wantOK || (gotOK && !sameFields(got, want)) {
			t.Errorf("objectFields(%.80q) = %v, %v; the Decoder reads %v, %v", c, got, gotOK, want, wantOK)
		}
	}
}

func randomObject(rng *rand.Rand, depth int) map[string]any {
	m := map[string]any{}
	for range rng.IntN(5) {
		m[randomKey(rng)] = randomValue(rng, depth+1)
	}
	return m
}

func randomKey(rng *rand.Rand) string {
	return []string{"a", "case_id", "é", "x y", `q"`, "\\", "\u2028", fmt.Sprint(rng.IntN(100))}[rng.IntN(8)]
}

func randomValue(rng *rand.Rand, depth int) any {
	switch k := rng.IntN(8); {
	case k == 0 && depth < 4:
		return randomObject(rng, depth)
	case k == 1 && depth < 4:
		return []any{randomValue(rng, depth+1), randomValue(rng, depth+1)}
	case k == 2:
		return rng.NormFloat64() * 1e6
	case k == 3:
		return rng.IntN(2) == 0
	case k == 4:
		return nil
	default:
		return randomKey(rng) + "\n\t<>&"
	}
}

// BenchmarkObjectFields reads a 7 MiB item, as a derived canary's id is
// read from it.
//
//	go test -run '^$' -bench ObjectFields ./gate/blind/
func BenchmarkObjectFields(b *testing.B) {
	item := json.RawMessage(`{"case_id": "c-1", "request": "` + strings.Repeat("please cancel my order ", 7<<20/23) + `", "n": 3}`)
	for _, f := range []struct {
		name string
		fn   func(json.RawMessage) ([]field, bool)
	}{{"scan", objectFields}, {"decoder", decoderFields}} {
		b.Run(f.name, func(b *testing.B) {
			b.SetBytes(int64(len(item)))
			for b.Loop() {
				if _, ok := f.fn(item); !ok {
					b.Fatal("not an object")
				}
			}
		})
	}
}
