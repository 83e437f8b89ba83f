package gate

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gradegate/gradegate/gate/digest"
	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// Merge combines the results of the shards of one run (`gradegate merge`) into
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
func Merge(m *manifest.Manifest, parts []*results.Results) (*results.Results, error) {
	sp := make([]ShardPart, len(parts))
	for i, p := range parts {
		sp[i].Results = p
		if p != nil {
			sp[i].Cases = results.RowsOf(p.Cases)
		}
	}
	return MergeStream(m, sp, MergeOptions{})
}

// mergeCanaries keeps each canary once, in the first part's order; a canary
// that failed in any shard failed (a grader that answers differently from
// one machine to the next is itself what canaries exist to catch). A
// derived canary of a shard's own cases is kept from that shard.
func mergeCanaries(parts []*results.Results) []results.CanaryResult {
	out := slices.Clone(parts[0].Canaries)
	for _, p := range parts[1:] {
		for _, c := range p.Canaries {
			i := slices.IndexFunc(out, func(o results.CanaryResult) bool { return o.Name == c.Name })
			if i < 0 && c.DerivedFrom != "" {
				out = append(out, c)
				continue
			}
			if i >= 0 && out[i].Status == results.StatusPass && c.Status != results.StatusPass {
				c.Message = fmt.Sprintf("in shard %s: %s", p.Shard, c.Message)
				out[i] = c
			}
		}
	}
	return out
}

// sameCanaries compares the written canaries of two parts: the derived
// ones depend on the cases each shard graded.
func sameCanaries(a, b []results.CanaryResult) bool {
	derived := func(c results.CanaryResult) bool { return c.DerivedFrom != "" }
	a = slices.DeleteFunc(slices.Clone(a), derived)
	b = slices.DeleteFunc(slices.Clone(b), derived)
	return slices.EqualFunc(a, b, func(x, y results.CanaryResult) bool { return x.Name == y.Name })
}

func canaryNames(cs []results.CanaryResult) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

func digestText(d digest.Digests) string {
	s := fmt.Sprintf("dataset=%s samples=%s grader=%s rubric=%s", d.Dataset, d.Samples, d.Grader, d.Rubric)
	for _, name := range slices.Sorted(maps.Keys(d.Graders)) {
		s += fmt.Sprintf(" graders.%s=%s", name, d.Graders[name])
	}
	if d.Preprocess != "" {
		s += " preprocess=" + d.Preprocess
	}
	return s
}

// weakest is the sandbox every shard had: a layer counts only when it was in
// force on every machine.
func weakest(a, b grading.Sandbox) grading.Sandbox {
	out := grading.Sandbox{
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

// mergedPolicy is what the shards weakened against their base, to apply
// again to the merged verdict.
type mergedPolicy struct {
	base, baseReason string
	weak             []manifest.Weakening
	notes            []string
}

// mergePolicy carries the shards' policy blocks (run --base-manifest,
// --baseline) into the merge: every weakening any shard found, each once.
// The shards must have been run alike: all with a policy block or none,
// against the same base, under the manifest's own gate.weakening_reason,
// which acknowledged them in every shard or in none. A shard that differs
// is an input error, not a pass: a merge that dropped the policy would
// turn the shards' holds into a green check.
func mergePolicy(parts []*results.Results, m *manifest.Manifest) (*mergedPolicy, error) {
	first := parts[0].Policy
	for _, p := range parts[1:] {
		if (p.Policy == nil) != (first == nil) {
			return nil, fmt.Errorf("%w: merge: shard %s has a policy block and shard %s has none: run every shard with the same --base-manifest and --baseline",
				manifest.ErrInput, shardWith(parts, true), shardWith(parts, false))
		}
	}
	if first == nil {
		return nil, nil
	}
	out := &mergedPolicy{base: first.Base}
	seen := map[manifest.Weakening]bool{}
	notes := map[string]bool{}
	for _, r := range parts {
		p := r.Policy
		if p.Base != first.Base || p.Reason != first.Reason || p.Acknowledged != first.Acknowledged {
			return nil, fmt.Errorf("%w: merge: shard %s compared with base %q (reason %q, acknowledged %t), shard %s with %q (reason %q, acknowledged %t): the shards were not run alike",
				manifest.ErrInput, parts[0].Shard, first.Base, first.Reason, first.Acknowledged, r.Shard, p.Base, p.Reason, p.Acknowledged)
		}
		for _, w := range p.Weakenings {
			if !seen[w] {
				seen[w] = true
				out.weak = append(out.weak, w)
			}
		}
		for _, n := range p.Notes {
			if !notes[n] {
				notes[n] = true
				out.notes = append(out.notes, n)
			}
		}
	}
	if strings.TrimSpace(first.Reason) != strings.TrimSpace(m.Gate.WeakeningReason) {
		return nil, fmt.Errorf("%w: merge: the shards were run with gate.weakening_reason %q, but the manifest has %q",
			manifest.ErrInput, first.Reason, m.Gate.WeakeningReason)
	}
	// A reason the shards did not take as acknowledging was the base's own.
	if !first.Acknowledged {
		out.baseReason = first.Reason
	}
	return out, nil
}

// shardWith names the first part that has (or lacks) a policy block.
func shardWith(parts []*results.Results, policy bool) string {
	for _, p := range parts {
		if (p.Policy != nil) == policy {
			return p.Shard.String()
		}
	}
	return "?"
}
