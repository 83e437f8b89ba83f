package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/gradegate/gradegate/gate/lint"
)

// doctorImage checks that python can import the packages of every image
// tag gradegate knows and says how to install what is missing: on stdout
// after the human and markdown reports, on stderr beside the JSON one.
func (a *app) doctorImage(ctx context.Context, python string, f format) {
	if python == "" {
		return
	}
	var w io.Writer = a.stdout
	if f == formatJSON {
		w = a.stderr
	}
	for _, tag := range lint.ImageTags() {
		missing, err := lint.MissingImagePackages(ctx, python, tag)
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
				tag, python, strings.Join(names, ", "), lint.InstallHint(python, missing))
		}
	}
}
