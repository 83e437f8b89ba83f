package main

import (
	"context"
	"io"

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
	lint.WriteImageReport(ctx, w, python)
}
