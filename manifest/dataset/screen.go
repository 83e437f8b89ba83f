package dataset

import (
	"encoding/json"
	"io/fs"

	"github.com/gradegate/gradegate/manifest"
)

// nearScreen is the one place the reader calls the near-duplicate screen:
// add once per row, finish once every row is read, findings at the end.
//
// The screen works in a goroutine of its own, fed batches of rows, so its
// signatures are computed on a second core while the reader parses and
// joins the next rows: on a suite with long text fields the screen is
// about a fifth of a pass over the dataset.
type nearScreen struct {
	*Screen
	batch []screenRow
	rows  chan []screenRow // nil when the screen is off
	done  chan struct{}
	// reasonHash is the identity of a stated reason.
	reasonHash func([]byte) uint32
}

type screenRow struct {
	line int
	id   string
	item json.RawMessage // the row's own copy, never written again
	lab  rowLabel
}

// screenBatch is how many rows go to the screen's goroutine at once;
// screenAhead batches may wait for it.
const (
	screenBatch = 256
	screenAhead = 8
)

func newNearScreen(r *Reader, fsys fs.FS) *nearScreen {
	// r.labels is made before the screen.
	s := &nearScreen{Screen: NewScreen(ScreenConfig{Manifest: r.m, FS: fsys, File: r.file, Hidden: r.m.Dataset.HiddenFields}),
		reasonHash: r.labels.reasonHash}
	if !s.on {
		return s
	}
	s.rows, s.done = make(chan []screenRow, screenAhead), make(chan struct{})
	go func() {
		defer close(s.done)
		for batch := range s.rows {
			for _, r := range batch {
				s.addLabeled(r.line, r.id, r.item, r.lab)
			}
		}
	}()
	return s
}

func (s *nearScreen) add(c *caseRow) {
	if s.rows == nil {
		return
	}
	if s.batch == nil {
		s.batch = make([]screenRow, 0, screenBatch)
	}
	lab := rowLabel{label: -1}
	if c.Label != nil {
		lab = rowLabel{label: int8(*c.Label), reason: s.reasonHash(c.reasonRaw)}
	}
	s.batch = append(s.batch, screenRow{line: c.Line, id: c.ID, item: c.Item, lab: lab})
	if len(s.batch) == screenBatch {
		s.rows <- s.batch
		s.batch = nil
	}
}

// finish hands over the last rows and waits until the screen has taken
// every one. It may be called more than once.
func (s *nearScreen) finish() {
	if s.rows == nil {
		return
	}
	if len(s.batch) > 0 {
		s.rows <- s.batch
		s.batch = nil
	}
	close(s.rows)
	<-s.done
	s.rows = nil
}

func (s *nearScreen) findings() ([]manifest.Finding, error) {
	s.finish()
	return s.Findings()
}
