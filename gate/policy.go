package gate

import (
	"fmt"
	"slices"

	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
	"github.com/gradegate/gradegate/manifest/input"
)

// policyInput is run --base-manifest: the base branch's manifest, what the
// run's manifest weakens against it, and the notes on what could not be
// compared.
type policyInput struct {
	file       string
	baseReason string
	weak       []manifest.Weakening
	notes      []string
}

// checkPolicy loads the base manifest before any grading (a wrong file
// costs no run) and compares it, and its dataset where it can be read,
// with the run's.
func checkPolicy(s *Suite, file string, limits input.Limits) (*policyInput, error) {
	base, err := LoadSuite(file, limits)
	if err != nil {
		return nil, fmt.Errorf("--base-manifest: %w", err)
	}
	p := &policyInput{file: file, baseReason: base.Manifest.Gate.WeakeningReason,
		weak: manifest.Weakenings(base.Manifest, s.Manifest)}
	baseSet, err := dataset.Load(base.FS, base.Manifest)
	if err != nil {
		p.notes = append(p.notes, fmt.Sprintf("the base dataset could not be read (%v): labels and cases were not compared", err))
		return p, nil
	}
	headSet, err := dataset.Load(s.FS, s.Manifest)
	if err != nil {
		// The run reports what is wrong with its own dataset.
		p.notes = append(p.notes, "this run's dataset could not be read whole: labels and cases were not compared")
		return p, nil
	}
	p.weak = append(p.weak, caseWeakenings(base.Manifest, baseSet, headSet)...)
	return p, nil
}

// caseWeakenings compares the base dataset's cases with the run's, by
// case id: a human label flipped from 0 to 1 (a wrong answer now counted
// right), a case that is gone, or renamed (a new id with the same stored
// sample). Each names the case, its slice and its label.
func caseWeakenings(bm *manifest.Manifest, base, head *dataset.Set) []manifest.Weakening {
	heads := make(map[string]*dataset.Case, len(head.Cases))
	for i := range head.Cases {
		heads[head.Cases[i].ID] = &head.Cases[i]
	}
	bases := make(map[string]bool, len(base.Cases))
	for _, c := range base.Cases {
		bases[c.ID] = true
	}
	// New cases by sample digest, for renames.
	newBySample := map[string][]string{}
	for _, c := range head.Cases {
		if !bases[c.ID] && c.SampleSHA256 != "" {
			newBySample[c.SampleSHA256] = append(newBySample[c.SampleSHA256], c.ID)
		}
	}
	label := bm.Dataset.Fields.WithDefaults().Label
	mandatorySlice := func(c dataset.Case) string {
		for _, s := range c.Slices {
			if r, ok := bm.Gate.Slice(s); ok && r.Mandatory {
				return s
			}
		}
		if len(c.Slices) > 0 {
			return c.Slices[0]
		}
		return ""
	}
	var out []manifest.Weakening
	for _, c := range base.Cases {
		slice := mandatorySlice(c)
		where := ""
		if slice != "" {
			where = fmt.Sprintf(" of slice %q", slice)
		}
		h, ok := heads[c.ID]
		if !ok {
			if ids := newBySample[c.SampleSHA256]; c.SampleSHA256 != "" && len(ids) > 0 {
				out = append(out, manifest.Weakening{Key: "dataset", Base: c.ID, Head: ids[0], Slice: slice,
					Message: fmt.Sprintf("case %s%s was renamed to %s (the same stored sample): its history against the base is lost", c.ID, where, ids[0])})
				newBySample[c.SampleSHA256] = slices.Delete(ids, 0, 1)
				continue
			}
			out = append(out, manifest.Weakening{Key: "dataset", Base: c.ID, Slice: slice,
				Message: fmt.Sprintf("case %s%s was removed from the dataset", c.ID, where)})
			continue
		}
		if c.Label != nil && *c.Label == 0 && h.Label != nil && *h.Label == 1 {
			out = append(out, manifest.Weakening{Key: "dataset." + label, Base: "0", Head: "1", Slice: slice,
				Message: fmt.Sprintf("case %s%s: %s changed from 0 to 1 (a wrong answer is now labeled right)", c.ID, where, label)})
		}
	}
	return out
}
