package gate

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gradegate/gradegate/manifest"
)

// Merge combines the results of the shards of one run (SPEC section 11) into
// the results of the whole run, and decides its verdict again.
//
// Results files hold outcomes, not rules, so Merge takes the manifest too
// (`gradegate merge --manifest M SHARD.json...`): the gate rules, the pins and
// intended_cases come from it, and nothing a shard decided is trusted.
//
// The parts must be exactly shards 1..N of one N, from a manifest of the same
// name, with the same digests and versions; every case must come from the one
// shard ShardOf assigns it to, and no case may appear in two shards. A
// missing shard is an error, not a hold: merge has no dataset to say which
// cases the missing shard held, so it could not even count them. Every such
// problem is reported at once; the error matches manifest.ErrInput (exit 2).
//
// The merged verdict applies every rule to the union: digests against the
// manifest's pins, a canary failed when it failed in any shard, the findings
// (deduplicated; every shard sees the whole dataset), and the case rules over
// the union of cases in dataset order. The merged shard is 1/1.
func Merge(m *manifest.Manifest, parts []*Results) (*Results, error) {
	if m == nil {
		return nil, errors.New("merge: no manifest")
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: merge: no results to merge", manifest.ErrInput)
	}
	for i, p := range parts {
		if p == nil {
			return nil, fmt.Errorf("%w: merge: results #%d is empty", manifest.ErrInput, i+1)
		}
	}
	if err := checkParts(m, parts); err != nil {
		return nil, err
	}
	parts = slices.Clone(parts) // sorted here; the caller's order stays
	slices.SortFunc(parts, func(a, b *Results) int { return cmp.Compare(a.Shard.Index, b.Shard.Index) })
	first := parts[0]

	var cases []CaseResult
	var findings []manifest.Finding
	seenFinding := map[manifest.Finding]bool{}
	var mutation *float64
	sandbox := first.Sandbox
	intendedSum := 0
	for _, p := range parts {
		cases = append(cases, p.Cases...)
		for _, f := range p.Findings {
			if !seenFinding[f] {
				seenFinding[f] = true
				findings = append(findings, f)
			}
		}
		if p.MutationScore != nil && (mutation == nil || *p.MutationScore < *mutation) {
			mutation = p.MutationScore
		}
		sandbox = weakest(sandbox, p.Sandbox)
		intendedSum += p.Counts.Intended
	}
	// Shards keep dataset order within themselves; the line restores it
	// across them.
	slices.SortStableFunc(cases, func(a, b CaseResult) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), strings.Compare(a.CaseID, b.CaseID))
	})

	intended := max(m.Dataset.IntendedCases, len(cases))
	if intendedSum != intended {
		return nil, fmt.Errorf("%w: merge: the shards count %d intended cases but the manifest and the shards' rows make %d; were they run with another dataset.intended_cases?",
			manifest.ErrInput, intendedSum, intended)
	}

	// A model grader's lint and usage are weighed by AddJudge, as in a run.
	findings, judgeLint := splitJudgeLint(findings)
	ev := Evidence{
		Cases:            cases,
		NotInDataset:     intended - len(cases),
		Canaries:         mergeCanaries(parts),
		Findings:         findings,
		DigestMismatches: compareDigests(m, first.Digests, true),
		MutationScore:    mutation,
		Determinism:      mergeDeterminism(parts),
		Shard:            Shard{Index: 1, Count: 1},
		Unsandboxed:      sandbox.Unsandboxed,
	}
	if m.Dataset.IntendedCases > 0 {
		ev.ExtraRows = max(len(cases)-m.Dataset.IntendedCases, 0)
	}
	res := assemble(m, first.Digests, sandbox, first.Versions.Gradegate, ev)
	res.AddJudge(mergeJudge(parts), judgeLint)
	res.Versions = first.Versions
	res.Determinism = ev.Determinism
	res.MutationExcluded = first.MutationExcluded // only shard 1 mutation-tests
	res.Manifest = first.Manifest
	if m.File != "" {
		res.Manifest.Path = m.File
	}
	return res, nil
}

