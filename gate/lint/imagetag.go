package lint

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"

	"github.com/gradegate/gradegate/manifest"
)

// DefaultImageTag is the image OpenAI's hosted Python grader uses when a
// grader names no image_tag: its packages are the ones such a grader can
// import.
const DefaultImageTag = "2025-05-08"

// Codes of the image tag checks.
const (
	// CodeImageTagUnknown warns that image_tag is not one gradegate knows.
	CodeImageTagUnknown = "image_tag_unknown"
	// CodeImagePackagesMissing warns that the interpreter gradegate grades
	// with cannot import some of the image's packages.
	CodeImagePackagesMissing = "image_packages_missing"
)

// CheckedImageTag returns the tag whose packages a grader's imports are
// checked against, and whether tag itself is known: tag when gradegate
// knows it, DefaultImageTag when it is empty (known) or unknown (not known).
func CheckedImageTag(tag string) (string, bool) {
	if tag == "" {
		return DefaultImageTag, true
	}
	if _, ok := ImagePackages(tag); ok {
		return tag, true
	}
	return DefaultImageTag, false
}

// ImageTagNote is the one line that says which package set a grader with
// no image_tag is checked and graded against, or "" when image_tag is set.
func ImageTagNote(tag string) string {
	if tag != "" {
		return ""
	}
	return fmt.Sprintf("grader.image_tag is not set: the grader gets OpenAI's current default image, %s, and its packages", DefaultImageTag)
}

// MissingImagePackages lists the packages of the image tag (resolved with
// CheckedImageTag) that python cannot import. It looks the modules up
// without importing them.
func MissingImagePackages(ctx context.Context, python, tag string) ([]Package, error) {
	tag, _ = CheckedImageTag(tag)
	pkgs, _ := ImagePackages(tag)
	args := []string{"-I", "-c", "import importlib.util, json, sys\nprint(json.dumps([m for m in sys.argv[1:] if importlib.util.find_spec(m) is None]))"}
	for _, p := range pkgs {
		args = append(args, p.Imports...)
	}
	out, err := exec.CommandContext(ctx, python, args...).Output()
	if err != nil {
		return nil, fmt.Errorf("checking %s for the packages of image %s: %w", python, tag, err)
	}
	var missing []string
	if err := json.Unmarshal(out, &missing); err != nil {
		return nil, fmt.Errorf("checking %s for the packages of image %s: %w", python, tag, err)
	}
	var res []Package
	for _, p := range pkgs {
		for _, m := range p.Imports {
			if contains(missing, m) {
				res = append(res, p)
				break
			}
		}
	}
	return res, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// InstallHint is the pip command that installs pkgs into python.
func InstallHint(python string, pkgs []Package) string {
	reqs := make([]string, len(pkgs))
	for i, p := range pkgs {
		reqs[i] = p.Requirement()
	}
	return python + " -m pip install " + strings.Join(reqs, " ")
}

// ImagePackagesFinding is the image_packages_missing warning for a Python
// grader whose interpreter lacks image packages the grader imports, or nil:
// missing is what MissingImagePackages found, imported the top-level
// modules the grader's source imports (ImportsInto). A package the grader
// never imports is not worth a warning, whatever the interpreter lacks.
func ImagePackagesFinding(python string, m *manifest.Manifest, missing []Package, imported []string) *manifest.Finding {
	if m.Grader.Judge != nil {
		return nil
	}
	var used []Package
	for _, p := range missing {
		if slices.ContainsFunc(p.Imports, func(mod string) bool { return contains(imported, mod) }) {
			used = append(used, p)
		}
	}
	if len(used) == 0 {
		return nil
	}
	tag, _ := CheckedImageTag(m.Grader.ImageTag)
	names := make([]string, len(used))
	for i, p := range used {
		names[i] = p.Dist
	}
	return &manifest.Finding{Code: CodeImagePackagesMissing, Severity: manifest.SeverityWarn, File: m.File, Line: m.Line("grader"),
		Message: fmt.Sprintf("the grader imports %s, which image %s has but %s cannot import: those cases error here and not on the hosted grader; install with: %s",
			strings.Join(names, ", "), tag, python, InstallHint(python, used))}
}

// WriteImageReport checks that python can import the packages of every
// image tag gradegate knows, and writes to w, per tag, that it can or what
// is missing with the command that installs it (`gradegate doctor`).
func WriteImageReport(ctx context.Context, w io.Writer, python string) {
	for _, tag := range ImageTags() {
		missing, err := MissingImagePackages(ctx, python, tag)
		switch {
		case err != nil:
			fmt.Fprintf(w, "image %s packages: could not check %s: %v\n", tag, python, err)
		case len(missing) == 0:
			fmt.Fprintf(w, "image %s packages: all importable by %s\n", tag, python)
		default:
			names := make([]string, len(missing))
			for i, p := range missing {
				names[i] = p.Dist
			}
			fmt.Fprintf(w, "image %s packages: %s cannot import %s; graders importing them error here but not on the hosted grader. Install them with:\n  %s\n",
				tag, python, strings.Join(names, ", "), InstallHint(python, missing))
		}
	}
}
