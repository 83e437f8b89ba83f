package worker

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// The probe costs an interpreter start (and a compile of the worker) on
// every command, for an answer that changes only when the interpreter or
// its packages do. probeCache keeps it in the user's cache folder, one
// file per interpreter path, with stamps of what the answer depends on:
// the interpreter file (through its links and not), a pyvenv.cfg beside it
// or one folder up, every folder of its search path (a package, or a .pth
// file that adds to the path, adds an entry to one of them, which changes
// its modification time), and the site module's package folders, those
// that do not exist yet too (a first install creates one). An answer whose stamps differ from the
// files' is asked again.
//
// The cache is gradegate's own writing in the user's own folder: a file
// not owned by the user, or readable or writable by anyone else, is not
// read, and nothing in a repository is. A shim (a script) is never cached:
// its answer depends on the environment it runs in.

// probeCacheMax bounds a cache file: the compiled worker is some 120 KiB,
// twice that in hex.
const probeCacheMax = 4 << 20

// CacheDir is the folder where gradegate keeps what it learnt from an
// interpreter, from the environment getenv reads ($XDG_CACHE_HOME, else
// $HOME/.cache), or "" when neither is an absolute path: kind "python"
// holds probe answers (ResolveOptions.CacheDir), "scripts" script answers
// (ScriptCache).
//
// In CI ($CI or $GITHUB_ACTIONS set) nothing is kept: "" always. There an
// earlier step of the same job may run a pull request's code as the same
// user (a `pip install`, a test), which could write a kept answer (a
// compiled worker that reports every case passed, a lint with no
// finding) for the gate to read; and a CI machine starts with an empty
// cache anyway. Outside CI the folder is the user's own, as their shell
// is.
func CacheDir(getenv func(string) string, kind string) string {
	if getenv("CI") != "" || getenv("GITHUB_ACTIONS") != "" {
		return ""
	}
	// The folder the cache goes in must be there already: a HOME that does
	// not exist (a service account's /nonexistent) is not created.
	if d := getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		if isDir(d) {
			return filepath.Join(d, "gradegate", kind)
		}
		return ""
	}
	if h := getenv("HOME"); filepath.IsAbs(h) && isDir(h) {
		return filepath.Join(h, ".cache", "gradegate", kind)
	}
	return ""
}

func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

type probeCache struct {
	dir string // "" for no cache
}

// probeEntry is one cache file: this as a JSON line, then the compiled
// worker as the probe printed it (hex), so that reading it back is one
// decode of the hex and no JSON scan of it.
type probeEntry struct {
	Path   string          `json:"path"`
	Stamps []fileStamp     `json:"stamps"`
	Answer json.RawMessage `json:"answer"`
}

// fileStamp is what a file's answer was kept with: its identity and times
// (fileStampOf), or Missing.
type fileStamp struct {
	Path    string `json:"path"`
	Missing bool   `json:"missing,omitempty"`
	Dev     uint64 `json:"dev,omitempty"`
	Ino     uint64 `json:"ino,omitempty"`
	Mode    uint32 `json:"mode,omitempty"`
	Size    int64  `json:"size,omitempty"`
	Mtime   int64  `json:"mtime,omitempty"`
	Ctime   int64  `json:"ctime,omitempty"`
	Link    bool   `json:"link,omitempty"` // the stamp of the path itself, not of what it links to
}

// file is the cache file of the interpreter at path: the key holds the
// probe and the worker source, so another gradegate's answers are not
// taken for this one's.
func (c probeCache) file(path string, withWorker bool) string {
	h := sha256.New()
	io.WriteString(h, probe)
	h.Write([]byte{0})
	if withWorker {
		io.WriteString(h, workerPy)
	}
	h.Write([]byte{0})
	io.WriteString(h, path)
	return filepath.Join(c.dir, hex.EncodeToString(h.Sum(nil)[:16])+".json")
}

