package dataset

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestCompactValid: the digests' compactor writes what json.Compact
// writes, for every valid JSON it is given, indented or not.
func TestCompactValid(t *testing.T) {
	for _, in := range []string{
		`{}`, `[]`, `""`, `1`, ` 1 `, "\t{\r\n}\n",
		`{"a": 1, "b": [1, 2, {"c": "d e"}]}`,
		`{"s": "a \" b", "t": "\\", "u": "\\\" x", "v": "\u00e9 \n\t"}`,
		`["ends in a backslash \\", "  spaced  ", "tab\tinside"]`,
		"{\n  \"a\": \"x\",\n  \"b\": [\n    true,\n    null\n  ]\n}",
		`{"k": "ÿ€ 😀", "n": -1.5e-7}`,
		` { "a" : [ 1 , 2.5e3 , true , null ] } `, "{\"s\":\"tab\\t \\\" in\\\\\",\n\"n\":{ }}",
		`["\u00e9  x", "café", " ", "\\"]`, "\t[\r\n]\n",
	} {
		testCompact(t, []byte(in))
	}
	// An indented document, as the results' case rows are.
	b, err := json.MarshalIndent(map[string]any{"case_id": `quo"te \ back`, "output": "a\nb  c", "slices": []string{"x", "y"}}, "    ", "  ")
	if err != nil {
		t.Fatal(err)
	}
	testCompact(t, b)
}

func testCompact(t *testing.T, in []byte) {
	t.Helper()
	var want bytes.Buffer
	if err := json.Compact(&want, in); err != nil {
		t.Fatalf("%q: %v", in, err)
	}
	if got := CompactValid(nil, in); !bytes.Equal(got, want.Bytes()) {
		t.Errorf("CompactValid(%q) = %q, want %q", in, got, want.Bytes())
	}
}

// FuzzCompactValid holds the compactor to json.Compact on every valid
// JSON the fuzzer finds.
func FuzzCompactValid(f *testing.F) {
	f.Add([]byte(`{"a": "b \" c", "d": [1, 2]}`))
	f.Add([]byte("[\n  \"\\\\\",\n  \"x\"\n]"))
	f.Fuzz(func(t *testing.T, in []byte) {
		if !json.Valid(in) {
			return
		}
		testCompact(t, in)
	})
}
