package dataset

import (
	"encoding/json"
	"errors"
	"testing"
	"testing/fstest"

	"github.com/gradegate/gradegate/manifest"
)

// FuzzReader feeds arbitrary dataset and samples files to the reader: it
// must never panic, every row it yields must be a JSON object item, and a
// row Python could read must carry a sample that is a JSON object.
// go test -fuzz FuzzReader -fuzztime 30s ./manifest/dataset/
func FuzzReader(f *testing.F) {
	f.Add([]byte(`{"item": {"case_id": "a", "slice": ["s"], "human_score": 1}}`+"\n"), []byte(`{"case_id": "a", "sample": {"output_text": "x"}}`))
	f.Add([]byte(`{"item": {"case_id": "a"}, "sample": {}}`+"\n"+`{"item": {"case_id": "a"}}`), []byte(`{"case_id": "b", "sample": {}}`))
	f.Add([]byte("\xef\xbb\xbf{\"item\": {\"case_id\": \"\\u00e9\", \"t\": \"caf\xe9\"}}\r\n"), []byte(`{"case_id": "é", "sample": {"a": [[[[1]]]]}}`))
	f.Add([]byte(`{"item": {"case_id": 7}} {"x": 1}`), []byte(`not json`))
	f.Fuzz(func(t *testing.T, cases, samples []byte) {
		m := testManifest(".")
		m.Samples = &manifest.FileRef{Path: "samples.jsonl"}
		m.Dataset.HiddenFields = []string{"t"}
		files := fstest.MapFS{"cases.jsonl": {Data: cases}, "samples.jsonl": {Data: samples}}
		set, err := Load(files, m)
		if err != nil {
			return
		}
		for _, c := range set.Cases {
			var item map[string]json.RawMessage
			if json.Unmarshal(c.Item, &item) != nil {
				t.Fatalf("row %d: item %q is not an object", c.Line, c.Item)
			}
			if !c.Unreadable {
				if json.Unmarshal(c.GraderItem, &item) != nil {
					t.Fatalf("row %d: grader item %q is not an object", c.Line, c.GraderItem)
				}
				if _, ok := item["t"]; ok {
					t.Fatalf("row %d: grader item %q carries a hidden field", c.Line, c.GraderItem)
				}
			}
			if c.Sample != nil && !c.Unreadable {
				var s map[string]json.RawMessage
				if json.Unmarshal(c.Sample, &s) != nil {
					t.Fatalf("row %d: sample %q is not an object", c.Line, c.Sample)
				}
			}
		}
	})
}

// FuzzLoadLines feeds arbitrary bytes to the dataset line reader as a
// cases.jsonl (and the same bytes as a samples.jsonl). Whatever the input,
// Load returns a set or input errors, never panics, and every case it
// returns names its line.
func FuzzLoadLines(f *testing.F) {
	f.Add([]byte(`{"item": {"case_id": "a", "slice": "s", "human_score": 1}, "sample": {"output_text": "x"}}` + "\n"))
	f.Add([]byte(`{"item": {"case_id": "a"}}` + "\n" + `{"item": {"case_id": "a"}}` + "\n"))
	f.Add([]byte("{\"item\": {\"case_id\": \"\\u202e\\n::error::x\"}}\n"))
	f.Add([]byte("{\"item\": {\"case_id\": \"\xff\xfe\"}}\n"))
	f.Add([]byte(`{"item": {"case_id": "deep", "x": [[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]}}`))
	f.Add([]byte("not json\n\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := fstest.MapFS{
			"s/cases.jsonl":   {Data: data},
			"s/samples.jsonl": {Data: data},
		}
		m := &manifest.Manifest{
			File: "s/gradegate.yaml", Dir: "s",
			Dataset: manifest.Dataset{Path: "cases.jsonl", NearDuplicates: manifest.NearDuplicates{Threshold: 0.85}},
			Samples: &manifest.FileRef{Path: "samples.jsonl"},
			Grader:  manifest.Grader{PassThreshold: 1},
		}
		set, err := Load(fsys, m)
		if err != nil {
			if !errors.Is(err, manifest.ErrInput) {
				t.Fatalf("Load error is not an input error: %v", err)
			}
			return
		}
		for _, c := range set.Cases {
			if c.Line < 1 || c.ID == "" {
				t.Fatalf("case %q at line %d", c.ID, c.Line)
			}
		}
	})
}
