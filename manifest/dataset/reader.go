package dataset

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/input"
)

// Reader reads a suite's dataset, and its samples file when there is one, as
// streams: each line is read once and scanned once, and what stays in memory
// is one entry per case id (duplicate detection, the samples join) and a
// counter per mandatory slice, never the rows.
//
// The sample of a case is found by walking the samples file alongside the
// dataset while both are in the same order; at the first case whose sample
// is not the next samples line, the rest of the samples file is indexed by
// case id (offset and length of each sample) and samples are read back from
// there.
//
// Next returns the rows in file order; a line that is not a case at all is
// skipped and recorded as an input error. Close reads what is left, runs the
// checks that need the whole file and returns the summary, or every input
// error at once.
type Reader struct {
	m      *manifest.Manifest
	fields manifest.Fields
	file   string
	hidden map[string]bool

	cases     *lineReader
	casesFile *input.File
	// lines reads and parses the dataset's lines ahead (parse.go).
	lines   *readAhead[parseState, parsedLine]
	samples *sampleJoin
	schema  *itemSchema

	caseErrs  problems
	schemaErr error

	rows       int
	noID       int
	firstNoID  int
	seen       *idTable  // nil once Close has judged the join
	seenHashes *idHashes // the ids' hashes, once seen is nil
	joinErrs   []error   // the samples lines no case took, once Close has read them
	dupLines   map[string][]int
	controls   map[string]*controlCount
	findings   findingList
	screen     *nearScreen
	labels     *labelFold
	unknown    *unknownFields // nil without a schema that declares fields
	sliceNames sliceTally
	labeled    bool     // a row has the label field
	grouped    bool     // a row has the family field, or it is not looked for
	hiddenSet  fieldSet // dataset.hidden_fields, looked for in the rows
	shape      *canaryShape
	sampled    string // the file of the first stored sample; "": none yet
	done       bool
	pinSums    []pinSum
	// Unpinned, when set, names the pinned file (dataset.sha256,
	// samples.sha256) whose bytes differ from its pin: nothing was read.
	Unpinned string
	// closed says Close has run; summary and closeErr are what it
	// returned, which every later call returns too.
	closed   bool
	summary  *Summary
	closeErr error
}

// idInfo is what is kept per case id: 24 bytes and no pointer (idTable),
// so that a million ids cost tens of megabytes, not hundreds, and nothing
// the garbage collector walks.
type idInfo struct {
	line       int32
	sampleLine int32  // samples-file line of its sample; 0 when none or inline
	sampleOff  uint32 // where that sample is (with offHigh), to give it to a repeated id too
	sampleLen  int32
	idOff      uint32 // the id's bytes: idTable's arena[idOff:idOff+idLen]
	idLen      uint16
	offHigh    uint8 // sampleOff's bits 32 to 39
	inline     bool
}

// maxSampleOff bounds the samples-file offsets an idInfo holds (1 TiB);
// the bit above it says the sample is unreadable.
const maxSampleOff = 1<<39 - 1

// setSample records where the id's sample is; false when the offset is
// past what an idInfo holds (the sample is then not given to a repeated
// id, as for a sample read the slow way).
func (i *idInfo) setSample(line int, ref sampleRef) bool {
	if ref.off < 0 || ref.off > maxSampleOff {
		return false
	}
	i.sampleLine, i.sampleLen = int32(line), ref.n
	i.sampleOff, i.offHigh = uint32(ref.off), uint8(ref.off>>32)
	if ref.unreadable {
		i.offHigh |= 0x80
	}
	return true
}

// ref is where the id's sample is.
func (i idInfo) ref() sampleRef {
	off := int64(i.offHigh&0x7f)<<32 | int64(i.sampleOff)
	return sampleRef{line: i.sampleLine, off: off, n: i.sampleLen, unreadable: i.offHigh&0x80 != 0}
}

// controlCount counts a mandatory slice's rows and labels.
type controlCount struct{ cases, pos, neg int }

// Summary is what a whole dataset showed once every row was read.
type Summary struct {
	// Rows is the number of dataset rows.
	Rows int
	// Intended is dataset.intended_cases, or Rows when that is 0.
	Intended int
	// Findings are the dataset contract findings, in the order Set.Findings
	// documents.
	Findings []manifest.Finding
	// Labels is what the rows' labels showed: reviewer agreement, brittle,
	// stale and warn-only rows.
	Labels *LabelSummary
}

