package gate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/gradegate/gradegate/gate/digest"
	"github.com/gradegate/gradegate/gate/lint"
	"github.com/gradegate/gradegate/gate/render"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/gate/stats"
	"github.com/gradegate/gradegate/gate/verdict"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// Validate checks the manifest's suite without grading (the validate
// command): the digests, the dataset contract, what a run would omit, and
// for a Python grader the lint and the image tag's packages, which run in
// processes of their own while the dataset is read. python is the
// interpreter of those checks, image the Action image (GRADEGATE_IMAGE).
func (a *Host) Validate(ctx context.Context, s *Suite, python, image string) (*render.Validation, error) {
	// The grader's Python checks (its own processes) run while the dataset
	// is read; a dataset that cannot be used is still reported first, and
	// the checks are then stopped.
	pyCtx, stopPython := context.WithCancel(ctx)
	var pyChecks sync.WaitGroup
	defer func() {
		stopPython()
		pyChecks.Wait()
	}()
	var lintFindings []manifest.Finding
	var lintErr error
	if s.Manifest.Grader.Judge == nil && !s.noPython() {
		pyChecks.Go(func() { lintFindings, lintErr = s.PythonChecks(pyCtx, a, python, image) })
	}
	// One pass over the dataset: the contract checks and what a run would
	// omit, without keeping the rows.
	src := dataset.Open(s.FS, s.Manifest)
	cov := newCoverage(s.Manifest)
	for {
		c, ok := src.Next()
		if !ok {
			break
		}
		cov.add(c)
	}
	sum, err := src.Close()
	if err := errors.Join(err, s.LaterFiles()); err != nil {
		return nil, err
	}
	mismatches, err := validateDigests(s, src)
	if err != nil {
		return nil, err
	}
	digest.Conceal(&digest.Digests{}, mismatches, s.tree.inside)
	v := &render.Validation{Schema: render.ValidationSchema, Findings: []manifest.Finding{}, Warnings: []manifest.Finding{}}
	for _, mm := range mismatches {
		v.Findings = append(v.Findings, manifest.Finding{
			Code: results.ReasonDigestMismatch, Severity: manifest.SeverityHold,
			File: s.Manifest.File, Line: s.Manifest.Line(mm.Key), Message: digestMessage(mm),
		})
	}
	pyChecks.Wait()
	if lintErr != nil {
		return nil, lintErr
	}
	if s.Manifest.Grader.Judge == nil {
		a.NoteImageTag(s)
	} else {
		lintFindings = lint.ModelGrader(s.Manifest)
	}
	covFindings := cov.findings(sum)
	if src.Unpinned != "" {
		// The dataset was not read (its bytes are not the pinned ones):
		// what it would omit is unknown, not missing.
		covFindings = nil
	}
	found := append(append(sum.Findings, sum.Labels.Findings()...), lintFindings...)
	for _, fd := range append(found, covFindings...) {
		if fd.Severity == manifest.SeverityHold {
			v.Findings = append(v.Findings, fd)
		} else {
			v.Warnings = append(v.Warnings, fd)
		}
	}
	return v, nil
}

// validateDigests compares every pinned file with its pin. The dataset
// and the samples file were hashed already, before a line of them was
// parsed: when the reader hashed each one that is compared, those digests
// are the ones compared and only the other files are read again.
func validateDigests(s *Suite, src *dataset.Reader) ([]digest.DigestMismatch, error) {
	m := s.Manifest
	data, samples := src.PinnedDigests()
	// An unpinned samples file is not compared.
	if data == "" || (m.Samples != nil && m.Samples.Path != "" && m.Samples.SHA256 != "" && samples == "") {
		_, mismatches, err := digest.CheckDigests(s.FS, m, true)
		return mismatches, err
	}
	d, _, err := digest.CheckDigests(s.FS, m, false)
	if err != nil {
		return nil, err
	}
	d.Dataset, d.Samples = data, samples
	return digest.CompareDigests(m, d, true), nil
}

// digestMessage says which file changed and both digests.
func digestMessage(mm digest.DigestMismatch) string {
	switch {
	case mm.Concealed && mm.Want == "":
		return fmt.Sprintf("%s %s is not pinned: add %s; the file is outside the repository tree, so its digest is not shown (gradegate pin writes it where the file can be read)", mm.Name, mm.File, mm.Key)
	case mm.Concealed:
		return fmt.Sprintf("%s %s is not the bytes %s pins %s; the file is outside the repository tree, so its digest is not shown (gradegate pin records it where the file can be read, after an intended change)", mm.Name, mm.File, mm.Key, mm.Want)
	case mm.Want == "":
		return fmt.Sprintf("%s %s is not pinned: add %s (gradegate pin writes %s)", mm.Name, mm.File, mm.Key, mm.Got)
	}
	return fmt.Sprintf("%s %s has %s but %s pins %s (gradegate pin records the new digest after an intended change)", mm.Name, mm.File, mm.Got, mm.Key, mm.Want)
}

// coverage is what validate can tell, without grading, about the cases a
// run would omit or the mandatory slices it could not fill: a case without
// a sample, intended cases missing from the file, a mandatory slice with
// fewer rows than min_cases (or none). Each holds when the run would hold
// for it (omitted_cases, slice_too_small). It folds the rows one at a time.
type coverage struct {
	m         *manifest.Manifest
	mandatory map[string]bool
	missing   []dataset.Case  // rows without a sample, their bytes dropped
	rows      map[string]int  // mandatory slice -> rows with a sample
	sized     map[string]int  // slice with a rule -> rows with a sample
	inData    map[string]bool // every slice some row is in, for "did you mean"
}

// codeUnknownSlice is the warning for a slice rule in gate.slices that
// names no slice of the dataset (a mandatory one holds as slice_too_small).
const codeUnknownSlice = "unknown_slice"

