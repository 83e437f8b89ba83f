//go:build linux

package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// cachedInterpreter is a link in a temporary folder to the machine's
// interpreter, probed once with a cache in another: the cache file holds
// the answer.
func cachedInterpreter(t *testing.T) (link, cacheDir string, opts ResolveOptions, first Python) {
	t.Helper()
	real := machinePython(t)
	link = filepath.Join(t.TempDir(), "python3")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	cacheDir = filepath.Join(t.TempDir(), "cache")
	opts = ResolveOptions{CacheDir: cacheDir, Worker: true}
	var err error
	if first, err = ProbePython(context.Background(), link, opts); err != nil {
		t.Fatalf("ProbePython: %v", err)
	}
	if len(first.Worker) == 0 {
		t.Fatal("no compiled worker")
	}
	return link, cacheDir, opts, first
}

// rewriteEntry changes the kept answer's version to a value no
// interpreter has: a command that returns it read the cache.
func rewriteEntry(t *testing.T, file string) {
	t.Helper()
	e, compiled := readEntry(t, file)
	var answer map[string]any
	if err := json.Unmarshal(e.Answer, &answer); err != nil {
		t.Fatal(err)
	}
	answer["version"] = "0.0.1"
	var err error
	if e.Answer, err = json.Marshal(answer); err != nil {
		t.Fatal(err)
	}
	writeEntry(t, file, e, compiled)
}

func readEntry(t *testing.T, file string) (probeEntry, []byte) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	head, compiled, _ := bytes.Cut(b, []byte("\n"))
	var e probeEntry
	if err := json.Unmarshal(head, &e); err != nil {
		t.Fatal(err)
	}
	return e, compiled
}

