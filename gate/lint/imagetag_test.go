package lint

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/manifest"
)

func TestCheckedImageTag(t *testing.T) {
	tests := []struct {
		tag, want string
		known     bool
	}{
		{"", DefaultImageTag, true},
		{"2025-05-08", "2025-05-08", true},
		{"alpha", DefaultImageTag, false},
	}
	for _, tt := range tests {
		got, known := CheckedImageTag(tt.tag)
		if got != tt.want || known != tt.known {
			t.Errorf("CheckedImageTag(%q) = %q, %v; want %q, %v", tt.tag, got, known, tt.want, tt.known)
		}
	}
	if ImageTagNote("") == "" || ImageTagNote("2025-05-08") != "" {
		t.Error("ImageTagNote: want a note only without an image_tag")
	}
}

// TestMissingImagePackages runs the check with the real interpreter: what it
// reports missing must be exactly what that interpreter cannot import.
func TestMissingImagePackages(t *testing.T) {
	py := needPython(t)
	missing, err := MissingImagePackages(context.Background(), py, "")
	if err != nil {
		t.Fatal(err)
	}
	pkgs, _ := ImagePackages(DefaultImageTag)
	for _, p := range pkgs {
		err := runPython(py, "import "+p.Imports[0])
		isMissing := false
		for _, m := range missing {
			isMissing = isMissing || m.Dist == p.Dist
		}
		if (err != nil) != isMissing {
			t.Errorf("%s: import error %v, reported missing %v", p.Dist, err, isMissing)
		}
	}
	m := &manifest.Manifest{File: "gradegate.yaml", Grader: manifest.Grader{Type: "python"}}
	if f := ImagePackagesFinding(py, m, missing, []string{"json", "re"}); f != nil {
		t.Errorf("finding %+v for a grader that imports only the standard library", f)
	}
	if len(missing) == 0 {
		return
	}
	f := ImagePackagesFinding(py, m, missing, []string{"json", missing[0].Imports[0]})
	if f == nil || f.Code != CodeImagePackagesMissing || f.Severity != manifest.SeverityWarn ||
		!strings.Contains(f.Message, "the grader imports "+missing[0].Dist+",") || !strings.Contains(f.Message, "-m pip install "+missing[0].Requirement()) {
		t.Errorf("finding %+v, want a warning naming the one package imported, with the pip command", f)
	}
	if len(missing) > 1 && strings.Contains(f.Message, missing[1].Requirement()) {
		t.Errorf("finding %+v names a package the grader does not import", f)
	}
}

func runPython(py, code string) error {
	return exec.Command(py, "-I", "-c", code).Run()
}
