package gate

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/gradegate/gradegate/gate/grading"
	"slices"
	"strings"

	"github.com/gradegate/gradegate/gate/digest"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/gate/verdict"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// ShardPart is one shard's results: the document (its Cases unused) and
// its case rows as a stream, in the shard's dataset order.
type ShardPart struct {
	Results *results.Results
	Cases   results.CaseIter
}

// MergeOptions change how MergeStream keeps the merged rows.
type MergeOptions struct {
	// SpoolDir, when set, spools the merged rows to a file there and keeps
	// in memory only the rows the reports show (see Options.SpoolDir).
	SpoolDir string
}

// MergeStream is Merge over shards whose rows are read as streams: the
// rows of every shard are merged in dataset order (by line) one at a time
// and folded into the verdict, so memory holds a case id per case (to find
// a case in two shards), not the rows.
func MergeStream(m *manifest.Manifest, parts []ShardPart, opts MergeOptions) (*results.Results, error) {
	if m == nil {
		return nil, errors.New("merge: no manifest")
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: merge: no results to merge", manifest.ErrInput)
	}
	for i, p := range parts {
		if p.Results == nil {
			return nil, fmt.Errorf("%w: merge: results #%d is empty", manifest.ErrInput, i+1)
		}
	}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: merge: "+format, append([]any{manifest.ErrInput}, args...)...))
	}
	heads := make([]*results.Results, len(parts))
	for i, p := range parts {
		heads[i] = p.Results
	}
	valid := checkHeaders(heads, m, bad)

	order := make([]int, len(parts)) // parts by shard index; the caller's order stays
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(heads[a].Shard.Index, heads[b].Shard.Index) })
	first := heads[order[0]]

	g := &graded{tally: verdict.NewTally(m.Gate), cases: []results.CaseResult{}}
	var keep *results.Keeper
	if opts.SpoolDir != "" {
		var err error
		if g.spool, err = results.NewSpool(opts.SpoolDir); err != nil {
			return nil, err
		}
		keep = results.NewKeeper(m.Gate)
	}
	fail := func(err error) (*results.Results, error) {
		if g.spool != nil {
			g.spool.Close()
		}
		return nil, err
	}

	sink := func(c results.CaseResult) error {
		if len(errs) > 0 {
			return nil // only the problems are wanted now
		}
		g.tally.Add(c)
		if g.spool == nil {
			g.cases = append(g.cases, c)
			return nil
		}
		keep.Add(c)
		return g.spool.Add(c)
	}
	rows, err := mergeRows(parts, heads, order, valid, bad, sink)
	if err != nil {
		return fail(err)
	}
	if len(errs) > 0 {
		return fail(errors.Join(errs...))
	}

	findings, mutation, sandbox, intendedSum := foldHeaders(heads, order)
	intended := max(m.Dataset.IntendedCases, rows)
	if intendedSum != intended {
		return fail(fmt.Errorf("%w: merge: the shards count %d intended cases but the manifest and the shards' rows make %d; were they run with another dataset.intended_cases?",
			manifest.ErrInput, intendedSum, intended))
	}
	sorted := make([]*results.Results, len(order))
	for k, i := range order {
		sorted[k] = heads[i]
	}
	// A model grader's lint and usage are weighed by the judge rule, as in a run.
	findings, judgeLint := splitJudgeLint(findings)
	ev := verdict.Evidence{
		Tally:            g.tally,
		NotInDataset:     intended - rows,
		Canaries:         mergeCanaries(sorted),
		Findings:         findings,
		DigestMismatches: digest.CompareDigests(m, first.Digests, true),
		MutationScore:    mutation,
		Survivors:        first.MutationSurvivors, // only shard 1 mutation-tests
		Determinism:      mergeDeterminism(sorted, m.Gate.Confidence.Level),
		Shard:            shard.Shard{Index: 1, Count: 1},
		Unsandboxed:      sandbox.Unsandboxed,
		Labels:           labelSummaryOf(first),
		Judge:            mergeJudge(sorted),
		JudgeLint:        judgeLint,
		Metrics:          mergeMetrics(sorted),
	}
	if m.Dataset.IntendedCases > 0 {
		ev.ExtraRows = max(rows-m.Dataset.IntendedCases, 0)
	}
	policy, err := mergePolicy(sorted, m)
	if err != nil {
		return fail(err)
	}
	res := assemble(m, first.Digests, sandbox, first.Versions.Gradegate, ev)
	if policy != nil {
		verdict.ApplyPolicy(res, policy.base, policy.weak, m.Gate.WeakeningReason, policy.baseReason, policy.notes...)
	}
	if run := runOf(first); run != "" {
		res.Integrity = &results.Integrity{Run: run}
	}
	res.Versions = first.Versions
	res.MutationExcluded = first.MutationExcluded // only shard 1 mutation-tests
	res.Manifest = first.Manifest
	if m.File != "" {
		res.Manifest.Path = m.File
	}
	res.Cases = g.cases
	if g.spool != nil {
		if err := g.spool.Flush(); err != nil {
			return fail(err)
		}
		res.Cases = keep.Rows()
		res.CasesNotKept = keep.Dropped
		res.Rows = g.spool.Rows()
	}
	return res, nil
}

