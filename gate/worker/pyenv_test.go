package worker

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakePyenv makes a pyenv root in a temporary folder: the shim pyenv rehash
// writes, and versions/<v>/bin/python3 for each of versions, a link to the
// machine's interpreter. There is no libexec/pyenv: running the shim fails,
// so a resolution that works did not run it.
func fakePyenv(t *testing.T, versions ...string) (root, shim string) {
	t.Helper()
	real := machinePython(t)
	root = filepath.Join(t.TempDir(), "pyenv")
	shim = filepath.Join(root, "shims", "python3")
	mustWrite(t, shim, `#!/usr/bin/env bash
set -e
[ -n "$PYENV_DEBUG" ] && set -x

program="${0##*/}"

export PYENV_ROOT="`+root+`"
SHIM_PATH=${0%/*}
if [[ $SHIM_PATH != "`+root+`/shims" ]]; then
  export _PYENV_SHIM_PATH="$SHIM_PATH"
fi
exec "`+root+`/libexec/pyenv" exec "$program" "$@"
`, 0o755)
	for _, v := range versions {
		bin := filepath.Join(root, "versions", v, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(real, filepath.Join(bin, "python3")); err != nil {
			t.Fatal(err)
		}
	}
	return root, shim
}

func mustWrite(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// TestPyenvShimTarget holds the shim resolution to pyenv's own scripts:
// PYENV_VERSION, then the nearest .python-version, then the root's version
// file; and no answer wherever pyenv would do more than read them.
func TestPyenvShimTarget(t *testing.T) {
	tests := []struct {
		name     string
		versions []string          // installed
		files    map[string]string // relative to the temporary folder; "ROOT/" is the pyenv root
		env      map[string]string
		dir      string // working directory, relative to the temporary folder
		notShim  bool   // the shim's exec line is changed
		want     string // version whose python3 is the answer; "" for none
	}{
		{name: "global version file", versions: []string{"3.11.7"}, files: map[string]string{"ROOT/version": "3.11.7\n"}, want: "3.11.7"},
		{name: "no version file is the system's", versions: []string{"3.11.7"}},
		{name: "PYENV_VERSION wins", versions: []string{"3.11.7", "3.12.1"}, files: map[string]string{"ROOT/version": "3.11.7\n"}, env: map[string]string{"PYENV_VERSION": "3.12.1"}, want: "3.12.1"},
		{name: "local file up the tree", versions: []string{"3.11.7", "3.12.1"}, dir: "repo/sub", files: map[string]string{"ROOT/version": "3.11.7\n", "repo/.python-version": "# pinned\n\n3.12.1 extra words\r\n"}, want: "3.12.1"},
		{name: "nearest local file", versions: []string{"3.11.7", "3.12.1"}, dir: "repo/sub", files: map[string]string{"repo/.python-version": "3.11.7\n", "repo/sub/.python-version": "3.12.1\n"}, want: "3.12.1"},
		{name: "PYENV_DIR before the working directory", versions: []string{"3.11.7", "3.12.1"}, dir: "repo", env: map[string]string{"PYENV_DIR": "other"}, files: map[string]string{"repo/.python-version": "3.11.7\n", "other/.python-version": "3.12.1\n"}, want: "3.12.1"},
		{name: "empty local file is the system's", versions: []string{"3.11.7"}, dir: "repo", files: map[string]string{"ROOT/version": "3.11.7\n", "repo/.python-version": ""}},
		{name: "comments only is the system's", versions: []string{"3.11.7"}, dir: "repo", files: map[string]string{"ROOT/version": "3.11.7\n", "repo/.python-version": "# none\n"}},
		{name: "system", versions: []string{"3.11.7"}, env: map[string]string{"PYENV_VERSION": "system"}},
		{name: "python- prefix", versions: []string{"3.11.7"}, env: map[string]string{"PYENV_VERSION": "python-3.11.7"}, want: "3.11.7"},
		{name: "a prefix pyenv-latest completes", versions: []string{"3.11.7"}, env: map[string]string{"PYENV_VERSION": "3.11"}},
		{name: "not installed", versions: []string{"3.11.7"}, env: map[string]string{"PYENV_VERSION": "3.13.0"}},
		{name: "path traversal", versions: []string{"3.11.7"}, env: map[string]string{"PYENV_VERSION": "../versions/3.11.7"}},
		{name: "first version with the program", versions: []string{"3.11.7"}, files: map[string]string{"ROOT/versions/2.7.18/bin/python2": ""}, env: map[string]string{"PYENV_VERSION": "2.7.18:3.11.7"}, want: "3.11.7"},
		{name: "later version after one without it", versions: []string{"3.11.7"}, files: map[string]string{"ROOT/version": "2.7.18\n3.11.7\n", "ROOT/versions/2.7.18/bin/python": ""}, want: "3.11.7"},
		{name: "a version-name hook", versions: []string{"3.11.7"}, files: map[string]string{"ROOT/version": "3.11.7\n", "ROOT/pyenv.d/version-name/pin.bash": "PYENV_VERSION=3.12.1\n"}},
		{name: "an unknown which hook", versions: []string{"3.11.7"}, files: map[string]string{"ROOT/version": "3.11.7\n", "ROOT/plugins/x/etc/pyenv.d/which/swap.bash": "PYENV_COMMAND_PATH=/bin/true\n"}},
		{name: "a hook on PYENV_HOOK_PATH", versions: []string{"3.11.7"}, files: map[string]string{"ROOT/version": "3.11.7\n", "hooks/exec/wrap.bash": "PYENV_COMMAND_PATH=/bin/true\n"}, env: map[string]string{"PYENV_HOOK_PATH": "HOOKS"}},
		{name: "pyenv-virtualenv's hooks", versions: []string{"3.11.7"}, files: map[string]string{"ROOT/version": "3.11.7\n",
			"ROOT/plugins/pyenv-virtualenv/etc/pyenv.d/which/system-site-packages.bash": "", "ROOT/plugins/pyenv-virtualenv/etc/pyenv.d/which/conda.bash": "",
			"ROOT/pyenv.d/exec/pip-rehash.bash": "", "ROOT/pyenv.d/rehash/anything.bash": ""}, want: "3.11.7"},
		{name: "not pyenv's shim", versions: []string{"3.11.7"}, files: map[string]string{"ROOT/version": "3.11.7\n"}, notShim: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, shim := fakePyenv(t, tt.versions...)
			base := filepath.Dir(root)
			for name, content := range tt.files {
				mustWrite(t, filepath.Join(base, strings.Replace(name, "ROOT/", "pyenv/", 1)), content, 0o644)
			}
			if tt.notShim {
				b, err := os.ReadFile(shim)
				if err != nil {
					t.Fatal(err)
				}
				mustWrite(t, shim, strings.Replace(string(b), `exec "$program"`, `exec --wrap "$program"`, 1), 0o755)
			}
			dir := filepath.Join(base, tt.dir)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			getenv := func(k string) string {
				v := tt.env[k]
				switch {
				case k == "PYENV_DIR" && v != "":
					return filepath.Join(base, v)
				case k == "PYENV_HOOK_PATH" && v != "":
					return filepath.Join(base, "hooks")
				}
				return v
			}
			got, ok := pyenvShimTarget(shim, getenv, dir)
			want := ""
			if tt.want != "" {
				want = filepath.Join(root, "versions", tt.want, "bin", "python3")
			}
			if got != want || ok != (want != "") {
				t.Fatalf("pyenvShimTarget = %q, %v; want %q", got, ok, want)
			}
		})
	}
}

// TestResolveShimUnrun resolves a fake pyenv's python3, which cannot run
// (there is no pyenv behind it), to its version's interpreter and probes
// that one; and a shim that cannot be read is run as before.
func TestResolveShimUnrun(t *testing.T) {
	root, shim := fakePyenv(t, "3.11.7")
	mustWrite(t, filepath.Join(root, "version"), "3.11.7\n", 0o644)
	t.Setenv("PATH", filepath.Dir(shim)+string(os.PathListSeparator)+os.Getenv("PATH"))
	getenv := func(string) string { return "" }
	py, err := Resolve(context.Background(), "python3", ResolveOptions{Getenv: getenv, Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if want := filepath.Join(root, "versions", "3.11.7", "bin", "python3"); py.Executable != want {
		t.Errorf("Executable = %s, want %s", py.Executable, want)
	}
	// PYENV_VERSION=system: the shim must run, and this one cannot.
	system := func(k string) string {
		if k == "PYENV_VERSION" {
			return "system"
		}
		return ""
	}
	if py, err := Resolve(context.Background(), "python3", ResolveOptions{Getenv: system, Dir: t.TempDir()}); err == nil {
		t.Fatalf("Resolve ran no shim and answered %+v", py)
	}
}

// TestPyenvShimAsPyenv compares the resolution with what the machine's
// own pyenv shim runs, when there is one.
func TestPyenvShimAsPyenv(t *testing.T) {
	path, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	target, ok := pyenvShimTarget(path, os.Getenv, dir)
	if !ok {
		t.Skip("python3 is not a pyenv shim resolved from its version files")
	}
	out, err := exec.Command(path, "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != target {
		t.Errorf("the shim runs %s, pyenvShimTarget says %s", got, target)
	}
}

// machinePython is the file of this machine's python3, through its links;
// the test is skipped without one.
func machinePython(t *testing.T) string {
	t.Helper()
	py, err := ResolvePython(context.Background(), "python3")
	if err != nil {
		t.Skip("no python3")
	}
	real, err := filepath.EvalSymlinks(py.Executable)
	if err != nil {
		t.Fatal(err)
	}
	return real
}
