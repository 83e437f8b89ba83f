package dataset

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"io/fs"
	"slices"

	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/input"
)

// sampleRef says where a sample's JSON is in the samples file.
type sampleRef struct {
	line       int32
	n          int32 // length of the sample's JSON
	off        int64 // offset of the sample's JSON
	unreadable bool  // the line holds what Python refuses (a finding names it)
	claimed    bool  // a case took it
	extra      []int32
	data       []byte // the sample itself, when it is not a span of the file
}

// sampleLine is one usable line of the samples file.
type sampleLine struct {
	line   int
	caseID string
	ref    sampleRef
	// span is the sample in the line just read, valid until the samples
	// file is read further: a sample taken in step with the dataset is
	// copied from it instead of read back.
	span []byte
	// digest is sampleDigest(span), taken beside the parse.
	digest string
}

// joinErr is a samples line that contradicts the dataset.
type joinErr struct {
	line int
	msg  string
}

// sampleJoin walks the samples file: one `{"case_id": "...", "sample": {...}}`
// a line. The id's key is dataset.fields.id, as in the items
// (`{"ticket_id": ...}` when the items say ticket_id); "case_id" is read too,
// since that is what a samples file holds by default.
type sampleJoin struct {
	file    string
	idKey   string // dataset.fields.id
	m       *manifest.Manifest
	f       *input.File
	at      *readAtFile
	lr      *lineReader
	pending *sampleLine // the next usable line, not yet taken (lockstep)
	eof     bool
	// lines reads and parses the lines ahead, as the dataset's are
	// (parse.go).
	lines    *readAhead[keyTable, parsedSample]
	indexed  bool
	index    map[string]*sampleRef
	errs     problems
	joinErrs []joinErr
	findings findingList
}

// parsedSample is what parsing one samples line gave: the line when it is
// usable, and the problems it has, which peek reports in file order.
type parsedSample struct {
	sl      sampleLine
	ok      bool
	errs    []error
	finding *manifest.Finding
}

func openSamples(fsys fs.FS, file string, m *manifest.Manifest) *sampleJoin {
	sj := &sampleJoin{file: file, m: m, idKey: cmp.Or(m.Dataset.Fields.ID, "case_id"), index: map[string]*sampleRef{}, errs: problems{file: file}}
	f, err := openFile(fsys, file, m, "samples.path")
	if err != nil {
		sj.errs.add(err)
		sj.eof = true
		return sj
	}
	sj.f = f
	sj.at = &readAtFile{}
	if ra, ok := f.ReaderAt(); ok {
		sj.at.ra = ra
		sj.lr = newLineReader(f, m.Limits.Of(input.Line))
		sj.lines = newReadAhead(sj.lr, sj.parse)
	} else {
		data, err := io.ReadAll(f)
		if err != nil {
			sj.errs.add(&manifest.Error{File: m.File, Line: m.Line("samples.path"), Key: "samples.path",
				Msg: fmt.Sprintf("cannot read %s: %v", file, err), Err: err})
			sj.eof = true
			return sj
		}
		sj.at.mem = data
		sj.lr = newLineReader(bytes.NewReader(data), m.Limits.Of(input.Line))
		sj.lines = newReadAhead(sj.lr, sj.parse)
	}
	return sj
}

func (sj *sampleJoin) joinErr(line int, msg string) {
	sj.joinErrs = append(sj.joinErrs, joinErr{line, msg})
}

// peek returns the next usable samples line without taking it.
func (sj *sampleJoin) peek() *sampleLine {
	for sj.pending == nil && !sj.eof {
		bl, p, ok := sj.lines.next()
		if !ok {
			sj.eof = true
			if sj.lr.err != nil {
				sj.errs.add(&manifest.Error{File: sj.file, Line: sj.lr.n + 1,
					Msg: fmt.Sprintf("cannot read: %v", sj.lr.err), Err: sj.lr.err})
			}
			break
		}
		if bl.over > 0 {
			sj.errs.add(tooLong(sj.file, bl, sj.lr.max))
			continue
		}
		for _, err := range p.errs {
			sj.errs.add(err)
		}
		if p.finding != nil {
			sj.findings.add(*p.finding)
		}
		if p.ok {
			sl := p.sl
			sj.pending = &sl
		}
	}
	return sj.pending
}

// parse reads one samples line; a line that is not a sample at all is an
// input error, every problem of it listed. It runs on a batch's goroutine:
// it reads only what never changes in sj, and keys is the batch's own.
func (sj *sampleJoin) parse(keys *keyTable, line []byte, l aheadLine) parsedSample {
	var out parsedSample
	out.sl, out.ok = sj.parseLine(keys, &out, line, l.n, l.off)
	return out
}

