package dataset

import (
	"errors"
	"testing"
	"testing/fstest"

	"github.com/gradegate/gradegate/manifest"
)

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