// CodeDatasetInvalid is the finding of a line that is well-formed JSON but
// that Python would refuse: invalid UTF-8 in a string, or nesting deeper
// than MaxDepth. The case is never sent to the grader.
const CodeDatasetInvalid = "dataset_invalid"

// Open starts reading the dataset the manifest names. Files that cannot be
// opened and a schema that cannot be used are input errors that Err reports
// at once and Close reports again with the rest.
func Open(fsys fs.FS, m *manifest.Manifest) *Reader {
	r := &Reader{
		m:        m,
		fields:   m.Dataset.Fields.WithDefaults(),
		file:     path.Join(m.Dir, m.Dataset.Path),
		seen:     newIDTable(),
		dupLines: map[string][]int{},
		controls: map[string]*controlCount{},
	}
	r.caseErrs.file = r.file
	// The family field is looked for only where its absence is reported.
	r.grouped = m.Line("dataset.fields.family") == 0 && m.Gate.Aggregation != "family"
	// A label's reason and the reviewers' labels give the label away, so
	// the grader never sees them either.
	r.hidden = map[string]bool{r.fields.Label: true, r.fields.Reason: true, r.fields.ReviewerLabels: true}
	r.labels = newLabelFold(m, r.file)
	for _, f := range m.Dataset.HiddenFields {
		r.hidden[f] = true
	}
	for _, f := range m.Dataset.HiddenFields {
		r.hiddenSet.fields = append(r.hiddenSet.fields, canaryField{name: f})
	}
	r.hiddenSet.left = len(r.hiddenSet.fields)
	r.shape = newCanaryShape(m.Canaries)
	for _, rule := range m.Gate.Slices {
		if rule.Mandatory {
			r.controls[rule.Name] = &controlCount{}
		}
	}
	r.screen = newNearScreen(r, fsys)

	if err := r.checkPins(fsys); err != nil || r.Unpinned != "" {
		// A file whose bytes are not the pinned ones may be anything the
		// pull request pointed at (a dataset.path that climbs out of the
		// repository to a credentials file): it is not parsed, so no
		// error quotes a byte of it. The digest check holds the run.
		if err != nil {
			r.caseErrs.add(err)
		}
		r.done = true
		return r
	}
	f, err := openFile(fsys, r.file, m, "dataset.path")
	if err != nil {
		r.caseErrs.add(err)
		r.done = true
	} else {
		r.casesFile = f
		r.cases = newLineReader(f, m.Limits.Of(input.Line))
		r.lines = newReadAhead(r.cases, func(st *parseState, line []byte, l aheadLine) parsedLine {
			row, err := r.parseCase(st, line, l.n)
			return parsedLine{row: row, err: err}
		})
	}
	if m.Samples != nil {
		r.samples = openSamples(fsys, path.Join(m.Dir, m.Samples.Path), m)
	}
	if m.Dataset.Schema != "" {
		r.schema, r.schemaErr = compileSchema(fsys, path.Join(m.Dir, m.Dataset.Schema), m)
		if r.schema != nil {
			if d := schemaFields(r.schema.schema); d != nil {
				r.unknown = newUnknownFields(d, r.fields)
			}
		}
	}
	return r
}

// Err reports the input errors found so far.
func (r *Reader) Err() error {
	errs := slices.Clone(r.caseErrs.errs())
	if r.samples != nil {
		errs = append(errs, r.samples.errs.errs()...)
	}
	if r.schemaErr != nil {
		errs = append(errs, r.schemaErr)
	}
	return errors.Join(errs...)
}

// Failed reports whether an input error has been found already, so that
// Close will return an error: a caller can stop early.
func (r *Reader) Failed() bool {
	return r.caseErrs.any() || r.schemaErr != nil || (r.samples != nil && r.samples.errs.any())
}