// load is the kept answer for the interpreter at path, when there is one
// whose stamps still hold.
func (c probeCache) load(path string, withWorker bool) (Python, bool) {
	if c.dir == "" {
		return Python{}, false
	}
	b, ok := readOwnFile(c.file(path, withWorker), probeCacheMax)
	if !ok {
		return Python{}, false
	}
	head, compiled, _ := bytes.Cut(b, []byte("\n"))
	var e probeEntry
	if err := json.Unmarshal(head, &e); err != nil || e.Path != path || len(e.Stamps) == 0 {
		return Python{}, false
	}
	for _, s := range e.Stamps {
		if now := stampOf(s.Path, s.Link); now != s {
			return Python{}, false
		}
	}
	py, err := parseProbe(path, e.Answer, compiled, withWorker)
	if err != nil {
		return Python{}, false
	}
	// The stamps a new answer would get must be the ones kept: a search
	// path that moved is asked again.
	if !slices.Equal(stampPaths(path, py), stampPathsOf(e.Stamps)) {
		return Python{}, false
	}
	return py, true
}

// store keeps the answer for the interpreter at path. Failing to is not an
// error: the next command asks again.
func (c probeCache) store(path string, withWorker bool, py Python, answer, compiled []byte) {
	if c.dir == "" || isScript(path) {
		return
	}
	e := probeEntry{Path: path, Answer: json.RawMessage(answer)}
	for _, p := range stampPaths(path, py) {
		e.Stamps = append(e.Stamps, stampOf(p.path, p.link))
	}
	b, err := json.Marshal(e)
	if err != nil || bytes.IndexByte(compiled, '\n') >= 0 {
		return
	}
	b = append(append(b, '\n'), compiled...)
	if len(b) > probeCacheMax {
		return
	}
	writeOwnFile(c.dir, c.file(path, withWorker), b)
}

type stampPath struct {
	path string
	link bool
}

// stampPaths are the files an answer for path depends on.
func stampPaths(path string, py Python) []stampPath {
	var out []stampPath
	seen := map[stampPath]bool{}
	add := func(p string, link bool) {
		sp := stampPath{p, link}
		if p == "" || seen[sp] {
			return
		}
		seen[sp] = true
		out = append(out, sp)
	}
	for _, exe := range []string{path, py.Executable} {
		add(exe, true)
		add(exe, false)
		add(filepath.Join(filepath.Dir(exe), "pyvenv.cfg"), false)
		add(filepath.Join(filepath.Dir(filepath.Dir(exe)), "pyvenv.cfg"), false)
	}
	add(py.Prefix, false)
	add(py.BasePrefix, false)
	for _, p := range append(slices.Clone(py.Paths), py.siteDirs...) {
		add(p, false)
	}
	return out
}

func stampPathsOf(stamps []fileStamp) []stampPath {
	out := make([]stampPath, len(stamps))
	for i, s := range stamps {
		out[i] = stampPath{s.Path, s.Link}
	}
	return out
}

// stampOf stamps the file at path (through links unless link).
func stampOf(path string, link bool) fileStamp {
	stat := os.Stat
	if link {
		stat = os.Lstat
	}
	fi, err := stat(path)
	if err != nil {
		return fileStamp{Path: path, Missing: true, Link: link}
	}
	s := fileStamp{Path: path, Mode: uint32(fi.Mode()), Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Link: link}
	fillStamp(&s, fi)
	return s
}

// isScript reports whether the file at path starts with "#!".
func isScript(path string) bool {
	head, err := readHead(path, 2)
	return err != nil || string(head) == "#!"
}

// readOwnFile reads the regular file at path, not through a link, when
// the user owns it and nobody else may read or write it (mode 0600), and
// it holds at most max bytes.
func readOwnFile(path string, max int64) ([]byte, bool) {
	f, err := openNoFollow(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 || fi.Size() > max || !ownedByUser(fi) {
		return nil, false
	}
	// Sized to the file (a kept answer holds the compiled worker, about
	// 250 KB): io.ReadAll would grow its buffer by doubling, four times
	// the bytes allocated and written.
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, max+1)); err != nil || int64(buf.Len()) > max {
		return nil, false
	}
	return buf.Bytes(), true
}

// writeOwnFile writes b to path in dir (made 0700 when missing), through a
// 0600 file renamed into place, so a reader sees the old file or the new.
func writeOwnFile(dir, path string, b []byte) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return
	}
	tmp := f.Name()
	_, werr := f.Write(b)
	cerr := f.Close()
	if werr != nil || cerr != nil || os.Chmod(tmp, 0o600) != nil || os.Rename(tmp, path) != nil {
		os.Remove(tmp)
	}
}
