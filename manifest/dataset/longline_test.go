package dataset

import (
	"errors"
	"io"
	"io/fs"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/input"
)

// lazyFS holds one file, cases.jsonl: a first case whose line is size bytes
// long, then a short case. Its bytes are made as they are read, so a 1 GiB
// line costs no disk and no memory of its own.
type lazyFS struct{ size int64 }

func (l lazyFS) Open(name string) (fs.File, error) {
	if name != "cases.jsonl" {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	head := `{"item": {"case_id": "big", "text": "`
	tail := "\"}}\n" + `{"item": {"case_id": "after"}}` + "\n"
	body := io.LimitReader(repeatReader('x'), l.size-int64(len(head))-4)
	return &lazyFile{r: io.MultiReader(strings.NewReader(head), body, strings.NewReader(tail)), size: l.size + int64(len(tail)) - 4}, nil
}

type repeatReader byte

func (b repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

type lazyFile struct {
	r    io.Reader
	size int64
}

func (f *lazyFile) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *lazyFile) Close() error               { return nil }
func (f *lazyFile) Stat() (fs.FileInfo, error) { return lazyInfo{f.size}, nil }

type lazyInfo struct{ size int64 }

func (i lazyInfo) Name() string       { return "cases.jsonl" }
func (i lazyInfo) Size() int64        { return i.size }
func (i lazyInfo) Mode() fs.FileMode  { return 0o644 }
func (i lazyInfo) ModTime() time.Time { return time.Time{} }
func (i lazyInfo) IsDir() bool        { return false }
func (i lazyInfo) Sys() any           { return nil }

// A 1 GiB dataset line is read past, not held: the reader allocates about
// the line limit (8 MiB), the line is an input error naming the file and
// the line, and the case after it is still read.
func TestReaderOverLongLine(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 1 GiB")
	}
	m := testManifest(".")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := Open(lazyFS{size: 1 << 30}, m)
	ids := readIDs(r)
	_, err := r.Close()
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("reading a 1 GiB line allocated %d MiB, want it bounded by the line limit", alloc>>20)
	}
	var me *manifest.Error
	if !errors.As(err, &me) || me.File != "cases.jsonl" || me.Line != 1 || !strings.Contains(me.Msg, "over the 8MiB limit of one line") || !strings.Contains(me.Msg, "--max-input line=SIZE") {
		t.Errorf("error = %v, want cases.jsonl:1 over the 8MiB line limit", err)
	}
	if !errors.Is(err, manifest.ErrInput) {
		t.Errorf("error %v is not an input error (exit 2)", err)
	}
	if len(ids) != 1 || ids[0] != "after" {
		t.Errorf("cases read = %q, want the one after the long line", ids)
	}
}

// --max-input line=SIZE raises the limit, and lowers it.
func TestReaderLineLimit(t *testing.T) {
	for _, tt := range []struct {
		limit int64
		fails bool
	}{{0, false}, {64 << 10, true}, {1 << 20, false}} {
		m := testManifest(".")
		if tt.limit > 0 {
			m.Limits = input.Limits{input.Line: tt.limit}
		}
		r := Open(lazyFS{size: 100 << 10}, m)
		for {
			if _, ok := r.Next(); !ok {
				break
			}
		}
		_, err := r.Close()
		if (err != nil) != tt.fails {
			t.Errorf("limit %d: error %v, want failure %v", tt.limit, err, tt.fails)
		}
	}
}

// A pinned dataset or samples file whose bytes differ from the pin is not
// parsed: a dataset.path that climbs to a credentials file yields no row
// and no error, so nothing quotes a character of it; the digest check
// holds the run.
func TestReaderMismatchedPinIsNotParsed(t *testing.T) {
	secret := "[default]\naws_access_key_id = AKIAEXAMPLE\naws_secret_access_key = s3cr3t\n"
	good := `{"item": {"case_id": "a"}}` + "\n"
	goodSum, _ := manifest.Digest(strings.NewReader(good))
	for _, tt := range []struct {
		name, key string
		setup     func(m *manifest.Manifest)
	}{
		{"dataset", "dataset.sha256", func(m *manifest.Manifest) {
			m.Dataset.Path = "../home/.aws/credentials"
			m.Dataset.SHA256 = strings.Repeat("0", 64)
		}},
		{"samples", "samples.sha256", func(m *manifest.Manifest) {
			m.Dataset.SHA256 = goodSum
			m.Samples = &manifest.FileRef{Path: "../home/.aws/credentials", SHA256: "sha256:" + strings.Repeat("1", 64)}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := testManifest("suite")
			tt.setup(m)
			files := fstest.MapFS{"home/.aws/credentials": {Data: []byte(secret)}, "suite/cases.jsonl": {Data: []byte(good)}}
			r := Open(files, m)
			if _, ok := r.Next(); ok {
				t.Error("a row was read from a file whose pin differs")
			}
			sum, err := r.Close()
			if err != nil {
				t.Errorf("error %v, want none: the digest check reports the mismatch", err)
			}
			if r.Unpinned != tt.key || sum.Rows != 0 || len(sum.Findings) != 0 {
				t.Errorf("Unpinned %q, %d rows, findings %v; want %s, nothing read", r.Unpinned, sum.Rows, sum.Findings, tt.key)
			}
		})
	}
}