// Next returns the next dataset row with its sample joined in; ok is false
// once the file is read.
func (r *Reader) Next() (c Case, ok bool) {
	for !r.done {
		bl, p, ok := r.lines.next()
		if !ok {
			r.done = true
			if r.cases.err != nil {
				r.caseErrs.add(&manifest.Error{File: r.file, Line: r.cases.n + 1,
					Msg: fmt.Sprintf("cannot read: %v", r.cases.err), Err: r.cases.err})
			}
			break
		}
		if bl.over > 0 {
			r.caseErrs.add(tooLong(r.file, bl, r.cases.max))
			continue
		}
		if p.err != nil {
			r.caseErrs.add(p.err)
			continue
		}
		r.rows++
		r.fold(&p.row)
		c := p.row.Case
		p.row = caseRow{}
		return c, true
	}
	return Case{}, false
}

// fold runs the per-row checks and the samples join, and keeps what the
// whole-file checks need.
func (r *Reader) fold(row *caseRow) {
	r.findings.add(row.findings...)
	if r.schema != nil && !row.Unreadable {
		if f, ok := r.schema.check(row); ok {
			r.findings.add(f)
		}
	}
	if r.unknown != nil && !row.Unreadable {
		r.unknown.add(row.fields, row.Line)
	}
	if !r.labeled {
		_, r.labeled = row.field(r.fields.Label)
	}
	if !r.grouped {
		_, r.grouped = row.field(r.fields.Family)
	}
	r.hiddenSet.seeItem(row)
	if !row.Unreadable {
		r.shape.add(row, r.rows)
	}
	if !row.hasID {
		r.noID++
		if r.firstNoID == 0 {
			r.firstNoID = row.Line
		}
	}
	// One lookup of the id serves the join and the duplicate check: in a
	// million-row dataset each costs a cache miss.
	var h uint64
	var info idInfo
	var dup bool
	if row.hasID {
		h, info, dup = r.seen.get(row.ID)
	}
	r.join(row, info, dup)
	if row.hasID {
		if dup {
			if r.dupLines[row.ID] == nil {
				r.dupLines[row.ID] = []int{int(info.line)}
			}
			r.dupLines[row.ID] = append(r.dupLines[row.ID], row.Line)
		} else {
			info = idInfo{line: int32(row.Line), inline: row.Sample != nil && row.SampleFile == row.File}
			// A sample held in memory (read the slow way) is not given to
			// a repeated id: that row is omitted, which holds anyway.
			if row.Sample != nil && !info.inline && row.ref.data == nil {
				info.setSample(row.SampleLine, row.ref)
			}
			r.seen.add(h, row.ID, info)
		}
	}
	for _, s := range row.Slices {
		r.sliceNames.add(s, row.Line, row.ID)
		if cc := r.controls[s]; cc != nil {
			cc.cases++
			if row.Calibrates(r.m.Gate.Calibration) {
				if *row.Label == 1 {
					cc.pos++
				} else {
					cc.neg++
				}
			}
		}
	}
	if row.Sample != nil {
		// Only well-formed JSON becomes a sample.
		row.SampleSHA256 = row.sampleSum
		if row.SampleSHA256 == "" {
			row.SampleSHA256 = sampleDigest(row.Sample)
		}
		r.labels.sum.Candidates.add(row.Sample)
		if r.sampled == "" {
			r.sampled = row.SampleFile
		}
		r.shape.addSample(row.Sample, r.rows)
	}
	r.labels.fold(&row.Case)
	// The near-duplicate screen sees every row, once.
	r.screen.add(row)
	row.fields = nil
}

// join attaches the row's sample from the samples file. info and dup are
// what r.seen holds for the row's id.
func (r *Reader) join(row *caseRow, info idInfo, dup bool) {
	sj := r.samples
	if sj == nil || !row.hasID {
		return
	}
	inline := row.Sample != nil
	if dup {
		// A duplicated case_id (its own finding) gets the sample on every row.
		if !inline && info.sampleLine > 0 {
			r.attach(row, info.ref())
		}
		return
	}
	if !sj.indexed {
		if p := sj.peek(); p != nil && p.caseID == row.ID {
			sj.pending = nil
			if inline {
				sj.joinErr(p.line, fmt.Sprintf("case %q already has an inline sample at %s:%d; keep one of the two", row.ID, row.File, row.Line))
				return
			}
			if p.span != nil {
				// Nothing was read since p: its bytes are still the line's.
				r.attachData(row, p.ref, bytes.Clone(p.span))
				row.sampleSum = p.digest
				return
			}
			r.attach(row, p.ref)
			return
		}
		if inline {
			return
		}
		sj.buildIndex()
	}
	ref, ok := sj.index[row.ID]
	if !ok {
		return
	}
	ref.claimed = true
	if inline {
		// Further lines for the id are named by joinErrors.
		sj.joinErr(int(ref.line), fmt.Sprintf("case %q already has an inline sample at %s:%d; keep one of the two", row.ID, row.File, row.Line))
		return
	}
	r.attach(row, *ref)
}

