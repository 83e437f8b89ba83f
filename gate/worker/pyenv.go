package worker

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// A pyenv shim is a bash script that runs a chain of some twenty bash
// processes (pyenv exec, version-name, version-file, which, hooks) to pick
// the interpreter, a tenth of a second or more before Python even starts.
// The choice is a few files' reading: pyenvShimTarget makes it the way
// those scripts make it (pyenv's libexec/pyenv-version-name,
// pyenv-version-file, pyenv-version-file-read, pyenv-which) and answers
// only when the answer is certain; anything else (the system version, a
// version prefix such as 3.11 that pyenv-latest would complete, a hook that
// could change the choice) runs the shim as before.

// pyenvShimExport and pyenvShimExec are the lines of the shim pyenv rehash
// writes that say which pyenv it runs.
var (
	pyenvShimExport = regexp.MustCompile(`(?m)^export PYENV_ROOT="([^"$` + "`" + `\\]+)"$`)
	pyenvShimExec   = regexp.MustCompile(`(?m)^exec "([^"$` + "`" + `\\]+)/libexec/pyenv" exec "\$program" "\$@"$`)
)

// pyenvHarmlessHooks are the hooks, by command, that do not change which
// interpreter a shim runs when the chosen version's bin/<program> is an
// executable file: pyenv-virtualenv's which hooks act only when it is not
// (`[ ! -x "${PYENV_COMMAND_PATH}" ]`), pyenv's pip-rehash exec hook only
// for pip. version-name has none: its hooks may rewrite the version.
var pyenvHarmlessHooks = map[string][]string{
	"version-name": nil,
	"which":        {"conda.bash", "python-config.bash", "system-site-packages.bash"},
	"exec":         {"pip-rehash.bash"},
}

// pyenvShimTarget is the interpreter the pyenv shim at path would run, when
// that can be known without running it; ok is false otherwise. getenv is
// the environment the shim would run in, dir its working directory.
func pyenvShimTarget(path string, getenv func(string) string, dir string) (target string, ok bool) {
	head, err := readHead(path, 4096)
	if err != nil || !bytes.HasPrefix(head, []byte("#!")) {
		return "", false
	}
	exp := pyenvShimExport.FindSubmatch(head)
	run := pyenvShimExec.FindSubmatch(head)
	if exp == nil || run == nil || string(exp[1]) != string(run[1]) || !filepath.IsAbs(string(exp[1])) {
		return "", false
	}
	root := filepath.Clean(string(exp[1]))
	program := filepath.Base(path)
	if !pyenvHooksHarmless(root, getenv) {
		return "", false
	}
	versions := getenv("PYENV_VERSION")
	if versions == "" {
		if versions, ok = pyenvVersionFromFiles(root, getenv, dir); !ok {
			return "", false
		}
	}
	for _, v := range strings.Split(versions, ":") {
		name, ok := pyenvInstalled(root, v)
		if !ok {
			return "", false
		}
		cand := filepath.Join(root, "versions", name, "bin", program)
		if fi, err := os.Stat(cand); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return cand, true
		}
	}
	// No version has the program: pyenv-which would look at the system's.
	return "", false
}

// pyenvInstalled is the directory name under versions/ that pyenv-version-name
// gives v when it names an installed version exactly (or with the explicit
// "python-" prefix pyenv drops); ok is false for "system", for an unsafe
// name and for a name pyenv-latest would have to complete.
func pyenvInstalled(root, v string) (string, bool) {
	if v == "" || v == "system" || v == "." || v == ".." || strings.ContainsAny(v, "/\x00") {
		return "", false
	}
	for _, name := range []string{v, strings.TrimPrefix(v, "python-")} {
		if name == "" || name == "." || name == ".." {
			continue
		}
		if fi, err := os.Stat(filepath.Join(root, "versions", name)); err == nil && fi.IsDir() {
			return name, true
		}
	}
	return "", false
}

// pyenvVersionFromFiles is pyenv-version-file then pyenv-version-file-read:
// the first .python-version from PYENV_DIR (or dir) up to /, then from dir
// when PYENV_DIR is another directory, then root/version. ok is false when
// that file names no version (pyenv then runs the system's).
func pyenvVersionFromFiles(root string, getenv func(string) string, dir string) (string, bool) {
	start := dir
	if d := getenv("PYENV_DIR"); d != "" {
		abs, err := filepath.Abs(d)
		if err != nil {
			return "", false
		}
		start = abs
	}
	file, found := findVersionFile(start)
	if !found && start != dir {
		file, found = findVersionFile(dir)
	}
	if !found {
		file = filepath.Join(root, "version")
	}
	return readVersionFile(file)
}

// findVersionFile is the first regular file .python-version in dir or one
// of its parents.
func findVersionFile(dir string) (string, bool) {
	if !filepath.IsAbs(dir) {
		return "", false
	}
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		p := filepath.Join(d, ".python-version")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, true
		}
		if d == filepath.Dir(d) {
			return "", false
		}
	}
}

// readVersionFile reads the versions a pyenv version file names, joined
// with ":": the first word of each line that is neither empty nor a
// comment. A file that is missing, empty or names none gives ok false.
func readVersionFile(path string) (string, bool) {
	b, err := readHead(path, 64<<10)
	if err != nil || len(b) == 0 || len(b) == 64<<10 {
		return "", false
	}
	var versions []string
	for line := range strings.SplitSeq(string(b), "\n") {
		if len(line) > 1024 {
			// read -n 1024 would cut it elsewhere than a word.
			return "", false
		}
		fields := strings.Fields(strings.ReplaceAll(line, "\r", " "))
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		versions = append(versions, fields[0])
	}
	if len(versions) == 0 {
		return "", false
	}
	return strings.Join(versions, ":"), true
}

// pyenvHooksHarmless reports whether every hook pyenv would source on the
// way from the shim to the interpreter is one of pyenvHarmlessHooks. The
// hook folders are pyenv's own list (libexec/pyenv): PYENV_HOOK_PATH, the
// root's pyenv.d, the system's folders and every plugin's etc/pyenv.d.
func pyenvHooksHarmless(root string, getenv func(string) string) bool {
	dirs := filepath.SplitList(getenv("PYENV_HOOK_PATH"))
	dirs = append(dirs, filepath.Join(root, "pyenv.d"), "/usr/etc/pyenv.d", "/usr/local/etc/pyenv.d", "/etc/pyenv.d", "/usr/lib/pyenv/hooks")
	plugins, err := filepath.Glob(filepath.Join(root, "plugins", "*", "etc", "pyenv.d"))
	if err != nil {
		return false
	}
	dirs = append(dirs, plugins...)
	for _, d := range dirs {
		if d == "" {
			continue
		}
		for command, harmless := range pyenvHarmlessHooks {
			hooks, err := filepath.Glob(filepath.Join(d, command, "*.bash"))
			if err != nil {
				return false
			}
			for _, h := range hooks {
				if !slices.Contains(harmless, filepath.Base(h)) {
					return false
				}
			}
		}
	}
	return true
}

// readHead reads at most n bytes from the start of the file at path.
func readHead(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}
