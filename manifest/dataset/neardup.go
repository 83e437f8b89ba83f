package dataset

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io/fs"
	"slices"

	"github.com/gradegate/gradegate/manifest"
)

const (
	// shingleWords is the width of a shingle: 5 consecutive words.
	shingleWords = 5
	// defaultNearDuplicateThreshold applies when the manifest leaves
	// dataset.near_duplicates.threshold at 0.
	defaultNearDuplicateThreshold = 0.85
	// maxClusterFindings bounds the clusters listed one finding each;
	// beyond it a single finding counts the clusters left out.
	maxClusterFindings = 20
	// clusterCasesShown is how many cases a cluster finding names.
	clusterCasesShown = 5
)

// Context texts: when near_duplicates.fields is not set, a text that
// recurs in many rows that otherwise differ (a system prompt, a fixed
// instruction) is context, not content, and comparing it would make every
// pair of rows look alike. A text counts as context when it is in at least
// one in contextShare of the first headRows rows, in at least
// contextMinRows of them, and the rows that hold it differ elsewhere (in
// any string, short ones too) in at least half the cases. The screen holds
// those first rows (at most headBytes of items) until it knows.
const (
	headRows       = 1000
	headBytes      = 4 << 20
	contextShare   = 4
	contextMinRows = 5
)

// ScreenConfig is what a near-duplicate screen needs to know.
type ScreenConfig struct {
	// Manifest gives dataset.near_duplicates and dataset.fields, and is
	// where findings about the manifest itself point.
	Manifest *manifest.Manifest
	// FS and File locate the dataset. The screen reads the file again, at
	// the end and only for the rows that may be near duplicates, to check
	// them on their exact shingles rather than hold every row's text.
	FS   fs.FS
	File string
	// Hidden names more top-level item fields that are never compared
	// unless near_duplicates.fields names them.
	Hidden []string
}

// Screen finds near-duplicate and duplicate rows of a dataset in one pass,
// in memory linear in the rows with a small constant (20 bytes a row
// during the pass): rows are fed one at a time with Add, and Findings
// reports clusters.
//
// The pass keeps, for each row, its line, the hashes of its case id and of
// its item's bytes, and its label, and reads nothing of its texts; the end
// phase reads the rows again, on every core, to hash and sign their texts
// (the exact hash and the band hashes, 56 bytes a row, are held only then,
// once the reader's case-id table is gone) and keeps the rows that have
// compared text.
//
// Each row's compared texts are cut into 5-word shingles (a text under
// five words is one shingle) tagged with their field's path, so words
// never join across fields. A MinHash signature of the shingle set (one
// permutation hashing, densified by rotation) is cut into bands; two rows
// that agree on a whole band are candidates, which finds a pair at
// similarity 0.85 with probability above 0.99 and never lists all pairs.
// Candidates are checked on the exact Jaccard similarity of their shingle
// sets, and rows at or above the threshold are joined into clusters
// (union-find). Rows whose texts are equal after case and white-space
// normalisation are joined directly, whatever their length.
type Screen struct {
	on        bool
	threshold float64
	fsys      fs.FS
	file      string
	m         *manifest.Manifest
	idField   string
	// labelField and reasonField are read again for the rows a label
	// conflict names.
	labelField, reasonField string
	fields                  []string // near_duplicates.fields as written

	ext  extractor
	rows rowStore
	// idSeed hashes case ids: a row keeps its id's hash, and the ids a
	// finding shows are read again with the rows.
	idSeed maphash.Seed

	// spillDir is where the shingle sets go for the end phase (see
	// setSpill): "" for the system's temporary directory.
	spillDir string

	// head holds the first rows until the context texts are known; nil
	// once they are (or when near_duplicates.fields is set).
	head     []headRow
	headSize int
}

type headRow struct {
	line   int
	id     string
	item   []byte
	lab    rowLabel
	verify bool
}

// rowLabel is a row's label as the screen keeps it: label -1 for none, and
// reason a hash of the label's stated reason, 0 for none.
type rowLabel struct {
	label  int8
	reason uint32
}

