package digest

import (
	"bytes"
	"io/fs"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/gradegate/gradegate/manifest"
)

// shortReads hands out its files' bytes at most n at a time, so that lines
// straddle reads.
type shortReads struct {
	fs.FS
	n int
}

func (s shortReads) Open(name string) (fs.File, error) {
	f, err := s.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return shortFile{f, s.n}, nil
}

type shortFile struct {
	fs.File
	n int
}

func (f shortFile) Read(p []byte) (int, error) { return f.File.Read(p[:min(len(p), f.n)]) }

// rowsOf is what CountRows must say: the lines with a byte that is not a
// space, tab or carriage return.
func rowsOf(data string) int {
	n := 0
	for _, line := range strings.Split(data, "\n") {
		if strings.Trim(line, " \t\r") != "" {
			n++
		}
	}
	return n
}

func TestCountRows(t *testing.T) {
	long := `{"item": "` + strings.Repeat("x", 300<<10) + `"}`
	r := rand.New(rand.NewPCG(1, 2))
	var random strings.Builder
	for range 2000 {
		random.WriteByte(" \t\r\n{x"[r.IntN(6)])
	}
	for _, tt := range []struct {
		name, data string
		want       int
	}{
		{"empty", "", 0},
		{"one row, no newline", `{"a": 1}`, 1},
		{"rows", "{}\n{}\n{}\n", 3},
		{"blank lines", "\n\n{}\n \t\r\n\n{}", 2},
		{"CRLF", "{}\r\n{}\r\n\r\n", 2},
		{"indented row", "   {}\n\t\t{}\n", 2},
		{"row after blanks on its line", " \t \r x\n", 1},
		{"a line longer than a read", long + "\n" + long + "\n\n{}", 3},
		{"random", random.String(), rowsOf(random.String())},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := rowsOf(tt.data); got != tt.want {
				t.Fatalf("the reference counts %d, the table says %d", got, tt.want)
			}
			files := fstest.MapFS{"cases.jsonl": {Data: []byte(tt.data)}}
			for _, fsys := range []fs.FS{files, shortReads{files, 1}, shortReads{files, 7}} {
				if got := CountRows(fsys, "cases.jsonl"); got != tt.want {
					t.Errorf("%T: CountRows = %d, want %d", fsys, got, tt.want)
				}
			}
		})
	}
	if got := CountRows(fstest.MapFS{}, "missing.jsonl"); got != 0 {
		t.Errorf("a file that cannot be opened counts %d rows, want 0", got)
	}
}

// BenchmarkCountRows counts a million rows of about 230 bytes.
func BenchmarkCountRows(b *testing.B) {
	row := `{"item": {"case_id": "c-000000", "request": "` + strings.Repeat("word ", 40) + `"}}` + "\n"
	files := fstest.MapFS{"cases.jsonl": {Data: bytes.Repeat([]byte(row), 1_000_000)}}
	b.SetBytes(int64(len(row)) * 1_000_000)
	for b.Loop() {
		CountRows(files, "cases.jsonl")
	}
}

// refuseOpen fails to open the files it names, so a test can tell they
// were not read.
type refuseOpen struct {
	fs.FS
	names map[string]bool
}

func (r refuseOpen) Open(name string) (fs.File, error) {
	if r.names[name] {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return r.FS.Open(name)
}

// TestCheckDigestsKnown: a known digest stands for its file, which is not
// read; it is compared with its pin like one hashed here; a file whose
// digest is not known is hashed as CheckDigests hashes it.
func TestCheckDigestsKnown(t *testing.T) {
	files := fstest.MapFS{
		"cases.jsonl":   {Data: []byte("{}\n")},
		"samples.jsonl": {Data: []byte("{}\n{}\n")},
		"grader.py":     {Data: []byte("def grade(sample, item):\n    return 1.0\n")},
	}
	m := &manifest.Manifest{
		Dir:     ".",
		Dataset: manifest.Dataset{Path: "cases.jsonl"},
		Samples: &manifest.FileRef{Path: "samples.jsonl"},
		Grader:  manifest.Grader{Type: "python", Source: "grader.py"},
	}
	want, _, err := CheckDigests(files, m, true)
	if err != nil {
		t.Fatal(err)
	}
	m.Dataset.SHA256, m.Samples.SHA256, m.Grader.SHA256 = want.Dataset, want.Samples, want.Grader

	for _, tt := range []struct {
		name     string
		known    Digests
		refuse   []string
		mismatch []string
	}{
		{"both known", Digests{Dataset: want.Dataset, Samples: want.Samples}, []string{"cases.jsonl", "samples.jsonl"}, nil},
		{"samples not known", Digests{Dataset: want.Dataset}, []string{"cases.jsonl"}, nil},
		{"nothing known", Digests{}, nil, nil},
		{"a known digest off its pin", Digests{Dataset: "sha256:" + strings.Repeat("0", 64), Samples: want.Samples}, []string{"cases.jsonl"}, []string{"dataset"}},
		{"a known grader digest is not taken", Digests{Grader: "sha256:" + strings.Repeat("0", 64)}, nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys := refuseOpen{files, map[string]bool{}}
			for _, n := range tt.refuse {
				fsys.names[n] = true
			}
			got, mismatches, err := CheckDigestsKnown(fsys, m, true, tt.known)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, mm := range mismatches {
				names = append(names, mm.Name)
			}
			if strings.Join(names, ",") != strings.Join(tt.mismatch, ",") {
				t.Errorf("mismatches %v, want %v", names, tt.mismatch)
			}
			if tt.mismatch == nil && (got.Dataset != want.Dataset || got.Samples != want.Samples || got.Grader != want.Grader) {
				t.Errorf("digests %+v, want %+v", got, want)
			}
		})
	}
}
