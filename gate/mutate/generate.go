package mutate

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/worker"
	"github.com/gradegate/gradegate/manifest"
)

//go:embed mutate.py
var script string

// MaxMutants is how many mutants Run tests at most. A grader with more
// mutation sites gets a deterministic sample by operator and line: the
// operators take turns, and each visits every line it can mutate, spread
// over the file, before a second site of one line, so hundreds of sites of
// one kind do not crowd the others out and two runs test the same mutants.
const MaxMutants = 60

// Generated is what Generate found in a grader's source.
type Generated struct {
	// Sites is how many mutation sites the source has, before the cap.
	Sites int
	// Mutants are the mutants to test, in source order, ids m01, m02, …;
	// Status and KilledBy are not set yet.
	Mutants []Mutant
	// Excluded lists every no-mutate pragma, in source order.
	Excluded []Exclusion
}

// Exclusion is one line a "# gradegate: no-mutate: <why>" pragma keeps from
// being mutated; the results of a gate run carry the same list.
type Exclusion = results.MutationExclusion

// Generate lists the mutants of src with the interpreter python (an absolute
// path), at most limit of them (MaxMutants when limit <= 0). It runs the
// embedded mutate.py once; the grader's source is parsed there, never
// imported or executed, so no sandbox is needed.
//
// A source that does not parse is an input error (manifest.ErrInput); the
// error is for anything else going wrong.
func Generate(ctx context.Context, python string, src []byte, sourceName string, limit int) (*Generated, error) {
	if limit <= 0 {
		limit = MaxMutants
	}
	if !filepath.IsAbs(python) {
		return nil, fmt.Errorf("mutate: python interpreter %q is not an absolute path", python)
	}
	config, err := json.Marshal(map[string]int{"limit": limit})
	if err != nil {
		return nil, fmt.Errorf("mutate: encoding the config: %w", err)
	}
	var out struct {
		Python string `json:"python"`
		Error  *struct {
			Message string `json:"message"`
			Line    int    `json:"line"`
		} `json:"error"`
		Sites   int `json:"sites"`
		Mutants []struct {
			Line     int    `json:"line"`
			Operator string `json:"operator"`
			Original string `json:"original"`
			Mutated  string `json:"mutated"`
			Source   []byte `json:"source"` // base64 in JSON
		} `json:"mutants"`
		Excluded []Exclusion `json:"excluded"`
	}
	if err := worker.RunScript(ctx, python, script, src, &out, string(config)); err != nil {
		return nil, fmt.Errorf("mutate: %w", err)
	}
	if out.Error != nil {
		return nil, &manifest.Error{File: sourceName, Line: out.Error.Line,
			Msg: "the grader cannot be mutation-tested: " + out.Error.Message}
	}
	g := &Generated{Sites: out.Sites, Mutants: make([]Mutant, len(out.Mutants)), Excluded: out.Excluded}
	if g.Excluded == nil {
		g.Excluded = []Exclusion{}
	}
	for i, m := range out.Mutants {
		g.Mutants[i] = Mutant{
			ID:       fmt.Sprintf("m%02d", i+1),
			Line:     m.Line,
			Operator: m.Operator,
			Diff:     "- " + m.Original + " / + " + m.Mutated,
			KilledBy: []string{},
			Original: m.Original,
			Mutated:  m.Mutated,
			Source:   m.Source,
		}
	}
	return g, nil
}
