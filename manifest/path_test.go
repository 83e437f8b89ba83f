package manifest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gradegate/gradegate/manifest/input"
)

// TestPathsWhateverTheWorkingDirectory: the same manifest names the same
// files from any working directory and however it is spelled (bare, ./,
// ../, absolute), for every path key: the canaries file is read, and the
// dataset, grader and schema resolve to the files next to the manifest.
func TestPathsWhateverTheWorkingDirectory(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	if err := os.CopyFS(filepath.Join(repo, "evals"), os.DirFS("testdata/load/evals")); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(root, "elsewhere")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	suite := filepath.Join(repo, "evals", "order")
	abs := filepath.Join(suite, "gradegate.yaml")
	for _, tc := range []struct {
		wd    string
		names []string
	}{
		{suite, []string{"gradegate.yaml", "./gradegate.yaml", abs}},
		{repo, []string{"evals/order/gradegate.yaml", "./evals/order/../order/gradegate.yaml", abs}},
		{other, []string{"../repo/evals/order/gradegate.yaml", abs}},
	} {
		for _, name := range tc.names {
			t.Run(filepath.Base(tc.wd)+":"+name, func(t *testing.T) {
				t.Chdir(tc.wd)
				m, err := Load(input.Host{}, filepath.ToSlash(name))
				if err != nil {
					t.Fatalf("Load(%s) from %s: %v", name, tc.wd, err)
				}
				if len(m.Canaries) != 4 {
					t.Errorf("%d canaries, want 4", len(m.Canaries))
				}
				for key, rel := range map[string]string{"dataset.path": m.Dataset.Path, "grader.source": m.Grader.Source, "canaries.path": m.CanariesFile} {
					got, err := filepath.Abs(filepath.FromSlash(m.Path(rel)))
					if err != nil {
						t.Fatal(err)
					}
					if want := filepath.Join(suite, filepath.FromSlash(rel)); got != want {
						t.Errorf("%s %s resolves to %s, want %s", key, rel, got, want)
					}
				}
			})
		}
	}
}