func newCoverage(m *manifest.Manifest) *coverage {
	c := &coverage{m: m, mandatory: map[string]bool{}, rows: map[string]int{}, sized: map[string]int{}, inData: map[string]bool{}}
	for _, r := range m.Gate.Slices {
		if r.Mandatory {
			c.mandatory[r.Name] = true
		}
	}
	return c
}

func (cv *coverage) add(c dataset.Case) {
	for _, sl := range c.Slices {
		cv.inData[sl] = true
	}
	if c.Sample == nil {
		cv.missing = append(cv.missing, dataset.Case{ID: c.ID, Slices: c.Slices, File: c.File, Line: c.Line})
		return
	}
	for _, sl := range c.Slices {
		if cv.mandatory[sl] {
			cv.rows[sl]++
		}
		if _, ok := cv.m.Gate.Slice(sl); ok {
			cv.sized[sl]++
		}
	}
}

func (cv *coverage) findings(sum *dataset.Summary) []manifest.Finding {
	m := cv.m
	var out []manifest.Finding
	notInDataset := max(sum.Intended-sum.Rows, 0)
	omitted := len(cv.missing) + notInDataset
	over := omitted > m.Gate.MaxOmitted
	for _, c := range cv.missing {
		sev := manifest.SeverityWarn
		inMandatory := false
		for _, sl := range c.Slices {
			inMandatory = inMandatory || cv.mandatory[sl]
		}
		if over || inMandatory {
			sev = manifest.SeverityHold
		}
		out = append(out, manifest.Finding{Code: results.OmittedMissingSample, Severity: sev, File: c.File, Line: c.Line, CaseID: c.ID,
			Message: fmt.Sprintf("case %s has no sample (inline or in the samples file): a run omits it", c.ID)})
	}
	if notInDataset > 0 {
		sev := manifest.SeverityWarn
		if over {
			sev = manifest.SeverityHold
		}
		out = append(out, manifest.Finding{Code: results.OmittedNotInDataset, Severity: sev, File: m.File, Line: m.Line("dataset.intended_cases"),
			Message: fmt.Sprintf("dataset.intended_cases is %d but %s has %d rows: %d intended cases are missing", sum.Intended, m.Dataset.Path, sum.Rows, notInDataset)})
	}
	if extra := sum.Rows - sum.Intended; extra > 0 {
		// As run warns: every row is graded and counted as intended.
		out = append(out, manifest.Finding{Code: verdict.WarnIntendedCasesSurplus, Severity: manifest.SeverityWarn, File: m.File, Line: m.Line("dataset.intended_cases"),
			Message: fmt.Sprintf("dataset.intended_cases is %d but %s has %d rows: a run grades every row and counts it as intended", sum.Intended, m.Dataset.Path, sum.Rows)})
	}
	names := make([]string, 0, len(cv.inData))
	for sl := range cv.inData {
		names = append(names, sl)
	}
	sort.Strings(names)
	for _, r := range m.Gate.Slices {
		if !r.Mandatory && !cv.inData[r.Name] {
			// A rule for a slice no row has never applies: most likely a typo.
			out = append(out, manifest.Finding{Code: codeUnknownSlice, Severity: manifest.SeverityWarn, File: m.File, Line: m.Line("gate.slices." + r.Name),
				Message: fmt.Sprintf("gate.slices.%s: no case of the dataset is in slice %s, so its rule never applies%s", r.Name, r.Name, manifest.Suggest(r.Name, names))})
			continue
		}
		if !r.Mandatory || cv.rows[r.Name] >= max(r.MinCases, 1) {
			continue
		}
		msg := fmt.Sprintf("mandatory slice %s has %d cases with a sample, fewer than min_cases %d", r.Name, cv.rows[r.Name], r.MinCases)
		if cv.rows[r.Name] == 0 {
			msg = fmt.Sprintf("mandatory slice %s has no case with a sample in the dataset (it may have vanished in a join or a rename)", r.Name)
			if !cv.inData[r.Name] {
				msg += manifest.Suggest(r.Name, names)
			}
		}
		out = append(out, manifest.Finding{Code: results.ReasonSliceTooSmall, Severity: manifest.SeverityHold, File: m.File, Line: m.Line("gate.slices." + r.Name), Message: msg})
	}
	return append(out, cv.underpowered()...)
}

// underpowered judges each slice's size against its min_pass_rate before
// any grading: a slice with fewer cases than its interval needs to clear
// the minimum at 100% warns (underpowered_slice); under the lower_bound
// rule a mandatory one can then never pass, so it holds (slice_inconclusive).
// Under family aggregation the families are at most the rows, so a slice
// too small in rows is too small in families as well.
func (cv *coverage) underpowered() []manifest.Finding {
	m := cv.m
	level := m.Gate.Confidence.Level
	var out []manifest.Finding
	for _, r := range m.Gate.Slices {
		n := cv.sized[r.Name]
		least, ok := stats.LeastCases(r.MinPassRate, level)
		if !ok || n == 0 || n >= least {
			continue
		}
		f := manifest.Finding{Code: verdict.WarnUnderpoweredSlice, Severity: manifest.SeverityWarn, File: m.File, Line: m.Line("gate.slices." + r.Name),
			Message: verdict.UnderpoweredText(r.Name, n, "cases with a sample", r.MinPassRate, level)}
		if r.Mandatory && !r.WarnOnly && m.Gate.Confidence.Rule == manifest.RuleLowerBound {
			f.Code, f.Severity = results.ReasonSliceInconclusive, manifest.SeverityHold
			f.Message += "; under gate.confidence.rule lower_bound a run holds it as inconclusive at best"
		}
		out = append(out, f)
	}
	return out
}
