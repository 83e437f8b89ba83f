package manifest

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

var (
	newDataset = strings.Repeat("d", 64)
	newSamples = strings.Repeat("5a", 32)
	newRubric  = strings.Repeat("7c", 32)
	newGrader  = strings.Repeat("e1", 32)
)

func TestPinGolden(t *testing.T) {
	all := map[string]string{"dataset": newDataset, "samples": newSamples, "rubric": newRubric, "grader": newGrader}
	tests := []struct {
		name    string
		digests map[string]string
		keep    map[string]string // digests of sections Pin must leave alone
	}{
		{"block", all, nil},
		{"flow", map[string]string{"dataset": newDataset, "samples": newSamples, "grader": "sha256:" + newGrader}, nil},
		{"partial", map[string]string{"grader": newGrader}, map[string]string{"dataset": hexA}},
		{"eof", map[string]string{"grader": newGrader}, map[string]string{"dataset": hexA}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", "pin", tt.name+".in.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			out, err := Pin(in, tt.digests)
			if err != nil {
				t.Fatalf("Pin: %v", err)
			}
			golden := filepath.Join("testdata", "pin", tt.name+".out.yaml")
			if *update {
				if err := os.WriteFile(golden, out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(out)); diff != "" {
				t.Errorf("Pin output differs from %s (-want +got):\n%s", golden, diff)
			}

			for _, c := range comments(in) {
				if !bytes.Contains(out, []byte(c)) {
					t.Errorf("comment %q was lost", c)
				}
			}

			after, err := Parse(out, tt.name+".out.yaml")
			if err != nil {
				t.Fatalf("pinned manifest does not parse: %v", err)
			}
			wantDigests := map[string]string{}
			for section, d := range tt.keep {
				wantDigests[section] = d
			}
			for section, d := range tt.digests {
				wantDigests[section] = NormalizeDigest(d)
			}
			if diff := cmp.Diff(wantDigests, digestsOf(after)); diff != "" {
				t.Errorf("digests after Pin (-want +got):\n%s", diff)
			}
		})
	}
}

// comments returns the comment text of each line, from its "#" on.
func comments(data []byte) []string {
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if i := strings.Index(line, "#"); i >= 0 {
			out = append(out, strings.TrimRight(line[i:], "\r"))
		}
	}
	return out
}

func digestsOf(m *Manifest) map[string]string {
	d := map[string]string{"dataset": m.Dataset.SHA256, "grader": m.Grader.SHA256}
	if m.Samples != nil {
		d["samples"] = m.Samples.SHA256
	}
	if m.Rubric != nil {
		d["rubric"] = m.Rubric.SHA256
	}
	return d
}

func TestPinEdits(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		digests map[string]string
		want    string
	}{
		{
			name:    "plain digits stay a string",
			in:      "grader:\n  source: g.py\n  sha256: " + hexB + "\n",
			digests: map[string]string{"grader": strings.Repeat("1", 63) + "e"},
			want:    "grader:\n  source: g.py\n  sha256: \"" + strings.Repeat("1", 63) + "e\"\n",
		},
		{
			name:    "null value is replaced",
			in:      "grader:\n  sha256: ~\n  source: g.py\n",
			digests: map[string]string{"grader": newGrader},
			want:    "grader:\n  sha256: \"" + newGrader + "\"\n  source: g.py\n",
		},
		{
			name:    "CRLF line endings are kept",
			in:      "grader:\r\n  source: g.py\r\n  type: python\r\n",
			digests: map[string]string{"grader": newGrader},
			want:    "grader:\r\n  source: g.py\r\n  sha256: \"" + newGrader + "\"\r\n  type: python\r\n",
		},
		{
			name:    "deeper indentation is kept",
			in:      "dataset:\n      path: c.jsonl\n      revision: r1\n",
			digests: map[string]string{"dataset": newDataset},
			want:    "dataset:\n      path: c.jsonl\n      sha256: \"" + newDataset + "\"\n      revision: r1\n",
		},
		{
			name:    "escaped quote in old value",
			in:      "grader: {source: g.py, sha256: \"x\\\"y\"}\n",
			digests: map[string]string{"grader": newGrader},
			want:    "grader: {source: g.py, sha256: \"" + newGrader + "\"}\n",
		},
		{
			name:    "explicitly tagged mapping",
			in:      "grader: !!map\n  source: g.py\n",
			digests: map[string]string{"grader": newGrader},
			want:    "grader: !!map\n  source: g.py\n  sha256: \"" + newGrader + "\"\n",
		},
		{
			name:    "no digests leaves the bytes alone",
			in:      "# just a comment\ngrader: {source: g.py}\n",
			digests: nil,
			want:    "# just a comment\ngrader: {source: g.py}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Pin([]byte(tt.in), tt.digests)
			if err != nil {
				t.Fatalf("Pin: %v", err)
			}
			if diff := cmp.Diff(tt.want, string(out)); diff != "" {
				t.Errorf("Pin (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPinErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		digests map[string]string
		want    string
	}{
		{"unknown section", "grader: {source: g.py}\n", map[string]string{"schema": newGrader}, `unknown section "schema"`},
		{"bad digest", "grader: {source: g.py}\n", map[string]string{"grader": "abc"}, `grader digest "abc" is not 64 lowercase hex digits`},
		{"missing section", "grader: {source: g.py}\n", map[string]string{"samples": newSamples}, "samples: cannot pin: the manifest has no samples section"},
		{"no file", "rubric:\n  version: r1\n", map[string]string{"rubric": newRubric}, "line 2: rubric.path: cannot pin: no file named"},
		{"block scalar", "grader:\n  source: g.py\n  sha256: |\n    abc\n", map[string]string{"grader": newGrader}, "line 3: grader.sha256: pin can only rewrite a value written on one line"},
		{"invalid YAML", "grader: [\n", map[string]string{"grader": newGrader}, "invalid YAML"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Pin([]byte(tt.in), tt.digests)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Pin: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Pin error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}