func writeEntry(t *testing.T, file string, e probeEntry, compiled []byte) {
	t.Helper()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, append(append(b, '\n'), compiled...), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestProbeCache reads a kept answer only from the user's own 0600 file,
// not through a link, and only while the interpreter and its search path
// are the files it was kept for.
func TestProbeCache(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, link, file string)
		cached bool // the rewritten answer is returned
	}{
		{name: "kept", change: func(*testing.T, string, string) {}, cached: true},
		{name: "readable by others", change: func(t *testing.T, _, file string) { chmod(t, file, 0o644) }},
		{name: "group writable", change: func(t *testing.T, _, file string) { chmod(t, file, 0o620) }},
		{name: "not the user's", change: func(t *testing.T, _, file string) {
			if os.Geteuid() != 0 {
				t.Skip("chown needs root")
			}
			if err := os.Chown(file, 60999, 60999); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a link to a kept answer", change: func(t *testing.T, _, file string) {
			moved := file + ".elsewhere"
			if err := os.Rename(file, moved); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(moved, file); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "not JSON", change: func(t *testing.T, _, file string) {
			if err := os.WriteFile(file, []byte("{"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "the interpreter link replaced", change: func(t *testing.T, link, _ string) {
			relink(t, link)
		}},
		{name: "a search path folder changed", change: func(t *testing.T, link, file string) {
			e, compiled := readEntry(t, file)
			// As if a package had been installed since: the folder's
			// time is not the one kept.
			last := &e.Stamps[len(e.Stamps)-1]
			last.Mtime -= int64(time.Second)
			writeEntry(t, file, e, compiled)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			link, cacheDir, opts, first := cachedInterpreter(t)
			file := probeCache{dir: cacheDir}.file(link, true)
			fi, err := os.Lstat(file)
			if err != nil {
				t.Fatalf("no cache file: %v", err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Fatalf("cache file mode %v, want 0600", fi.Mode().Perm())
			}
			rewriteEntry(t, file)
			tt.change(t, link, file)
			got, err := ProbePython(context.Background(), link, opts)
			if err != nil {
				t.Fatalf("ProbePython: %v", err)
			}
			want := first.Version
			if tt.cached {
				want = "0.0.1"
			}
			if got.Version != want {
				t.Fatalf("Version = %s, want %s", got.Version, want)
			}
			if string(got.Worker) != string(first.Worker) || got.Executable != first.Executable {
				t.Fatalf("the kept answer is not the probe's: %s vs %s", got.Executable, first.Executable)
			}
		})
	}
}

// TestProbeCacheNoScript keeps no answer for a script: what a shim runs
// depends on the environment it runs in.
func TestProbeCacheNoScript(t *testing.T) {
	py, err := ResolvePython(context.Background(), "python3")
	if err != nil {
		t.Skip("no python3")
	}
	script := filepath.Join(t.TempDir(), "python3")
	mustWrite(t, script, "#!/bin/sh\nexec "+shellQuote(py.Executable)+" \"$@\"\n", 0o755)
	cacheDir := filepath.Join(t.TempDir(), "cache")
	if _, err := ProbePython(context.Background(), script, ResolveOptions{CacheDir: cacheDir, Worker: true}); err != nil {
		t.Fatalf("ProbePython: %v", err)
	}
	if _, err := os.Stat(probeCache{dir: cacheDir}.file(script, true)); !os.IsNotExist(err) {
		t.Fatalf("a script's answer was kept (%v)", err)
	}
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// TestProbeCacheNewSiteFolder asks the interpreter again when a package
// folder the site module looks in, missing when the answer was kept, has
// been created since (a first install): the new answer's search path has
// it, and the sandbox then lets graders read it.
func TestProbeCacheNewSiteFolder(t *testing.T) {
	py, err := ResolvePython(context.Background(), "python3")
	if err != nil {
		t.Skip("no python3")
	}
	venv := filepath.Join(t.TempDir(), "venv")
	if out, err := exec.Command(py.Executable, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		t.Skipf("no venv: %v: %s", err, out)
	}
	site, err := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages"))
	if err != nil || len(site) != 1 {
		t.Fatalf("site-packages of the venv: %v (%v)", site, err)
	}
	if err := os.Remove(site[0]); err != nil {
		t.Fatal(err)
	}
	python := filepath.Join(venv, "bin", "python3")
	opts := ResolveOptions{CacheDir: filepath.Join(t.TempDir(), "cache"), Worker: true}
	first, err := ProbePython(context.Background(), python, opts)
	if err != nil {
		t.Fatalf("ProbePython: %v", err)
	}
	if slices.Contains(first.Paths, site[0]) {
		t.Fatalf("the search path has %s, which does not exist", site[0])
	}
	rewriteEntry(t, probeCache{dir: opts.CacheDir}.file(python, true))
	if err := os.Mkdir(site[0], 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := ProbePython(context.Background(), python, opts)
	if err != nil {
		t.Fatalf("ProbePython: %v", err)
	}
	if got.Version != first.Version || !slices.Contains(got.Paths, site[0]) {
		t.Fatalf("version %s, search path %v: the kept answer was used, not a new one with %s", got.Version, got.Paths, site[0])
	}
}

// In CI nothing is kept: an earlier step of the job may run a pull
// request's code as the same user, which could write an answer for the
// gate to read.
func TestCacheDir(t *testing.T) {
	x, h := t.TempDir(), t.TempDir()
	missing := filepath.Join(h, "missing")
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{name: "XDG_CACHE_HOME", env: map[string]string{"XDG_CACHE_HOME": x, "HOME": h}, want: x + "/gradegate/python"},
		{name: "HOME", env: map[string]string{"HOME": h}, want: h + "/.cache/gradegate/python"},
		{name: "relative folders", env: map[string]string{"XDG_CACHE_HOME": "x", "HOME": "h"}},
		{name: "HOME not there", env: map[string]string{"HOME": missing}},
		{name: "XDG_CACHE_HOME not there", env: map[string]string{"XDG_CACHE_HOME": missing, "HOME": h}},
		{name: "CI", env: map[string]string{"CI": "true", "HOME": h}},
		{name: "GitHub Actions", env: map[string]string{"GITHUB_ACTIONS": "true", "XDG_CACHE_HOME": x}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CacheDir(func(k string) string { return tt.env[k] }, "python"); got != tt.want {
				t.Errorf("CacheDir = %q, want %q", got, tt.want)
			}
		})
	}
}

// relink replaces the link at link by a new one to the same target: the
// same interpreter, another file identity.
func relink(t *testing.T, link string) {
	t.Helper()
	target, err := os.Readlink(link)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestReadOwnFile: a kept answer is read whole, to the byte, when it is
// the user's alone, a regular file and no larger than the bound, and not
// otherwise.
func TestReadOwnFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, size int, mode os.FileMode) string {
		path := filepath.Join(dir, name)
		b := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
		if err := os.WriteFile(path, b, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		return path
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(write("target", 10, 0o600), link); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		path string
		size int
		ok   bool
	}{
		{"empty", write("empty", 0, 0o600), 0, true},
		{"small", write("small", 100, 0o600), 100, true},
		{"many reads", write("large", 300_001, 0o600), 300_001, true},
		{"at the bound", write("bound", 400_000, 0o600), 400_000, true},
		{"over the bound", write("over", 400_001, 0o600), 0, false},
		{"readable by others", write("open", 10, 0o644), 0, false},
		{"a link", link, 0, false},
		{"missing", filepath.Join(dir, "none"), 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, ok := readOwnFile(tt.path, 400_000)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			want, err := os.ReadFile(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) != tt.size || !bytes.Equal(b, want) {
				t.Errorf("read %d bytes, want the file's %d", len(b), len(want))
			}
		})
	}
}
