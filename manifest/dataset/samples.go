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
	// Lines read ahead and parsed on goroutines of their own, as the
	// dataset's are (see parse.go), taken in file order.
	ahead     []*sampleBatch
	cur       *sampleBatch
	curAt     int
	free      []*sampleBatch
	linesDone bool
	indexed   bool
	index     map[string]*sampleRef
	errs      problems
	joinErrs  []joinErr
	findings  findingList
}

// sampleBatch is samples lines read ahead: their bytes end to end, and
// once done is closed, what parsing each gave.
type sampleBatch struct {
	data  []byte
	lines []sampleBatchLine
	out   []parsedSample
	keys  keyTable
	done  chan struct{}
}

type sampleBatchLine struct {
	end  int   // the line is data[previous end:end]
	n    int   // its number in the file
	off  int64 // its offset in the file
	over int64 // a line too long to keep: its length, and no bytes
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
	}
	return sj
}

func (sj *sampleJoin) joinErr(line int, msg string) {
	sj.joinErrs = append(sj.joinErrs, joinErr{line, msg})
}

// peek returns the next usable samples line without taking it.
func (sj *sampleJoin) peek() *sampleLine {
	for sj.pending == nil && !sj.eof {
		bl, p, ok := sj.nextParsed()
		if !ok {
			sj.eof = true
			if sj.lr.err != nil {
				sj.errs.add(&manifest.Error{File: sj.file, Line: sj.lr.n + 1,
					Msg: fmt.Sprintf("cannot read: %v", sj.lr.err), Err: sj.lr.err})
			}
			break
		}
		if bl.over > 0 {
			err := input.LineTooLong(sj.file, bl.over, sj.lr.max)
			sj.errs.add(&manifest.Error{File: sj.file, Line: bl.n, Msg: err.Msg, Err: err})
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

// nextParsed returns the next parsed samples line, in file order; ok is
// false at the end (sj.lr.err then tells a read error). A line's span
// stays valid until the line after the next batch's is taken.
func (sj *sampleJoin) nextParsed() (bl sampleBatchLine, p *parsedSample, ok bool) {
	for {
		if b := sj.cur; b != nil && sj.curAt < len(b.lines) {
			k := sj.curAt
			sj.curAt++
			return b.lines[k], &b.out[k], true
		}
		if sj.cur != nil {
			if cap(sj.cur.data) > 4*batchBytes {
				sj.cur.data = nil // it held a long line: not kept for the next batch
			}
			sj.free = append(sj.free, sj.cur)
			sj.cur = nil
		}
		sj.readAhead()
		if len(sj.ahead) == 0 {
			return sampleBatchLine{}, nil, false
		}
		sj.cur, sj.curAt = sj.ahead[0], 0
		sj.ahead = sj.ahead[1:]
		<-sj.cur.done
		sj.readAhead()
	}
}

// readAhead reads batches of samples lines and starts parsing them until
// parseAhead are in flight or the file is read.
func (sj *sampleJoin) readAhead() {
	for !sj.linesDone && len(sj.ahead) < parseAhead() {
		var b *sampleBatch
		if n := len(sj.free); n > 0 {
			b, sj.free = sj.free[n-1], sj.free[:n-1]
			b.data, b.lines = b.data[:0], b.lines[:0]
		} else {
			b = &sampleBatch{}
		}
		for len(b.lines) < batchLines && len(b.data) < batchBytes {
			line, n, off, ok := sj.lr.next()
			if !ok {
				sj.linesDone = true
				break
			}
			if sj.lr.over > 0 {
				b.lines = append(b.lines, sampleBatchLine{end: len(b.data), n: n, over: sj.lr.over})
				continue
			}
			b.data = append(b.data, line...)
			b.lines = append(b.lines, sampleBatchLine{end: len(b.data), n: n, off: off})
		}
		if len(b.lines) == 0 {
			sj.free = append(sj.free, b)
			return
		}
		b.done = make(chan struct{})
		go sj.parseBatch(b)
		sj.ahead = append(sj.ahead, b)
	}
}

// parseBatch parses every line of b that was kept.
func (sj *sampleJoin) parseBatch(b *sampleBatch) {
	defer close(b.done)
	if cap(b.out) < len(b.lines) {
		b.out = make([]parsedSample, len(b.lines))
	} else {
		b.out = b.out[:len(b.lines)]
		clear(b.out)
	}
	start := 0
	for k, bl := range b.lines {
		// The line's capacity ends with it, so that parse can tell where
		// the sample starts in it.
		line := b.data[start:bl.end:bl.end]
		start = bl.end
		if bl.over > 0 {
			continue
		}
		sj.parse(&b.keys, &b.out[k], line, bl.n, bl.off)
	}
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

// parse reads one samples line into out; a line that is not a sample at
// all is an input error, every problem of it listed. It runs on a batch's
// goroutine: it reads only what never changes in sj, and keys is the
// batch's own.
func (sj *sampleJoin) parse(keys *keyTable, out *parsedSample, line []byte, n int, off int64) {
	out.sl, out.ok = sj.parseLine(keys, out, line, n, off)
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
	bad := false
	// The members as a JSON object reads them: the last of a repeated key
	// wins. A line has two members, so the common case needs no map.
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
