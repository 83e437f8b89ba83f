package lint

import "slices"

// Package is one third-party distribution an image tag provides.
type Package struct {
	// Dist is the distribution name as pip knows it (scikit-learn).
	Dist string
	// Version is the pinned version (1.6.1).
	Version string
	// Imports are the top-level module names the distribution installs
	// (sklearn): a grader imports these, never the distribution name.
	Imports []string
}

// Requirement returns the pip requirement that installs exactly this
// package: "scikit-learn==1.6.1".
func (p Package) Requirement() string { return p.Dist + "==" + p.Version }

// ImageTags returns the image tags gradegate knows, oldest first.
func ImageTags() []string { return []string{"2025-05-08"} }

// ImagePackages returns the third-party packages of an image tag and whether
// the tag is known. It is the one list of them: lint checks imports against
// it, and the action's Dockerfile installs the same pins (a test checks).
//
// The list is the one OpenAI documents for the hosted Python grader's image
// tag. The distributions' own dependencies (pandas brings dateutil, pydantic
// brings typing_extensions, …) are installed too but are not part of the
// documented set, so they may change under the same tag; a grader that
// imports one is held like any other undocumented import.
//
// A new slice is returned on every call, so callers may keep or change it.
func ImagePackages(tag string) ([]Package, bool) {
	switch tag {
	case "2025-05-08":
		return []Package{
			{"numpy", "2.2.4", []string{"numpy"}},
			{"scipy", "1.15.2", []string{"scipy"}},
			{"sympy", "1.13.3", []string{"sympy"}},
			{"pandas", "2.2.3", []string{"pandas"}},
			{"rapidfuzz", "3.10.1", []string{"rapidfuzz"}},
			{"scikit-learn", "1.6.1", []string{"sklearn"}},
			{"rouge-score", "0.1.2", []string{"rouge_score"}},
			{"deepdiff", "8.4.2", []string{"deepdiff"}},
			{"jsonschema", "4.23.0", []string{"jsonschema"}},
			{"pydantic", "2.10.6", []string{"pydantic"}},
			{"pyyaml", "6.0.2", []string{"yaml"}},
			{"nltk", "3.9.1", []string{"nltk"}},
			{"sqlparse", "0.5.3", []string{"sqlparse"}},
			{"rdkit", "2024.9.6", []string{"rdkit"}},
			{"scikit-bio", "0.6.3", []string{"skbio"}},
			{"ast-grep-py", "0.36.2", []string{"ast_grep_py"}},
		}, true
	}
	return nil, false
}

// importer finds the package of tag that provides the top-level module name.
func importer(tag, module string) (Package, bool) {
	pkgs, _ := ImagePackages(tag)
	for _, p := range pkgs {
		if slices.Contains(p.Imports, module) {
			return p, true
		}
	}
	return Package{}, false
}

// providers lists the known image tags that provide the top-level module name.
func providers(module string) []string {
	var tags []string
	for _, tag := range ImageTags() {
		if _, ok := importer(tag, module); ok {
			tags = append(tags, tag)
		}
	}
	return tags
}

// ActionImage is the gradegate Action image a grader runs in, as the image
// declares it in GRADEGATE_IMAGE; "" outside them (the user's own Python,
// whose packages lint takes on trust from image_tag).
type ActionImage string

// The Action images the release publishes.
const (
	// ImageFull installs the package set of every image tag ImageTags
	// lists, pinned as ImagePackages says.
	ImageFull ActionImage = "full"
	// ImageSlim is Python and its standard library alone: a fraction of
	// the size, for graders that import nothing else.
	ImageSlim ActionImage = "slim"
)

// ActionImages returns the Action images, the default first.
func ActionImages() []ActionImage { return []ActionImage{ImageFull, ImageSlim} }

// Installs reports whether the image has p installed. The full image and a
// Python outside the Action images are taken to have every package of the
// grader's image tag; the slim image, and an image name gradegate does not
// know, have none.
func (im ActionImage) Installs(p Package) bool { return im == "" || im == ImageFull }

// InImage tells Grader the Action image the grader will run in (default
// "": not an Action image).
func InImage(im ActionImage) Option { return func(o *options) { o.image = im } }

// ImportsInto adds to *dst the top-level module of every absolute import
// the grader's source makes (guarded ones included), for
// ImagePackagesFinding.
func ImportsInto(dst *[]string) Option { return func(o *options) { o.imports = dst } }