// NewScreen returns a screen for one dataset, ready for Add.
func NewScreen(cfg ScreenConfig) *Screen {
	m := cfg.Manifest
	nd := m.Dataset.NearDuplicates
	f := m.Dataset.Fields.WithDefaults()
	s := &Screen{
		on:         nd.On(),
		threshold:  nd.Threshold,
		fsys:       cfg.FS,
		file:       cfg.File,
		m:          m,
		idField:    f.ID,
		labelField: f.Label, reasonField: f.Reason,
		fields: nd.Fields,
		idSeed: maphash.MakeSeed(),
	}
	if s.threshold <= 0 {
		s.threshold = defaultNearDuplicateThreshold
	}
	// The label fields are about the row, not its content: two rows must
	// not look alike for sharing a rubric version or a reason.
	s.ext.skip = map[string]bool{f.ID: true, f.Slice: true, f.Family: true, f.Label: true,
		f.RubricVersion: true, f.LabelStatus: true, f.ReviewerLabels: true, f.Reason: true}
	for _, h := range cfg.Hidden {
		s.ext.skip[h] = true
	}
	for _, name := range nd.Fields {
		p, err := manifest.ParseFieldPath(name)
		if err != nil {
			// The manifest parser rejects such a path; a hand-built
			// manifest gets the field compared by its whole name.
			p = manifest.FieldPath{{Key: name}}
		}
		s.ext.patterns = append(s.ext.patterns, p)
	}
	s.ext.seen = make([]bool, len(s.ext.patterns))
	if s.ext.patterns == nil {
		s.head = []headRow{}
	}
	return s
}

// Add feeds one dataset row, in file order: its line in the file (1-based,
// blank lines counted), its case id and its item object as read. item is
// not kept after Add returns.
func (s *Screen) Add(line int, caseID string, item json.RawMessage) {
	s.addLabeled(line, caseID, item, rowLabel{label: -1}, true)
}

// addLabeled is Add with the row's label, so that a cluster whose rows
// carry different labels can be told. verify says item is the line's own
// item as written, to be told again when the line is read again (not so
// for a row the reader could not read, whose item may stand in for it).
func (s *Screen) addLabeled(line int, caseID string, item json.RawMessage, lab rowLabel, verify bool) {
	if !s.on {
		return
	}
	if s.head != nil {
		s.head = append(s.head, headRow{line: line, id: caseID, item: append([]byte(nil), item...), lab: lab, verify: verify})
		s.headSize += len(item)
		if len(s.head) >= headRows || s.headSize >= headBytes {
			s.endHead()
		}
		return
	}
	s.add(line, caseID, item, lab, verify)
}

// endHead learns the context texts from the rows held so far, then adds
// them.
func (s *Screen) endHead() {
	head := s.head
	s.head = nil
	type key = [2]uint64 // path tag, text
	rowsWith := map[key]map[uint64]int{}
	var inRow []key
	var whole uint64
	s.ext.all, s.ext.exactOnly = true, true
	s.ext.onLeaf = func(l *leaf, _ []pathStep) {
		whole += l.exact
		if l.words >= minTextWords {
			inRow = append(inRow, key{l.tag, l.text})
		}
	}
	for _, r := range head {
		inRow, whole = inRow[:0], 0
		s.ext.item(r.item)
		slices.SortFunc(inRow, func(a, b key) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
		for _, k := range slices.Compact(inRow) {
			if rowsWith[k] == nil {
				rowsWith[k] = map[uint64]int{}
			}
			rowsWith[k][whole]++
		}
	}
	for k, wholes := range rowsWith {
		n := 0
		for _, c := range wholes {
			n += c
		}
		if n >= contextMinRows && n*contextShare >= len(head) && len(wholes)*2 >= n {
			if s.ext.boiler == nil {
				s.ext.boiler, s.ext.boilerRaw = map[key]bool{}, map[uint64]bool{}
				s.ext.rawSeed = maphash.MakeSeed()
			}
			s.ext.boiler[k] = true
		}
	}
	s.ext.all, s.ext.exactOnly = false, false
	s.ext.onLeaf = nil
	for _, r := range head {
		s.add(r.line, r.id, r.item, r.lab, r.verify)
	}
}

// add stores what the end of the screen needs of one row.
func (s *Screen) add(line int, caseID string, item []byte, lab rowLabel, verify bool) {
	r := s.rows.push()
	r.line = uint32(line)
	r.id = uint32(maphash.String(s.idSeed, caseID))
	if verify {
		r.item = s.itemHash(item)
	}
	r.lab = lab
}

// itemHash is the identity of an item's bytes: never 0, which stands for
// a row whose item is not told again.
func (s *Screen) itemHash(item []byte) uint32 {
	return uint32(maphash.Bytes(s.idSeed, item)) | 1
}

// unknownFields warns about near_duplicates.fields entries that no item
// has.
func (s *Screen) unknownFields() []manifest.Finding {
	var out []manifest.Finding
	for k, name := range s.fields {
		if !s.ext.seen[k] {
			out = append(out, manifest.Finding{
				Code: CodeUnknownField, Severity: manifest.SeverityWarn,
				File: s.m.File, Line: s.m.Line("dataset.near_duplicates.fields"),
				Message: fmt.Sprintf("dataset.near_duplicates.fields names %q, which no item has", name),
			})
		}
	}
	return out
}
