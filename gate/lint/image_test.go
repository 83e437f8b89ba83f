package lint

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gradegate/gradegate/manifest"
)

func TestImagePackages(t *testing.T) {
	tests := []struct {
		name      string
		tag       string
		wantKnown bool
		// want is the pip requirements of the tag, in order.
		want []string
	}{
		{
			// OpenAI's graders guide, "Python graders", packages for 2025-05-08.
			name:      "2025-05-08",
			tag:       "2025-05-08",
			wantKnown: true,
			want: []string{
				"numpy==2.2.4", "scipy==1.15.2", "sympy==1.13.3", "pandas==2.2.3",
				"rapidfuzz==3.10.1", "scikit-learn==1.6.1", "rouge-score==0.1.2",
				"deepdiff==8.4.2", "jsonschema==4.23.0", "pydantic==2.10.6",
				"pyyaml==6.0.2", "nltk==3.9.1", "sqlparse==0.5.3", "rdkit==2024.9.6",
				"scikit-bio==0.6.3", "ast-grep-py==0.36.2",
			},
		},
		{name: "unknown tag", tag: "2099-01-01"},
		{name: "no tag", tag: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pkgs, known := ImagePackages(tt.tag)
			if known != tt.wantKnown {
				t.Errorf("known = %v, want %v", known, tt.wantKnown)
			}
			var got []string
			for _, p := range pkgs {
				got = append(got, p.Requirement())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("requirements (-want +got):\n%s", diff)
			}
		})
	}
}

func TestImporter(t *testing.T) {
	tests := []struct {
		name     string
		module   string
		wantDist string // "" when not in the image
	}{
		{"scikit-learn is imported as sklearn", "sklearn", "scikit-learn"},
		{"pyyaml is imported as yaml", "yaml", "pyyaml"},
		{"scikit-bio is imported as skbio", "skbio", "scikit-bio"},
		{"rouge-score is imported as rouge_score", "rouge_score", "rouge-score"},
		{"ast-grep-py is imported as ast_grep_py", "ast_grep_py", "ast-grep-py"},
		{"rdkit", "rdkit", "rdkit"},
		{"numpy", "numpy", "numpy"},
		{"a distribution name is not an import name", "scikit-learn", ""},
		{"pyyaml is not an import name", "pyyaml", ""},
		{"requests is not in the image", "requests", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := importer("2025-05-08", tt.module)
			if ok != (tt.wantDist != "") || p.Dist != tt.wantDist {
				t.Errorf("importer(%q) = %q, %v; want %q", tt.module, p.Dist, ok, tt.wantDist)
			}
		})
	}
}

// The Dockerfile installs exactly these pins: cmd/gradegate checks that
// (TestImageRequirementsMatchTheImageTag), where the image is built.

// TestGraderInActionImage checks imports against the Action image chosen:
// the slim image has only the standard library, whatever the image tag
// documents; the full image and a Python outside the images have the tag's
// packages.
func TestGraderInActionImage(t *testing.T) {
	py := needPython(t)
	const source = "import json\nimport numpy as np\n\ndef grade(sample, item):\n    return float(np.isclose(json.loads(sample['x']), 1))\n"
	hold := manifest.SeverityHold
	tests := []struct {
		name  string
		tag   string
		image ActionImage
		want  []short
	}{
		{name: "full image", tag: "2025-05-08", image: ImageFull, want: []short{}},
		{name: "no Action image", tag: "2025-05-08", image: "", want: []short{}},
		{name: "slim image", tag: "2025-05-08", image: ImageSlim, want: []short{{CodeImportNotInImage, hold, 2}}},
		{name: "an image gradegate does not know", tag: "2025-05-08", image: "huge", want: []short{{CodeImportNotInImage, hold, 2}}},
		{name: "slim image, no tag: one finding, not two", tag: "", image: ImageSlim, want: []short{{CodeImportNotInImage, hold, 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := manifest.Grader{ImageTag: tt.tag}
			got, err := Grader(context.Background(), py, []byte(source), "grader.py", g, InImage(tt.image))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, shorten(got)); diff != "" {
				t.Errorf("findings (-want +got):\n%s\nall: %+v", diff, got)
			}
			if tt.image == ImageSlim && tt.tag != "" && (len(got) != 1 || !strings.Contains(got[0].Message, "uses: gradegate/gradegate,")) {
				t.Errorf("the finding should say how to get the package: %+v", got)
			}
		})
	}
}
