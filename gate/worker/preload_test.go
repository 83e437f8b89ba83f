//go:build linux

package worker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
)

func TestPreloads(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"none", "def grade(sample, item):\n    return 1.0\n", nil},
		{"import", "import json\n", []string{"json"}},
		{"a list, with as", "import re, json as j,  math\n", []string{"json", "math", "re"}},
		{"from", "from collections import Counter\nfrom urllib.parse import urlparse\n", []string{"collections", "urllib.parse"}},
		{"inside a function", "def grade(s, i):\n    import difflib\n    return 1.0\n", []string{"difflib"}},
		{"not on the list", "import random, tempfile, numpy, os\nimport threading\n", nil},
		{"a package of the repository's", "from .helpers import x\nimport helpers\n", nil},
		{"named twice", "import json\nimport json\nfrom json import loads\n", []string{"json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := preloads([]byte(tt.src)); !slices.Equal(got, tt.want) {
				t.Errorf("preloads = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestPreloadOwnLibraryOnly: the zygote's preload imports a name the
// interpreter's own library answers for, the packages of a dotted one
// included, and never a file on sys.path that shadows one.
func TestPreloadOwnLibraryOnly(t *testing.T) {
	dir := t.TempDir()
	// A difflib.py of the repository's, first on sys.path.
	if err := os.WriteFile(filepath.Join(dir, "difflib.py"), []byte("import sys\nsys.shadow_ran = True\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check := fmt.Sprintf(`
import json as real_json
sys.path.insert(0, %q)
for name in ("difflib", "json", "urllib.parse"):
    sys.modules.pop(name, None)
preload(["difflib", "json", "urllib.parse", 7])
diffs = []
if getattr(sys, "shadow_ran", False) or "difflib" in sys.modules:
    diffs.append(["difflib", "the repository's file ran in the zygote"])
for name in ("json", "urllib", "urllib.parse"):
    if name not in sys.modules:
        diffs.append([name, "not preloaded"])
print(real_json.dumps({"checked": 4, "diffs": diffs}))
`, dir)
	got := workerCheck(t, workerSource()+check)
	if got.Checked != 4 || len(got.Diffs) > 0 {
		t.Fatalf("preload: %q", got.Diffs)
	}
}

// TestForkFindsGraderImportsLoaded: a variant forked from a pool whose
// grader imports json finds json loaded when it starts, and one of a pool
// whose grader does not finds it not loaded, as in a fresh interpreter.
func TestForkFindsGraderImportsLoaded(t *testing.T) {
	variant := "import sys\nLOADED = 'json' in sys.modules\nimport json\n" +
		"def grade(sample, item):\n    return 1.0 if LOADED else 0.0\n"
	for _, tt := range []struct {
		name string
		src  string
		want float64
	}{
		{"the grader imports json", "import json\ndef grade(sample, item):\n    return 0.5\n", 1},
		{"the grader does not", "def grade(sample, item):\n    return 0.5\n", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := newPool(t, python(t), tt.src, nil)
			v, err := base.Fork(context.Background(), []byte(variant))
			if err != nil {
				t.Fatalf("Fork: %v", err)
			}
			defer v.Close()
			got, err := v.Grade(context.Background(), []grading.Task{task("a", map[string]any{})})
			if err != nil || got[0].Class != grading.ClassOK || *got[0].Score != tt.want {
				t.Fatalf("variant: %v %+v, want ok %v", err, got, tt.want)
			}
		})
	}
}
