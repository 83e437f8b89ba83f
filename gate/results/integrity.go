package results

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"

	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// Integrity is what a results file records about its own case rows, so
// that merge can refuse a file whose rows were edited after the run wrote
// them: the digest of the rows, in file order, each as compact JSON and a
// newline, and how many there are.
//
// It protects against rows changed on their own (a failing row rewritten as
// a pass, a row dropped); it does not protect against a party who can
// rewrite the whole artifact, who can write a matching digest too. Signed
// artifact attestations are the answer to that.
type Integrity struct {
	Rows       int    `json:"rows"`
	RowsSHA256 string `json:"rows_sha256"`
	// Run names the CI run that wrote the file (GitHub Actions: repository
	// and run id); "" outside one. Shards of different runs are
	// not merged.
	Run string `json:"run,omitempty"`
}

// rowDigest folds case rows into an Integrity.
type rowDigest struct {
	h   hash.Hash
	n   int
	buf []byte
}

func newRowDigest() *rowDigest { return &rowDigest{h: sha256.New()} }

// add folds one row, given as any JSON form of it (indented or not). The
// row must be valid JSON, as every caller's is (an encoder's output, a
// decoder's raw value): add takes out the whitespace between tokens without
// checking the rest, which json.Compact would (at 1,000,000 rows that check
// was most of the spool's CPU).
func (d *rowDigest) add(row []byte) error {
	d.buf = dataset.CompactValid(d.buf[:0], row)
	d.buf = append(d.buf, '\n')
	d.h.Write(d.buf)
	d.n++
	return nil
}

// withRun is sum with the run identity res records.
func withRun(sum *Integrity, res *Results) *Integrity {
	if res.Integrity != nil {
		sum.Run = res.Integrity.Run
	}
	return sum
}

func (d *rowDigest) integrity() *Integrity {
	return &Integrity{Rows: d.n, RowsSHA256: "sha256:" + hex.EncodeToString(d.h.Sum(nil))}
}

// rowsIntegrity is the Integrity of rows.
func rowsIntegrity(rows []CaseResult) (*Integrity, error) {
	d := newRowDigest()
	for i := range rows {
		b, err := rows[i].MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("case row digest: %w", err)
		}
		if err := d.add(b); err != nil {
			return nil, err
		}
	}
	return d.integrity(), nil
}

// CheckIntegrity compares the rows a CaseReader read from file with the
// Integrity its header records. A file without the record is refused too:
// deleting it must not be a way past the check.
func CheckIntegrity(file string, head *Results, read *Integrity) error {
	want := head.Integrity
	switch {
	case want == nil:
		return &manifest.Error{File: file, Key: "integrity", Msg: "the results file records no integrity (integrity.rows_sha256), so its case rows cannot be checked; write it with this version of gradegate"}
	case read == nil:
		return &manifest.Error{File: file, Key: "integrity", Msg: "the case rows were not read to the end"}
	case want.Rows != read.Rows || want.RowsSHA256 != read.RowsSHA256:
		return &manifest.Error{File: file, Key: "integrity", Msg: fmt.Sprintf("the case rows do not match the digest the run recorded (%d rows %s; the file holds %d rows %s): they were changed after the run wrote them", want.Rows, want.RowsSHA256, read.Rows, read.RowsSHA256)}
	}
	return nil
}