// buildIndex indexes every samples line not yet taken by case id; from
// then on samples are looked up.
func (sj *sampleJoin) buildIndex() {
	sj.indexed = true
	for {
		p := sj.peek()
		if p == nil {
			return
		}
		sj.pending = nil
		if ref, ok := sj.index[p.caseID]; ok {
			ref.extra = append(ref.extra, int32(p.line))
			continue
		}
		ref := p.ref
		sj.index[p.caseID] = &ref
	}
}

// read returns a sample's JSON, read back from the file.
func (sj *sampleJoin) read(ref sampleRef) ([]byte, error) {
	if ref.data != nil {
		return ref.data, nil
	}
	buf := make([]byte, ref.n)
	if _, err := sj.at.ReadAt(buf, ref.off); err != nil && !(err == io.EOF && len(buf) > 0) {
		return nil, err
	}
	return buf, nil
}

// finish reads the lines no case asked for and closes the file.
func (sj *sampleJoin) finish() {
	if !sj.indexed {
		sj.buildIndex()
	}
	if sj.f != nil {
		sj.f.Close()
	}
}

func (sj *sampleJoin) parseLine(keys *keyTable, out *parsedSample, line []byte, n int, off int64) (sampleLine, bool) {
	lineErr := func(key, msg string) {
		out.errs = append(out.errs, &manifest.Error{File: sj.file, Line: n, Key: key, Msg: msg})
	}
	sc := scanLineKeys(line, "", keys)
	slow := sc.syntax
	if slow {
		top, msg := object(line)
		if msg != "" {
			lineErr("", msg)
			return sampleLine{}, false
		}
		// The scanner is stricter than encoding/json only where Python is;
		// this is the slow path, kept correct.
		sc = scanned{}
		for k, v := range top {
			sc.top = append(sc.top, member{key: k, val: v})
		}
	}
	if k, ok := repeatedKey(sc.top); ok {
		lineErr(k, repeatedMsg)
		return sampleLine{}, false
	}
	bad := false
	// A line has two members, so the common case needs no map.
	var top map[string][]byte
	idKey := sj.idKey
	if len(sc.top) != 2 || sc.top[0].key != idKey || sc.top[1].key != "sample" {
		top = map[string][]byte{}
		for _, mb := range sc.top {
			top[mb.key] = mb.val
		}
		if _, ok := top[idKey]; !ok {
			if _, ok := top["case_id"]; ok {
				idKey = "case_id"
			}
		}
	}
	if top != nil && (sc.unreadable == "" || len(top) > 0) {
		for _, k := range sortedKeys(top) {
			if k != idKey && k != "sample" {
				named := ""
				if sj.idKey != "case_id" {
					named = " (dataset.fields.id)"
				}
				lineErr(k, fmt.Sprintf("unknown key; a samples line holds only %q%s and \"sample\"", sj.idKey, named))
				bad = true
			}
		}
	}
	member := func(key string) ([]byte, bool) {
		if top != nil {
			v, ok := top[key]
			return v, ok
		}
		for _, mb := range sc.top {
			if mb.key == key {
				return mb.val, true
			}
		}
		return nil, false
	}
	var id string
	if raw, ok := member(idKey); !ok {
		if sc.unreadable == "" {
			lineErr(idKey, "missing")
		}
		bad = true
	} else if v, ok := stringValue(raw); !ok || v == "" {
		lineErr(idKey, "must be a non-empty string, not "+jsonKind(raw))
		bad = true
	} else {
		id = v
	}
	sample, ok := member("sample")
	switch {
	case !ok && sc.unreadable != "":
		sample, ok = []byte("{}"), true // cut short by the depth bound
	case !ok:
		lineErr("sample", "missing")
		bad = true
	case !isObject(sample):
		lineErr("sample", "must be an object, not "+jsonKind(sample))
		bad = true
	}
	if sc.unreadable != "" {
		out.finding = &manifest.Finding{
			Code: CodeDatasetInvalid, Severity: manifest.SeverityHold, File: sj.file, Line: n, CaseID: id,
			Message: "the sample is not sent to the grader: " + sc.unreadable,
		}
	}
	if bad {
		return sampleLine{}, false
	}
	ref := sampleRef{line: int32(n), n: int32(len(sample)), unreadable: sc.unreadable != ""}
	if slow || sc.unreadable != "" {
		ref.data = append([]byte(nil), sample...)
	} else {
		// sample is a span of line: the difference of capacities is where
		// it starts.
		ref.off = off + int64(cap(line)-cap(sample))
	}
	sl := sampleLine{line: n, caseID: id, ref: ref}
	if ref.data == nil {
		sl.span = sample
		sl.digest = sampleDigest(sample)
	}
	return sl, true
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