// checkParts checks that the parts are the shards of one run, and returns
// every problem it finds.
func checkParts(m *manifest.Manifest, parts []*Results) error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: merge: "+format, append([]any{manifest.ErrInput}, args...)...))
	}
	first := parts[0]
	count := first.Shard.Count
	seen := map[int]bool{}
	owner := map[string]int{} // case id -> shard index
	for i, p := range parts {
		name := fmt.Sprintf("results #%d (shard %s)", i+1, p.Shard)
		if p.Schema != ResultsSchema {
			bad("%s: schema %q, want %q", name, p.Schema, ResultsSchema)
		}
		if p.Manifest.Name != m.Name {
			bad("%s: manifest %q, want %q", name, p.Manifest.Name, m.Name)
		}
		if p.Shard.Count != count {
			bad("%s: shard count %d, but results #1 has %d", name, p.Shard.Count, count)
		}
		if p.Shard.Index < 1 || p.Shard.Index > p.Shard.Count {
			bad("%s: shard index out of range", name)
			continue
		}
		if seen[p.Shard.Index] {
			bad("%s: shard %d appears twice", name, p.Shard.Index)
		}
		seen[p.Shard.Index] = true
		if p.Digests != first.Digests {
			bad("%s: digests %s differ from results #1's %s: the shards graded different files",
				name, digestText(p.Digests), digestText(first.Digests))
		}
		if p.Versions != first.Versions {
			bad("%s: versions %+v differ from results #1's %+v", name, p.Versions, first.Versions)
		}
		if !sameCanaries(p.Canaries, first.Canaries) {
			bad("%s: its canaries (%s) differ from results #1's (%s)", name, canaryNames(p.Canaries), canaryNames(first.Canaries))
		}
		// A case id repeated inside one shard is a duplicate row of the
		// dataset (a dataset_invalid finding), not a merge problem.
		here := map[string]bool{}
		for _, c := range p.Cases {
			if want := ShardOf(c.CaseID, p.Shard.Count); want != p.Shard.Index {
				bad("%s: case %q belongs to shard %d/%d", name, c.CaseID, want, p.Shard.Count)
			}
			if here[c.CaseID] {
				continue
			}
			here[c.CaseID] = true
			if other, ok := owner[c.CaseID]; ok {
				bad("case %q was graded by shard %d and by shard %d", c.CaseID, other, p.Shard.Index)
				continue
			}
			owner[c.CaseID] = p.Shard.Index
		}
	}
	if count >= 1 {
		var missing []string
		for k := 1; k <= count; k++ {
			if !seen[k] {
				missing = append(missing, fmt.Sprintf("%d/%d", k, count))
			}
		}
		if len(missing) > 0 {
			bad("missing results of shard %s: every shard must be merged, or its cases would silently leave the verdict",
				strings.Join(missing, ", "))
		}
	}
	return errors.Join(errs...)
}

// mergeCanaries keeps each canary once, in the first part's order; a canary
// that failed in any shard failed (a grader that answers differently from
// one machine to the next is itself what canaries exist to catch).
func mergeCanaries(parts []*Results) []CanaryResult {
	out := slices.Clone(parts[0].Canaries)
	for _, p := range parts[1:] {
		for _, c := range p.Canaries {
			i := slices.IndexFunc(out, func(o CanaryResult) bool { return o.Name == c.Name })
			if i >= 0 && out[i].Status == StatusPass && c.Status != StatusPass {
				c.Message = fmt.Sprintf("in shard %s: %s", p.Shard, c.Message)
				out[i] = c
			}
		}
	}
	return out
}

func sameCanaries(a, b []CanaryResult) bool {
	return slices.EqualFunc(a, b, func(x, y CanaryResult) bool { return x.Name == y.Name })
}

func canaryNames(cs []CanaryResult) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

func digestText(d Digests) string {
	return fmt.Sprintf("dataset=%s samples=%s grader=%s rubric=%s", d.Dataset, d.Samples, d.Grader, d.Rubric)
}

// weakest is the sandbox every shard had: a layer counts only when it was in
// force on every machine.
func weakest(a, b Sandbox) Sandbox {
	out := Sandbox{
		UID:         a.UID,
		Seccomp:     a.Seccomp && b.Seccomp,
		LandlockABI: min(a.LandlockABI, b.LandlockABI),
		Rlimits:     a.Rlimits && b.Rlimits,
		Unsandboxed: a.Unsandboxed || b.Unsandboxed,
	}
	if a.UID != b.UID {
		out.UID = -1 // no single uid; -1 is "unchanged", the weaker claim
	}
	return out
}
