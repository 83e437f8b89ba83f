// Package input is the one door through which gradegate reads the files a
// repository provides: the manifest, the grader, the dataset, the samples,
// the schema, the rubric, the canaries file and the results of a shard.
//
// A pull request controls all of them, so every read checks two things
// before a byte is read. The file must be a regular file: a symlink to
// /dev/zero, a FIFO, a socket or a directory is refused at once instead of
// growing memory without end or blocking forever. And the file must fit the
// size limit of its kind, which a caller may raise (gradegate's
// --max-input KIND=SIZE).
package input

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Kind names what a file is for; each kind has its own size limit.
type Kind string

// The kinds of file gradegate reads from a repository.
const (
	Manifest Kind = "manifest"
	Grader   Kind = "grader"
	Schema   Kind = "schema"
	Rubric   Kind = "rubric"
	Canaries Kind = "canaries"
	Dataset  Kind = "dataset"
	Samples  Kind = "samples"
	Results  Kind = "results"
	// Line is not a file but one line of a dataset or samples file: the
	// readers hold a line whole to decode it, so it is bounded before it
	// is buffered, whatever the file's own limit.
	Line Kind = "line"
)

// Kinds lists every kind, in the order the README's table shows them.
func Kinds() []Kind {
	return []Kind{Manifest, Grader, Schema, Rubric, Canaries, Dataset, Samples, Results, Line}
}

// KindNames are the names of Kinds, as --max-input takes them.
func KindNames() []string {
	var out []string
	for _, k := range Kinds() {
		out = append(out, string(k))
	}
	return out
}

const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
)

// DefaultLimit is the size limit of a kind of file when nothing raises it.
// The small kinds are written by hand and read whole; the dataset, samples
// and results are streamed, and their limits only stop a runaway file.
func DefaultLimit(k Kind) int64 {
	switch k {
	case Manifest:
		return 1 * mib
	case Grader, Schema:
		return 4 * mib
	case Rubric, Canaries:
		return 16 * mib
	case Dataset, Samples:
		return 8 * gib
	case Results:
		return 2 * gib
	case Line:
		return 8 * mib
	}
	return 1 * mib
}

// Limits holds the size limits a caller raised or lowered; a kind it does
// not name has its DefaultLimit. The zero value is ready to use. Limits is a
// flag.Value: each Set takes one KIND=SIZE.
type Limits map[Kind]int64

// Of returns the size limit of kind k.
func (l Limits) Of(k Kind) int64 {
	if v, ok := l[k]; ok && v > 0 {
		return v
	}
	return DefaultLimit(k)
}

