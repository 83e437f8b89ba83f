package digest

import (
	"bytes"
	"io/fs"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/fstest"
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
