package gate

import (
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

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
	cmp, err := readBaseCases(base.FS, base.Manifest)
	if err != nil {
		p.notes = append(p.notes, fmt.Sprintf("the base dataset could not be read (%v): labels and cases were not compared", err))
		return p, nil
	}
	if err := cmp.readHead(s.FS, s.Manifest); err != nil {
		// The run reports what is wrong with its own dataset.
		p.notes = append(p.notes, "this run's dataset could not be read whole: labels and cases were not compared")
		return p, nil
	}
	p.weak = append(p.weak, cmp.weakenings(base.Manifest)...)
	return p, nil
}

// baseCase is what the comparison keeps of a base dataset row: a few
// bytes beyond its id, so comparing two datasets of a million rows costs
// tens of megabytes, not both datasets in memory.
type baseCase struct {
	id     string
	slice  string // its first mandatory slice, else its first slice
	sample uint64 // the first 8 bytes of the sample's digest; 0: no sample
	label  int8   // -1: none
	head   int8   // the same id's label in the run's dataset; -1 none, -2 not there
}

// caseComparison compares the base dataset's cases with the run's, by id.
type caseComparison struct {
	base  []baseCase
	byID  []int32             // base rows sorted by id
	added map[uint64][]string // the run's new ids by sample digest, for renames
}

// compareManifest is m with the near-duplicate screen off: comparing by id
// needs none of it, and the run screens its own dataset.
func compareManifest(m *manifest.Manifest) *manifest.Manifest {
	c := *m
	off := false
	c.Dataset.NearDuplicates.Enabled = &off
	return &c
}

func sampleKey(sha string) uint64 {
	if len(sha) < 16 {
		return 0
	}
	k, err := strconv.ParseUint(sha[:16], 16, 64)
	if err != nil || k == 0 {
		return 1 // never 0, which means no sample
	}
	return k
}

func labelOf(l *int) int8 {
	if l == nil {
		return -1
	}
	return int8(*l)
}

// readBaseCases streams the base dataset.
func readBaseCases(fsys fs.FS, bm *manifest.Manifest) (*caseComparison, error) {
	r := dataset.Open(fsys, compareManifest(bm))
	cmp := &caseComparison{added: map[uint64][]string{}}
	names := map[string]string{} // slice names, kept once
	for {
		c, ok := r.Next()
		if !ok {
			break
		}
		slice := ""
		for _, s := range c.Slices {
			if rule, ok := bm.Gate.Slice(s); ok && rule.Mandatory {
				slice = s
				break
			}
		}
		if slice == "" && len(c.Slices) > 0 {
			slice = c.Slices[0]
		}
		if n, ok := names[slice]; ok {
			slice = n
		} else {
			names[slice] = slice
		}
		cmp.base = append(cmp.base, baseCase{id: c.ID, slice: slice, sample: sampleKey(c.SampleSHA256), label: labelOf(c.Label), head: -2})
	}
	if _, err := r.Close(); err != nil {
		return nil, err
	}
	cmp.byID = make([]int32, len(cmp.base))
	for i := range cmp.byID {
		cmp.byID[i] = int32(i)
	}
	slices.SortStableFunc(cmp.byID, func(a, b int32) int { return strings.Compare(cmp.base[a].id, cmp.base[b].id) })
	return cmp, nil
}

// readHead streams the run's dataset against the base rows.
func (cmp *caseComparison) readHead(fsys fs.FS, m *manifest.Manifest) error {
	r := dataset.Open(fsys, compareManifest(m))
	for {
		c, ok := r.Next()
		if !ok {
			break
		}
		k, found := slices.BinarySearchFunc(cmp.byID, c.ID, func(i int32, id string) int { return strings.Compare(cmp.base[i].id, id) })
		if !found {
			if key := sampleKey(c.SampleSHA256); key != 0 {
				cmp.added[key] = append(cmp.added[key], c.ID)
			}
			continue
		}
		for ; k < len(cmp.byID) && cmp.base[cmp.byID[k]].id == c.ID; k++ {
			cmp.base[cmp.byID[k]].head = labelOf(c.Label) // the last row of an id, as a lookup by id finds
		}
	}
	_, err := r.Close()
	return err
}

// weakenings names, in base order, a human label flipped from 0 to 1 (a
// wrong answer now counted right), a case that is gone, or renamed (a new
// id with the same stored sample). Each names the case, its slice and its
// label.
func (cmp *caseComparison) weakenings(bm *manifest.Manifest) []manifest.Weakening {
	label := bm.Dataset.Fields.WithDefaults().Label
	var out []manifest.Weakening
	for _, c := range cmp.base {
		where := ""
		if c.slice != "" {
			where = fmt.Sprintf(" of slice %q", c.slice)
		}
		if c.head == -2 {
			if ids := cmp.added[c.sample]; c.sample != 0 && len(ids) > 0 {
				out = append(out, manifest.Weakening{Key: "dataset", Base: c.id, Head: ids[0], Slice: c.slice,
					Message: fmt.Sprintf("case %s%s was renamed to %s (the same stored sample): its history against the base is lost", c.id, where, ids[0])})
				cmp.added[c.sample] = ids[1:]
				continue
			}
			out = append(out, manifest.Weakening{Key: "dataset", Base: c.id, Slice: c.slice,
				Message: fmt.Sprintf("case %s%s was removed from the dataset", c.id, where)})
			continue
		}
		if c.label == 0 && c.head == 1 {
			out = append(out, manifest.Weakening{Key: "dataset." + label, Base: "0", Head: "1", Slice: c.slice,
				Message: fmt.Sprintf("case %s%s: %s changed from 0 to 1 (a wrong answer is now labeled right)", c.id, where, label)})
		}
	}
	return out
}