// mergeRows is the k-way merge of the shards' rows by (line, case id), each
// shard being in dataset order already: every row goes to sink in dataset
// order, and a row in the wrong shard or in two shards is reported with
// bad. It returns how many rows there were.
func mergeRows(parts []ShardPart, heads []*results.Results, order []int, valid []bool, bad func(string, ...any), sink func(results.CaseResult) error) (int, error) {
	type head struct {
		row results.CaseResult
		ok  bool
	}
	cur := make([]head, len(parts))
	advance := func(i int) error {
		row, ok, err := parts[i].Cases.Next()
		if err != nil {
			return fmt.Errorf("merge: results #%d (shard %s): %w", i+1, heads[i].Shard, err)
		}
		cur[i] = head{row, ok}
		return nil
	}
	for _, i := range order {
		if err := advance(i); err != nil {
			return 0, err
		}
	}
	owner := map[string]int{} // case id -> position in parts of the shard that has it
	rows := 0
	for {
		pick := -1
		for _, i := range order {
			if !cur[i].ok {
				continue
			}
			if pick < 0 || cmp.Or(cmp.Compare(cur[i].row.Line, cur[pick].row.Line), strings.Compare(cur[i].row.CaseID, cur[pick].row.CaseID)) < 0 {
				pick = i
			}
		}
		if pick < 0 {
			return rows, nil
		}
		c, p := cur[pick].row, heads[pick]
		if err := advance(pick); err != nil {
			return 0, err
		}
		if valid[pick] {
			name := fmt.Sprintf("results #%d (shard %s)", pick+1, p.Shard)
			if want := shard.ShardOf(c.CaseID, p.Shard.Count); want != p.Shard.Index {
				bad("%s: case %q belongs to shard %d/%d", name, c.CaseID, want, p.Shard.Count)
			}
			// A case id repeated inside one shard is a duplicate row of the
			// dataset (a dataset_invalid finding), not a merge problem.
			if other, ok := owner[c.CaseID]; !ok {
				owner[c.CaseID] = pick
			} else if other != pick {
				bad("case %q was graded by shard %d and by shard %d", c.CaseID, heads[other].Shard.Index, p.Shard.Index)
			}
		}
		rows++
		if err := sink(c); err != nil {
			return 0, err
		}
	}
}

// foldHeaders combines what the shards' headers say of the whole run: the
// findings once each (every shard sees the whole dataset), the lowest
// mutation score, the weakest sandbox, and the intended cases summed.
func foldHeaders(heads []*results.Results, order []int) ([]manifest.Finding, *float64, grading.Sandbox, int) {
	intendedSum := 0
	var findings []manifest.Finding
	seenFinding := map[manifest.Finding]bool{}
	var mutation *float64
	sandbox := heads[order[0]].Sandbox
	for _, i := range order {
		p := heads[i]
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
		// The rows of a warn-only label status count toward nothing,
		// and are accounted for in the labels block.
		intendedSum += p.Counts.Intended + p.Labels.WarnOnlyRows()
	}
	return findings, mutation, sandbox, intendedSum
}

// checkHeaders checks that the documents are the shards of one run, and
// reports which ones have a usable shard index.
func checkHeaders(parts []*results.Results, m *manifest.Manifest, bad func(string, ...any)) []bool {
	first := parts[0]
	count := first.Shard.Count
	seen := map[int]bool{}
	valid := make([]bool, len(parts))
	for i, p := range parts {
		name := fmt.Sprintf("results #%d (shard %s)", i+1, p.Shard)
		if p.Schema != results.ResultsSchema {
			bad("%s: schema %q, want %q", name, p.Schema, results.ResultsSchema)
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
		valid[i] = true
		if seen[p.Shard.Index] {
			bad("%s: shard %d appears twice", name, p.Shard.Index)
		}
		seen[p.Shard.Index] = true
		if !p.Digests.Equal(first.Digests) {
			bad("%s: digests %s differ from results #1's %s: the shards graded different files",
				name, digestText(p.Digests), digestText(first.Digests))
		}
		if run, firstRun := runOf(p), runOf(first); run != firstRun {
			bad("%s: written by run %q, but results #1 by run %q: shards of different runs are not merged", name, run, firstRun)
		}
		if !p.Versions.Equal(first.Versions) {
			bad("%s: versions %+v differ from results #1's %+v", name, p.Versions, first.Versions)
		}
		if !sameCanaries(p.Canaries, first.Canaries) {
			bad("%s: its canaries (%s) differ from results #1's (%s)", name, canaryNames(p.Canaries), canaryNames(first.Canaries))
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
	return valid
}

// labelSummaryOf rebuilds the dataset's label summary from a results
// document, for merge: the shards read the same dataset, so any shard's
// block is the whole dataset's.
func labelSummaryOf(r *results.Results) *dataset.LabelSummary {
	if r.Labels == nil {
		return nil
	}
	sum := &dataset.LabelSummary{Agreement: map[string]*dataset.Agreement{},
		Brittle: r.Labels.Brittle, Stale: r.Labels.Stale, Excluded: r.Labels.StaleExcluded}
	if a := r.Labels.Agreement; a != nil {
		sum.Overall = dataset.Agreement{Rows: a.Rows, Table: a.Table}
	}
	for _, s := range r.Slices {
		if s.Agreement == nil {
			continue
		}
		key := s.Name
		if key == verdict.NoSlice {
			key = ""
		}
		sum.Agreement[key] = &dataset.Agreement{Rows: s.Agreement.Rows, Table: s.Agreement.Table}
	}
	return sum
}

// runOf is the CI run that wrote a results document, "" when none is named.
func runOf(r *results.Results) string {
	if r.Integrity == nil {
		return ""
	}
	return r.Integrity.Run
}
