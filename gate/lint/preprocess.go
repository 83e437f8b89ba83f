package lint

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/gradegate/gradegate/gate/worker"
	"github.com/gradegate/gradegate/manifest"
)

// CodePreprocessSignature: the preprocessor does not define the function
// its contract calls (transform(row) or transform_batch(rows)) taking one
// positional parameter, or does not parse (hold): every row would be an
// error.
const CodePreprocessSignature = "preprocess_signature"

//go:embed preprocess.py
var preprocessScript string

// Preprocess checks a preprocessor's source without running it: that it
// parses and defines the function its contract calls with one positional
// parameter. file names it in findings.
func Preprocess(ctx context.Context, python string, source []byte, file string, p *manifest.Preprocess) ([]manifest.Finding, error) {
	if p == nil {
		return nil, nil
	}
	fn := "transform"
	if p.Contract == manifest.PreprocessBatch {
		fn = "transform_batch"
	}
	var out struct {
		Defined     bool   `json:"defined"`
		Line        int    `json:"line"`
		Parameters  string `json:"parameters"`
		Binds       bool   `json:"binds"`
		SyntaxError string `json:"syntax_error"`
	}
	if err := worker.RunScript(ctx, python, preprocessScript, source, &out, fn); err != nil {
		return nil, fmt.Errorf("lint %s: %w", file, err)
	}
	finding := func(line int, msg string) []manifest.Finding {
		return []manifest.Finding{{Code: CodePreprocessSignature, Severity: manifest.SeverityHold, File: file, Line: line, Message: msg}}
	}
	switch {
	case out.SyntaxError != "":
		return finding(out.Line, "the preprocessor does not parse: "+out.SyntaxError), nil
	case !out.Defined:
		return finding(0, fmt.Sprintf("the preprocessor defines no %s function, which preprocess.contract %s calls", p.Function(), p.Contract)), nil
	case !out.Binds:
		return finding(out.Line, fmt.Sprintf("%s%s must be a plain function taking one positional parameter, as %s is called", fn, out.Parameters, p.Function())), nil
	}
	return nil, nil
}