// attach reads a sample back and joins it to row.
func (r *Reader) attach(row *caseRow, ref sampleRef) {
	data, err := r.samples.read(ref)
	if err != nil {
		r.samples.errs.add(&manifest.Error{File: r.samples.file, Line: int(ref.line),
			Msg: fmt.Sprintf("cannot read back: %v", err), Err: err})
		return
	}
	r.attachData(row, ref, data)
}

// attachData joins the sample at ref, whose bytes are data, to row.
func (r *Reader) attachData(row *caseRow, ref sampleRef, data []byte) {
	row.Sample = data
	row.SampleFile, row.SampleLine = r.samples.file, int(ref.line)
	row.ref = ref
	if ref.unreadable {
		row.Unreadable = true
	}
}

// Seen reports whether a row read so far has the case id. After Close,
// which lets the ids' bytes go, it may also say true for an id that only
// shares a 64-bit hash (seeded at random) with one of them; never false for
// one of them.
func (r *Reader) Seen(id string) bool {
	if r.seen == nil {
		return r.seenHashes.mayHold(id)
	}
	_, _, ok := r.seen.get(id)
	return ok
}

// Close reads whatever Next has not, closes the files and returns the
// summary; the error joins every input error, in the order the dataset,
// the samples, the schema and the join found them. Close may be called
// more than once (a deferred cleanup does): the summary is made once, the
// near-duplicate screen's end phase with it, and every later call returns
// what the first did.
func (r *Reader) Close() (*Summary, error) {
	if r.closed {
		return r.summary, r.closeErr
	}
	for {
		if _, ok := r.Next(); !ok {
			break
		}
	}
	r.closed = true
	if r.casesFile != nil {
		r.casesFile.Close()
	}
	if r.samples != nil {
		r.samples.finish()
		r.joinErrs = r.joinErrors()
	}
	// The join was judged above: from here on Seen is all the ids
	// serve, and their hashes answer it. The table goes before the
	// near-duplicate screen's end phase, whose sort buffers would
	// otherwise come on top of it.
	r.seenHashes = r.seen.hashes()
	r.seen = nil
	r.summary, r.closeErr = r.summarise()
	return r.summary, r.closeErr
}

