package dataset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/gradegate/gradegate/manifest"
)

// The samples join gives the same cases whether the samples file is in the
// dataset's order (walked alongside), shuffled (indexed) or in between.
func TestReaderJoinOrders(t *testing.T) {
	const n = 50
	var cases, samples []string
	for i := range n {
		cases = append(cases, fmt.Sprintf(`{"item": {"case_id": "c-%d"}}`, i))
		if i%7 != 3 { // some cases have no sample
			samples = append(samples, fmt.Sprintf(`{"case_id": "c-%d", "sample": {"output_text": "s%d"}}`, i, i))
		}
	}
	shuffled := append([]string(nil), samples...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	late := append(append([]string(nil), samples[10:]...), samples[:10]...)
	for _, tt := range []struct {
		name    string
		samples []string
	}{{"same order", samples}, {"shuffled", shuffled}, {"rotated", late}} {
		t.Run(tt.name, func(t *testing.T) {
			files := fstest.MapFS{
				"cases.jsonl":   {Data: []byte(strings.Join(cases, "\n"))},
				"samples.jsonl": {Data: []byte(strings.Join(tt.samples, "\r\n") + "\n")},
			}
			m := testManifest(".")
			m.Samples = &manifest.FileRef{Path: "samples.jsonl"}
			set, err := Load(files, m)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range set.Cases {
				want := ""
				if i%7 != 3 {
					want = fmt.Sprintf(`{"output_text": "s%d"}`, i)
				}
				if string(c.Sample) != want {
					t.Errorf("case %s: sample %s, want %s", c.ID, c.Sample, want)
				}
			}
		})
	}
}

// A line Python would refuse is a dataset_invalid finding on its line, and
// its case is kept, counted and marked never to be graded.
func TestReaderUnreadableRows(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	ok := strings.Repeat("[", MaxDepth-2) + strings.Repeat("]", MaxDepth-2)
	lines := []string{
		`{"item": {"case_id": "u-1", "text": "caf` + "\xe9" + `"}}`,
		`{"item": {"case_id": "u-2", "text": ` + deep + `}}`,
		`{"item": {"case_id": "u-3", "text": ` + ok + `}}`,
		`{"item": {"case_id": "u-4"}}`,
		`{"item": {"case_id": "u-5", "n": ` + strings.Repeat("7", MaxIntDigits+1) + `}}`,
		`{"item": {"case_id": "u-6", "n": -` + strings.Repeat("7", MaxIntDigits) + `, "f": ` + strings.Repeat("7", MaxIntDigits+1) + `.5}}`,
	}
	samples := `{"case_id": "u-4", "sample": {"output_text": "bad ` + "\xff" + `"}}` + "\n"
	files := fstest.MapFS{"cases.jsonl": {Data: []byte(strings.Join(lines, "\n"))}, "samples.jsonl": {Data: []byte(samples)}}
	m := testManifest(".")
	m.Samples = &manifest.FileRef{Path: "samples.jsonl"}
	set, err := Load(files, m)
	if err != nil {
		t.Fatal(err)
	}
	checkFindings(t, set.Findings, []wantFinding{
		{CodeDatasetInvalid, manifest.SeverityHold, "cases.jsonl", 1, "u-1", "not valid UTF-8"},
		{CodeDatasetInvalid, manifest.SeverityHold, "cases.jsonl", 2, "u-2", "nested deeper than 256 levels"},
		{CodeDatasetInvalid, manifest.SeverityHold, "cases.jsonl", 5, "u-5", "an integer of 4301 digits"},
		{CodeDatasetInvalid, manifest.SeverityHold, "samples.jsonl", 1, "u-4", "not valid UTF-8"},
	})
	if len(set.Cases) != 6 {
		t.Fatalf("%d cases, want 6: a refused row is counted, never dropped", len(set.Cases))
	}
	for i, want := range []bool{true, true, false, true, true, false} {
		if got := set.Cases[i].Unreadable; got != want {
			t.Errorf("case %s: Unreadable = %v, want %v", set.Cases[i].ID, got, want)
		}
	}
}

// The label field and dataset.hidden_fields never reach the grader.
func TestReaderHiddenFields(t *testing.T) {
	files := fstest.MapFS{"cases.jsonl": {Data: []byte(`{"item": {"case_id": "h-1", "human_score": 1, "reference": "x", "q": {"human_score": 2}}}`)}}
	m := testManifest(".")
	m.Dataset.HiddenFields = []string{"reference"}
	set, err := Load(files, m)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(set.Cases[0].GraderItem, &got); err != nil {
		t.Fatalf("grader item %s: %v", set.Cases[0].GraderItem, err)
	}
	if _, ok := got["human_score"]; ok {
		t.Errorf("grader item %s carries the label", set.Cases[0].GraderItem)
	}
	if _, ok := got["reference"]; ok {
		t.Errorf("grader item %s carries a hidden field", set.Cases[0].GraderItem)
	}
	if _, ok := got["q"]; !ok || got["case_id"] != "h-1" {
		t.Errorf("grader item %s lost a field it may see", set.Cases[0].GraderItem)
	}
	if set.Cases[0].Label == nil || *set.Cases[0].Label != 1 {
		t.Errorf("label = %v, want 1 kept for the results", set.Cases[0].Label)
	}
}

// The one-pass scanner accepts exactly what encoding/json accepts (apart
// from what Python refuses), so no line changes meaning.
func TestScanAgreesWithEncodingJSON(t *testing.T) {
	lines := []string{
		`{}`, `{"a":1}`, `{"a": -0.5e+3, "b": [true, false, null], "c": {"d": "\u00e9\n"}}`,
		`{"a": 01}`, `{"a": 1.}`, `{"a": .5}`, `{"a": "\x"}`, `{"a": "\u12"}`, `{"a": [1,]}`, `{"a": 1,}`,
		`{"a" 1}`, `{a: 1}`, `{"a": tru}`, `{"a": "x"} x`, `{"a": "tab	in"}`, `{"a": -}`, `{"a": 1e}`,
		`{"item": {"case_id": "x", "item": {"y": 1}}}`, `{"a": "\ud800"}`, `[1]`, `"s"`,
	}
	for _, l := range lines {
		sc := scanLine([]byte(l), "item")
		if got, want := !sc.syntax, json.Valid([]byte(l)) && strings.HasPrefix(l, "{"); got != want {
			t.Errorf("%s: scanner accepts = %v, encoding/json = %v", l, got, want)
		}
	}
}

// Lines longer than the read buffer keep their offsets: a sample read back
// from the samples file is the one written there.
func TestReaderLongLines(t *testing.T) {
	long := strings.Repeat("x", 700<<10)
	cases := `{"item": {"case_id": "b"}}` + "\n" + `{"item": {"case_id": "a", "text": "` + long + `"}}` + "\n"
	samples := `{"case_id": "a", "sample": {"output_text": "` + long + `"}}` + "\r\n" + `{"case_id": "b", "sample": {"output_text": "short"}}` + "\n"
	m := testManifest(".")
	m.Samples = &manifest.FileRef{Path: "samples.jsonl"}
	set, err := Load(fstest.MapFS{"cases.jsonl": {Data: []byte(cases)}, "samples.jsonl": {Data: []byte(samples)}}, m)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(set.Cases[0].Sample); got != `{"output_text": "short"}` {
		t.Errorf("b's sample = %.60s", got)
	}
	if got := string(set.Cases[1].Sample); got != `{"output_text": "`+long+`"}` {
		t.Errorf("a's sample = %.60s… (%d bytes)", got, len(got))
	}
}

// countingFS counts the opens of its files.
type countingFS struct {
	fs.FS
	opens atomic.Int32
}

func (c *countingFS) Open(name string) (fs.File, error) {
	c.opens.Add(1)
	return c.FS.Open(name)
}

// TestReaderCloseOnce: a second Close (a deferred cleanup after the run's
// own) returns what the first did and reads nothing again: the
// near-duplicate screen's end phase, which reads the whole dataset, runs
// once. A dataset with no cases says so once, however often it is closed.
func TestReaderCloseOnce(t *testing.T) {
	var b bytes.Buffer
	for i := range 200 { // rows 2k and 2k+1 ask the same
		fmt.Fprintf(&b, `{"item": {"case_id": "c-%d", "request": "please total order %d of the spring catalogue for the north warehouse before the end of the week"}}`+"\n", i, i/2)
	}
	cfs := &countingFS{FS: fstest.MapFS{"cases.jsonl": {Data: b.Bytes()}}}
	r := Open(cfs, testManifest("."))
	sum, err := r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(sum.Findings, func(f manifest.Finding) bool { return f.Code == CodeNearDuplicate }) {
		t.Fatalf("the screen found no near duplicates in a suite with planted ones: %v", sum.Findings)
	}
	opens := cfs.opens.Load()
	again, err := r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if again != sum {
		t.Error("a second Close made another summary")
	}
	if n := cfs.opens.Load(); n != opens {
		t.Errorf("a second Close opened the dataset %d times more", n-opens)
	}

	empty := Open(fstest.MapFS{"cases.jsonl": {Data: []byte("\n")}}, testManifest("."))
	_, first := empty.Close()
	_, second := empty.Close()
	if first == nil || second == nil || first.Error() != second.Error() || strings.Count(second.Error(), "holds no cases") != 1 {
		t.Errorf("closing an empty dataset twice: %v, then %v", first, second)
	}
}
