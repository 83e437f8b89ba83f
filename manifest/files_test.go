package manifest

import (
	"errors"
	"io/fs"
	"testing"
	"testing/fstest"
)

const filesManifest = `version: 1
name: files
dataset:
  path: cases.jsonl
  sha256: "0000000000000000000000000000000000000000000000000000000000000000"
grader:
  type: python
  source: grader.py
  sha256: "0000000000000000000000000000000000000000000000000000000000000000"
canaries:
  path: canaries.jsonl
`

// Every unreadable file the manifest names is reported in one run, at the
// line of its key, whichever file is missing first.
func TestLoadReportsEveryMissingFile(t *testing.T) {
	tests := []struct {
		name  string
		files []string // present besides the manifest
		keys  []string // the keys reported, in order
		lines []int
	}{
		{"canaries, dataset and grader", nil, []string{"canaries.path", "dataset.path", "grader.source"}, []int{11, 4, 8}},
		{"canaries and grader", []string{"suite/cases.jsonl"}, []string{"canaries.path", "grader.source"}, []int{11, 8}},
		{"canaries only", []string{"suite/cases.jsonl", "suite/grader.py"}, []string{"canaries.path"}, []int{11}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{"suite/gradegate.yaml": {Data: []byte(filesManifest)}}
			for _, f := range tt.files {
				fsys[f] = &fstest.MapFile{Data: []byte("x")}
			}
			_, err := Load(fsys, "suite/gradegate.yaml")
			if !errors.Is(err, ErrInput) || !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("Load = %v; want an input error matching fs.ErrNotExist", err)
			}
			got := inputErrors(t, err)
			if len(got) != len(tt.keys) {
				t.Fatalf("Load reported %d problems, want %d:\n%v", len(got), len(tt.keys), err)
			}
			for i, e := range got {
				if e.Key != tt.keys[i] || e.Line != tt.lines[i] || e.File != "suite/gradegate.yaml" {
					t.Errorf("problem %d = %s (key %q, line %d); want key %q at line %d", i, e, e.Key, e.Line, tt.keys[i], tt.lines[i])
				}
			}
		})
	}
}

func TestCheckFiles(t *testing.T) {
	m, err := Parse([]byte(filesManifest), "suite/gradegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m.File, m.Dir = "suite/gradegate.yaml", "suite"
	fsys := fstest.MapFS{
		"suite/cases.jsonl": {Data: []byte("x")},
		"suite/grader.py":   {Mode: fs.ModeDir},
	}
	err = m.CheckFiles(fsys, "dataset.path", "grader.source")
	got := inputErrors(t, err)
	if len(got) != 1 || got[0].Key != "grader.source" || got[0].Line != 8 {
		t.Fatalf("CheckFiles = %v; want one problem at grader.source, line 8 (a folder is not a grader)", err)
	}
	if err := m.CheckFiles(fsys, "dataset.path", "rubric.path"); err != nil {
		t.Errorf("CheckFiles(present dataset, no rubric) = %v; want nil", err)
	}
}