// summarise is Close's summary, made once every row is read.
func (r *Reader) summarise() (*Summary, error) {
	if r.rows == 0 && !r.caseErrs.any() && r.Unpinned == "" {
		// Nothing to grade would make every rate vacuous; refuse it rather
		// than let an empty export pass.
		r.caseErrs.add(&manifest.Error{File: r.file, Msg: "holds no cases"})
	}
	errs := slices.Clone(r.caseErrs.errs())
	if r.samples != nil {
		errs = append(errs, r.samples.errs.errs()...)
	}
	if r.schemaErr != nil {
		errs = append(errs, r.schemaErr)
	}
	// A sample for a line that could not be read would only repeat that
	// line's error as "not in the dataset", so the join is judged only for
	// a clean dataset.
	if !r.caseErrs.any() && r.samples != nil {
		errs = append(errs, r.joinErrs...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	s := &Summary{Rows: r.rows, Intended: r.m.Dataset.IntendedCases, Labels: &r.labels.sum}
	if s.Intended == 0 {
		s.Intended = r.rows
	}
	found := &r.findings
	if r.samples != nil {
		found.add(r.samples.findings.all()...)
	}
	found.add(r.duplicateIDs()...)
	s.Findings = found.all()
	s.Findings = append(s.Findings, r.labelFieldMissing()...)
	s.Findings = append(s.Findings, r.familyFieldMissing()...)
	s.Findings = append(s.Findings, r.hiddenFieldsMissing()...)
	if r.rows > 0 {
		s.Findings = append(s.Findings, r.shape.findings(r.file, r.sampled)...)
	}
	s.Findings = append(s.Findings, r.missingControls()...)
	s.Findings = append(s.Findings, r.sliceNames.findings(r.file, r.m.Gate.Slices)...)
	if r.unknown != nil {
		s.Findings = append(s.Findings, r.unknown.findings(r.file, r.schema.file)...)
	}
	near, err := r.screen.findings()
	if err != nil {
		return nil, err
	}
	s.Findings = append(s.Findings, near...)
	return s, nil
}

// joinErrors lists every samples line no case took, in line order.
func (r *Reader) joinErrors() []error {
	sj := r.samples
	hint := ""
	if r.noID > 0 {
		hint = fmt.Sprintf(" (%d row(s) of %s have no usable %s, first on line %d)", r.noID, r.file, r.fields.ID, r.firstNoID)
	}
	type lineErr struct {
		line int
		msg  string
	}
	var out []lineErr
	for _, e := range sj.joinErrs {
		out = append(out, lineErr(e))
	}
	for id, ref := range sj.index {
		_, info, known := r.seen.get(id)
		lines := append([]int32{ref.line}, ref.extra...)
		if ref.claimed {
			lines = ref.extra
		}
		for _, l := range lines {
			var msg string
			switch {
			case !known:
				msg = fmt.Sprintf("%q is not a case in %s%s", id, r.file, hint)
			case info.inline:
				msg = fmt.Sprintf("case %q already has an inline sample at %s:%d; keep one of the two", id, r.file, info.line)
			case ref.claimed:
				msg = fmt.Sprintf("second sample for case %q (the first is on line %d)", id, ref.line)
			case info.sampleLine > 0:
				msg = fmt.Sprintf("second sample for case %q (the first is on line %d)", id, info.sampleLine)
			default:
				msg = fmt.Sprintf("%q is not a case in %s%s", id, r.file, hint)
			}
			out = append(out, lineErr{int(l), msg})
		}
	}
	slices.SortStableFunc(out, func(a, b lineErr) int { return a.line - b.line })
	errs := problems{file: sj.file}
	for _, e := range out {
		errs.add(&manifest.Error{File: sj.file, Line: e.line, Key: sj.idKey, Msg: e.msg})
	}
	return errs.errs()
}

// duplicateIDs reports each case_id written on more than one line, once,
// naming every line; ids are reported in order of first appearance.
func (r *Reader) duplicateIDs() []manifest.Finding {
	ids := make([]string, 0, len(r.dupLines))
	for id := range r.dupLines {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return r.dupLines[a][0] - r.dupLines[b][0] })
	var out []manifest.Finding
	for _, id := range ids {
		ls := r.dupLines[id]
		out = append(out, manifest.Finding{
			Code: CodeDuplicateCaseID, Severity: manifest.SeverityHold,
			File: r.file, Line: ls[0], CaseID: id,
			Message: fmt.Sprintf("case_id %q is on %d lines: %s", cutValue(id), len(ls), joinInts(ls)),
		})
	}
	return out
}

// sampleDigest is the hex sha256 of the sample's compacted JSON, so that
// re-indenting a samples file does not change any case's output identity.
func sampleDigest(sample json.RawMessage) string {
	sum := sha256.Sum256(CompactValid(make([]byte, 0, len(sample)), sample))
	return hex.EncodeToString(sum[:])
}

// CompactValid appends the valid JSON src to dst without the whitespace
// between its tokens: what json.Compact writes for it, without json.Compact's
// checks (src must be valid JSON: an encoder's output, a decoder's raw
// value, a line the scanner accepted). It only tells strings from the rest,
// and takes whitespace out a run at a time.
func CompactValid(dst, src []byte) []byte {
	start := 0
	for i := 0; i < len(src); {
		switch src[i] {
		case '"':
			// To the closing quote; an escaped one does not close it.
			for i++; i < len(src); {
				c := src[i]
				if c == '\\' {
					i += 2
					continue
				}
				i++
				if c == '"' {
					break
				}
			}
		case ' ', '\t', '\n', '\r':
			dst = append(dst, src[start:i]...)
			for i++; i < len(src) && isJSONSpace(src[i]); i++ {
			}
			start = i
		default:
			i++
		}
	}
	return append(dst, src[min(start, len(src)):]...)
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// checkPins hashes the dataset and the samples file, each when it is
// pinned (the manifest requires dataset.sha256), before a line of either is
// parsed, and sets Unpinned to the key of the first whose bytes differ from
// its pin. The two files are hashed at the same time, each on a goroutine
// of its own; what they showed is judged in that order.
func (r *Reader) checkPins(fsys fs.FS) error {
	type pinned struct {
		key, file, pin string
		sum            string
		err            error
	}
	var files []*pinned
	if r.m.Dataset.SHA256 != "" {
		files = append(files, &pinned{key: "dataset.sha256", file: r.file, pin: r.m.Dataset.SHA256})
	}
	if s := r.m.Samples; s != nil && s.SHA256 != "" {
		files = append(files, &pinned{key: "samples.sha256", file: path.Join(r.m.Dir, s.Path), pin: s.SHA256})
	}
	var wg sync.WaitGroup
	for _, f := range files {
		wg.Go(func() {
			key := strings.TrimSuffix(f.key, ".sha256") + ".path"
			kind := input.ForKey(key)
			file, err := input.Open(fsys, f.file, kind, r.m.Limits.Of(kind))
			if err != nil {
				_, f.err = openFile(fsys, f.file, r.m, key)
				return
			}
			defer file.Close()
			sum, err := manifest.Digest(file)
			if err != nil {
				f.err = &manifest.Error{File: f.file, Msg: "cannot read: " + err.Error(), Err: err}
				return
			}
			f.sum = sum
		})
	}
	wg.Wait()
	for _, f := range files {
		if f.err != nil {
			return f.err
		}
		r.pinSums = append(r.pinSums, pinSum{strings.TrimSuffix(f.key, ".sha256"), "sha256:" + f.sum})
		if f.sum != strings.ToLower(manifest.NormalizeDigest(strings.TrimSpace(f.pin))) {
			r.Unpinned = f.key
			return nil
		}
	}
	return nil
}

// pinSum is the digest of a pinned file's bytes as checkPins read them.
type pinSum struct{ name, sum string }

// PinnedDigests returns the digests ("sha256:<hex>") of the dataset and
// the samples file as Open hashed them against their pins, each "" when
// it was not hashed (not pinned, unreadable, or after a file whose bytes
// differ from its pin).
func (r *Reader) PinnedDigests() (dataset, samples string) {
	for _, p := range r.pinSums {
		switch p.name {
		case "dataset":
			dataset = p.sum
		case "samples":
			samples = p.sum
		}
	}
	return dataset, samples
}

// openFile opens name from fsys. A failure is an input error at the
// manifest key that names the file (key, as in "dataset.path"), so the user
// sees which line of the manifest to fix, and names the file as resolved.
func openFile(fsys fs.FS, name string, m *manifest.Manifest, key string) (*input.File, error) {
	kind := input.ForKey(key)
	f, err := input.Open(fsys, name, kind, m.Limits.Of(kind))
	if err != nil {
		cause := err
		var pe *fs.PathError
		if errors.As(err, &pe) {
			cause = pe.Err // the path is named in the message
		}
		return nil, &manifest.Error{File: m.File, Line: m.Line(key), Key: key, Msg: fmt.Sprintf("cannot read %s: %v", name, cause), Err: err}
	}
	return f, nil
}

var _ io.ReaderAt = (*readAtFile)(nil)

// readAtFile reads a file back at an offset, whether or not the fs.File
// supports it: one that does not is read into memory once.
type readAtFile struct {
	ra  io.ReaderAt
	mem []byte
}

func (f *readAtFile) ReadAt(p []byte, off int64) (int, error) {
	if f.ra != nil {
		return f.ra.ReadAt(p, off)
	}
	if off >= int64(len(f.mem)) {
		return 0, io.EOF
	}
	n := copy(p, f.mem[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// readFile reads a whole small file (the schema) through openFile.
func readFile(fsys fs.FS, name string, m *manifest.Manifest, key string) ([]byte, error) {
	f, err := openFile(fsys, name, m, key)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, &manifest.Error{File: m.File, Line: m.Line(key), Key: key, Msg: fmt.Sprintf("cannot read %s: %v", name, err), Err: err}
	}
	return data, nil
}
