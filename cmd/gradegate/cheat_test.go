package main

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gradegate/gradegate/gate/results"
)

// cheat is an example grader under testdata/examples/cheats that a pull
// request wanting a green check could write: each must hold the whole gate.
type cheat struct {
	dir string
	// wantReason is the reason code the hold must carry (any one of them).
	wantReason []string
	// check looks further at the results.
	check func(t *testing.T, res *results.Results)
}

func cheats() []cheat {
	return []cheat{
		{
			// Dataset items carry case_id and the label, canary items do not;
			// the lines whose mutants survive carry a bare no-mutate pragma.
			dir:        "label-reader",
			wantReason: []string{results.ReasonMutantsSurvived},
			check: func(t *testing.T, res *results.Results) {
				unexcused := 0
				for _, e := range res.MutationExcluded {
					if e.Unexcused() {
						unexcused++
					}
				}
				if unexcused == 0 || !slices.ContainsFunc(res.Warnings, func(w results.Warning) bool { return w.Code == "pragma_without_reason" }) {
					t.Errorf("bare pragmas: %d unexcused exclusions, warnings %+v; want them listed and warned", unexcused, res.Warnings)
				}
			},
		},
		{
			// The same cheat with a reason on every pragma: nothing on the
			// mutation side can tell, only a grader that never sees the label
			// (false_pass) or a canary shaped like a case (canary_failed).
			dir:        "label-reader-excused",
			wantReason: []string{results.ReasonFalsePass, results.ReasonCanaryFailed},
		},
		{
			// Honest on a batch of one (how canaries arrive), 1.0 otherwise.
			dir:        "batch-of-one",
			wantReason: []string{results.ReasonCanaryFailed},
		},
		{
			// Partial credit for a refusal from hash(): every verdict of one
			// run is right, but the scores move with PYTHONHASHSEED.
			dir:        "hash-credit",
			wantReason: []string{results.ReasonNondeterministicGrader},
			check: func(t *testing.T, res *results.Results) {
				d := res.Determinism
				if d == nil || len(d.Differed) == 0 || d.Differed[0].Canary || d.HashSeeds[0] == d.HashSeeds[1] {
					t.Fatalf("determinism block %+v; want the refused cases listed", d)
				}
				refused := []string{"ship-cancel-003", "conflict-injection-002", "happy-multi-002", "currency-zero-decimal-002", "tone-chatty-001"}
				for _, x := range d.Differed {
					if !slices.Contains(refused, x.ID) {
						t.Errorf("case %s differed, but only the refused cases may", x.ID)
					}
				}
			},
		},
	}
}

// TestCheatExamples runs every cheat through the whole gate (`gradegate run`,
// mutation testing and the determinism check included) and wants a hold
// with its reason.
func TestCheatExamples(t *testing.T) {
	t.Parallel()
	for _, c := range cheats() {
		t.Run(c.dir, func(t *testing.T) {
			t.Parallel()
			manifestPath := filepath.Join("..", "..", "testdata", "examples", "cheats", c.dir, "gradegate.yaml")
			resultsPath := filepath.Join(t.TempDir(), "results.json")
			env := map[string]string{"NO_COLOR": "1", "GRADEGATE_PYTHON": "/usr/bin/python3"}
			var stdout, stderr bytes.Buffer
			o := execute(context.Background(), []string{"run", manifestPath, "--results", resultsPath, "--format", "markdown", "--workers", "2"},
				func(k string) string { return env[k] }, &stdout, &stderr)
			if o.code != exitPass && o.code != exitHold {
				t.Fatalf("exit %d\nstderr:\n%s", o.code, stderr.String())
			}
			res := readResultsFile(t, resultsPath)
			held := o.code == exitHold && slices.ContainsFunc(res.Reasons, func(r results.Reason) bool { return slices.Contains(c.wantReason, r.Code) })
			if !held {
				t.Fatalf("exit %d, verdict %s, reasons %+v; want a hold with %s\nstdout:\n%s", o.code, res.Verdict, res.Reasons, c.wantReason, stdout.String())
			}
			if c.check != nil {
				c.check(t, res)
			}
		})
	}
}