// String lists the limits that differ from the defaults, as Set reads them.
func (l *Limits) String() string {
	if l == nil || len(*l) == 0 {
		return ""
	}
	var parts []string
	for k, v := range *l {
		parts = append(parts, string(k)+"="+FormatSize(v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// Set reads KIND=SIZE, such as dataset=16GiB or manifest=4MiB; several may be
// given at once, separated by commas.
func (l *Limits) Set(s string) error {
	for _, part := range strings.Split(s, ",") {
		name, size, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return fmt.Errorf("want KIND=SIZE (for example dataset=16GiB), got %q", part)
		}
		k := Kind(strings.TrimSpace(name))
		known := false
		for _, kk := range Kinds() {
			known = known || kk == k
		}
		if !known {
			return fmt.Errorf("unknown kind of file %q; want one of %s", name, kindList())
		}
		n, err := ParseSize(size)
		if err != nil {
			return err
		}
		if *l == nil {
			*l = Limits{}
		}
		(*l)[k] = n
	}
	return nil
}

func kindList() string {
	var names []string
	for _, k := range Kinds() {
		names = append(names, string(k))
	}
	return strings.Join(names, ", ")
}

// MaxSize is the largest limit Set accepts (1 TiB).
const MaxSize = 1 << 40

// ParseSize reads a byte count: a whole number with an optional unit B, KiB,
// MiB, GiB or TiB (KB, MB, GB, TB and K, M, G, T mean the same powers of two).
func ParseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	num := strings.TrimRightFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	unit := strings.ToLower(strings.TrimSpace(s[len(num):]))
	mult := int64(1)
	switch unit {
	case "", "b":
	case "k", "kb", "kib":
		mult = kib
	case "m", "mb", "mib":
		mult = mib
	case "g", "gb", "gib":
		mult = gib
	case "t", "tb", "tib":
		mult = 1 << 40
	default:
		return 0, fmt.Errorf("want a size such as 512MiB or 16GiB, got %q", s)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 1 || n > MaxSize/mult {
		return 0, fmt.Errorf("want a size between 1B and 1TiB, such as 512MiB or 16GiB, got %q", s)
	}
	return n * mult, nil
}

// FormatSize writes a byte count the way ParseSize reads it, in the largest
// unit that divides it.
func FormatSize(n int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 40, "TiB"}, {gib, "GiB"}, {mib, "MiB"}, {kib, "KiB"}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// sizeText says a file's size for a person: "2.0 MiB (2102574 bytes)".
func sizeText(n int64) string {
	switch {
	case n >= gib:
		return fmt.Sprintf("%.1f GiB (%d bytes)", float64(n)/gib, n)
	case n >= mib:
		return fmt.Sprintf("%.1f MiB (%d bytes)", float64(n)/mib, n)
	case n >= kib:
		return fmt.Sprintf("%.1f KiB (%d bytes)", float64(n)/kib, n)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ErrUnusable marks every error of this package that the input caused (a
// file of the wrong type, or too large): gradegate exits 2 for them.
var ErrUnusable = errors.New("unusable input")

// CodeTooLarge is the finding code of a file over its size limit.
const CodeTooLarge = "input_too_large"

// Error is a file refused at the door: Name is the path as the caller gave
// it, Msg says why without naming it. Open returns it inside an
// *fs.PathError that names the file, as every other failure to open does,
// so a caller that already names the file shows only the reason.
type Error struct {
	Kind Kind
	Name string
	// Code is CodeTooLarge for a file over its limit, "" otherwise.
	Code string
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Is makes every *Error match ErrUnusable.
func (e *Error) Is(target error) bool { return target == ErrUnusable }

// File is an open input file. Reads past its kind's limit fail with an
// *Error (the file grew after it was opened); Size is what Stat said.
type File struct {
	f     fs.File
	name  string
	kind  Kind
	limit int64
	size  int64
	read  int64
}

// Open opens name in fsys as a file of kind k whose size may not pass limit
// (0 or less means DefaultLimit(k)). It refuses anything but a regular file
// before opening it, so a FIFO never blocks, and checks the opened file
// again, so a file swapped in between is refused too. For a file on the host
// fsys should implement fs.StatFS; an error of the file system itself (a
// missing file) comes back as it is, to match with errors.Is(err,
// fs.ErrNotExist).
func Open(fsys fs.FS, name string, k Kind, limit int64) (*File, error) {
	if limit <= 0 {
		limit = DefaultLimit(k)
	}
	info, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if err := check(info, name, k, limit); err != nil {
		return nil, refused(name, err)
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	opened, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := check(opened, name, k, limit); err != nil {
		f.Close()
		return nil, refused(name, err)
	}
	if !sameFile(info, opened) {
		f.Close()
		return nil, refused(name, &Error{Kind: k, Name: name, Msg: "changed while it was being opened; refusing to read it"})
	}
	return &File{f: f, name: name, kind: k, limit: limit, size: opened.Size()}, nil
}

// refused names the file around the reason it was refused.
func refused(name string, err error) error {
	return &fs.PathError{Op: "open", Path: name, Err: err}
}

// sameFile is os.SameFile for files of the host; files of other file
// systems (fstest.MapFS) carry no identity and pass.
func sameFile(a, b fs.FileInfo) bool {
	if a.Sys() == nil || b.Sys() == nil {
		return true
	}
	return os.SameFile(a, b)
}

// check refuses anything but a regular file within limit.
func check(info fs.FileInfo, name string, k Kind, limit int64) error {
	if t := info.Mode().Type(); t != 0 {
		return &Error{Kind: k, Name: name, Msg: fmt.Sprintf("is %s, not a regular file; gradegate reads the %s only from a regular file", describeType(t), k)}
	}
	if info.Size() > limit {
		return tooLarge(name, k, limit, "is "+sizeText(info.Size()))
	}
	return nil
}

func tooLarge(name string, k Kind, limit int64, what string) *Error {
	return &Error{Kind: k, Name: name, Code: CodeTooLarge, Msg: fmt.Sprintf("%s: %s, over the %s limit of a %s file (raise it with --max-input %s=SIZE)",
		CodeTooLarge, what, FormatSize(limit), k, k)}
}

// LineTooLong is the error of a line of a dataset or samples file over the
// Line limit, which the reader skipped without holding it.
func LineTooLong(name string, size, limit int64) *Error {
	return &Error{Kind: Line, Name: name, Code: CodeTooLarge, Msg: fmt.Sprintf("%s: the line is %s, over the %s limit of one line (raise it with --max-input %s=SIZE); it was not read",
		CodeTooLarge, sizeText(size), FormatSize(limit), Line)}
}

func describeType(t fs.FileMode) string {
	switch {
	case t&fs.ModeDir != 0:
		return "a directory"
	case t&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a block device"
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file (" + t.String() + ")"
}

// Read reads the file, failing once more than the limit has been read.
func (f *File) Read(p []byte) (int, error) {
	if room := f.limit + 1 - f.read; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := f.f.Read(p)
	f.read += int64(n)
	if f.read > f.limit {
		return n, refused(f.name, tooLarge(f.name, f.kind, f.limit, "grew past the limit while it was read"))
	}
	return n, err
}

// ReaderAt returns the open file as an io.ReaderAt, when its file system's
// file is one (a host file is). Offsets come from what Read already read
// within the limit, so reading back is bounded too.
func (f *File) ReaderAt() (io.ReaderAt, bool) {
	ra, ok := f.f.(io.ReaderAt)
	return ra, ok
}

// Size is the file's size when it was opened.
func (f *File) Size() int64 { return f.size }

// Name is the file's path as the caller gave it.
func (f *File) Name() string { return f.name }

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// ReadFile reads a whole file of kind k through Open.
func ReadFile(fsys fs.FS, name string, k Kind, limit int64) ([]byte, error) {
	f, err := Open(fsys, name, k, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, 0, f.Size()+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// ForKey is the kind of the file a manifest key names: "dataset.path" is the
// dataset, "dataset.schema" the schema, "grader.source" the grader. A key
// that names no file is a manifest.
func ForKey(key string) Kind {
	switch key {
	case "dataset.path", "dataset":
		return Dataset
	case "samples.path", "samples":
		return Samples
	case "dataset.schema", "schema":
		return Schema
	case "rubric.path", "rubric":
		return Rubric
	case "grader.source", "grader", "preprocess.source", "preprocess":
		// A preprocessor is Python source run in the grader's process,
		// read with the grader's limits.
		return Grader
	case "canaries.path", "canaries":
		return Canaries
	}
	return Manifest
}
