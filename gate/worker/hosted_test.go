//go:build linux

package worker

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
)

// TestHostedSample checks the sample grade() receives: output_json derived
// from output_text when the text is JSON and output_json is not stored,
// everything else passed through as stored, under both contracts.
func TestHostedSample(t *testing.T) {
	py := python(t)
	const sampleSrc = "def grade(sample, item):\n    return {'scores': {'score': 1.0}, 'judge': sample}\n"
	const batchSrc = "def grade_batch(samples):\n    return {'samples': [{'case_id': s['case_id'], 'scores': {'score': 1.0}, 'judge': s['sample']} for s in samples]}\n"
	tests := []struct {
		name   string
		sample string
		want   string
	}{
		{"json object text", `{"output_text": "{\"answer\": 5}"}`, `{"output_text": "{\"answer\": 5}", "output_json": {"answer": 5}}`},
		{"json list text", `{"output_text": "[1, 2]"}`, `{"output_text": "[1, 2]", "output_json": [1, 2]}`},
		{"prose text", `{"output_text": "the answer is 5"}`, `{"output_text": "the answer is 5"}`},
		{"prose starting with a digit", `{"output_text": "5 apples"}`, `{"output_text": "5 apples"}`},
		{"empty text", `{"output_text": ""}`, `{"output_text": ""}`},
		{"only whitespace", `{"output_text": " \n\t "}`, `{"output_text": " \n\t "}`},
		{"json after whitespace", `{"output_text": " \r\n\t 42 "}`, `{"output_text": " \r\n\t 42 ", "output_json": 42}`},
		{"prose after whitespace", `{"output_text": "\n  yes"}`, `{"output_text": "\n  yes"}`},
		{"json literal", `{"output_text": "null"}`, `{"output_text": "null", "output_json": null}`},
		{"json string", `{"output_text": "\"hi\""}`, `{"output_text": "\"hi\"", "output_json": "hi"}`},
		{"negative number", `{"output_text": "-1.5"}`, `{"output_text": "-1.5", "output_json": -1.5}`},
		{"python's NaN", `{"output_text": "NaN"}`, `{"output_text": "NaN", "output_json": "nan"}`},
		{"python's -Infinity", `{"output_text": "-Infinity"}`, `{"output_text": "-Infinity", "output_json": "-inf"}`},
		{"non-breaking space is not json whitespace", `{"output_text": "\u00a042"}`, `{"output_text": "\u00a042"}`},
		{"trailing json whitespace", `{"output_text": "42 \n\t"}`, `{"output_text": "42 \n\t", "output_json": 42}`},
		{"trailing non-breaking space", `{"output_text": "42\u00a0"}`, `{"output_text": "42\u00a0"}`},
		{"extra data", `{"output_text": "42 apples"}`, `{"output_text": "42 apples"}`},
		{"two values", `{"output_text": "[1] [2]"}`, `{"output_text": "[1] [2]"}`},
		{"malformed object", `{"output_text": "{\"a\": }"}`, `{"output_text": "{\"a\": }"}`},
		{"byte order mark", `{"output_text": "\ufeff42"}`, `{"output_text": "\ufeff42"}`},
		{"nested", `{"output_text": " {\"a\": [1, {\"b\": null}]} "}`, `{"output_text": " {\"a\": [1, {\"b\": null}]} ", "output_json": {"a": [1, {"b": null}]}}`},
		{"stored output_json wins", `{"output_text": "{\"a\": 1}", "output_json": {"b": 2}}`, `{"output_text": "{\"a\": 1}", "output_json": {"b": 2}}`},
		{"stored null output_json kept", `{"output_text": "{\"a\": 1}", "output_json": null}`, `{"output_text": "{\"a\": 1}", "output_json": null}`},
		{
			"tools and choices pass through",
			`{"output_text": "{}", "output_tools": [{"type": "function", "function": {"name": "f"}}], "choices": [{"index": 0}]}`,
			`{"output_text": "{}", "output_json": {}, "output_tools": [{"type": "function", "function": {"name": "f"}}], "choices": [{"index": 0}]}`,
		},
		{"no output_text", `{"output_tools": []}`, `{"output_tools": []}`},
		{"non-string output_text", `{"output_text": 5}`, `{"output_text": 5}`},
	}
	for _, contract := range []string{"sample", "batch"} {
		src := sampleSrc
		if contract == "batch" {
			src = batchSrc
		}
		p := newPool(t, py, src, func(c *Config) { c.Contract = contract })
		tasks := make([]grading.Task, len(tests))
		for i, tt := range tests {
			tasks[i] = grading.Task{ID: tt.name, Sample: json.RawMessage(tt.sample), Item: json.RawMessage(`{}`)}
		}
		got, err := p.Grade(context.Background(), tasks)
		if err != nil {
			t.Fatal(err)
		}
		for i, tt := range tests {
			var gotV, wantV any
			if err := json.Unmarshal(got[i].Judge, &gotV); err != nil {
				t.Fatalf("%s/%s: judge %q: %v (outcome %+v)", contract, tt.name, got[i].Judge, err, got[i])
			}
			if err := json.Unmarshal([]byte(tt.want), &wantV); err != nil {
				t.Fatal(err)
			}
			g, _ := json.Marshal(gotV)
			w, _ := json.Marshal(wantV)
			if string(g) != string(w) {
				t.Errorf("%s/%s: grade saw %s, want %s", contract, tt.name, g, w)
			}
		}
	}
}

// TestHostedSampleMatchesJSONLoads: output_json is derived exactly when
// json.loads reads output_text, with the same value, over 50,000 random
// short texts of JSON's characters, whitespace and look-alikes.
func TestHostedSampleMatchesJSONLoads(t *testing.T) {
	src := workerSource()
	const check = `
import json, random
rnd = random.Random(7)
alphabet = list(' \t\n\r\u00a0\ufeff"{}[],:0123456789-+.eEtrufalsnNIiy\\x')
texts = ["1200", " 1 ", "NaN", "-Infinity", "Infinity ", "[]", "{}", '"a"', "tru", "1.", ".5", "01", "-", "[1,]", "1 2"]
texts += ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 8))) for _ in range(50000)]
diffs = []
for text in texts:
    try:
        want = ("json", repr(json.loads(text)))
    except ValueError:
        want = ("text", None)
    out = hosted_sample({"output_text": text})
    got = ("json", repr(out["output_json"])) if "output_json" in out else ("text", None)
    if got != want:
        diffs.append([text, str(want), str(got)])
print(json.dumps({"checked": len(texts), "diffs": diffs[:5]}))
`
	got := workerCheck(t, src+check)
	if got.Checked < 50000 || len(got.Diffs) > 0 {
		t.Fatalf("checked %d texts; differences from json.loads (text, json.loads, output_json): %q", got.Checked, got.Diffs)
	}
}
