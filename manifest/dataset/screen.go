package dataset

import (
	"io/fs"

	"github.com/gradegate/gradegate/manifest"
)

// nearScreen is the one place the reader calls the near-duplicate screen:
// add once per row, finish once every row is read, findings at the end.
//
// During the pass the screen only records each row (its line, the hashes
// of its id and item, its label): its texts are read, hashed and signed in
// the end phase, on every core.
type nearScreen struct {
	*Screen
	// reasonHash is the identity of a stated reason.
	reasonHash func([]byte) uint32
}

func newNearScreen(r *Reader, fsys fs.FS) *nearScreen {
	// r.labels is made before the screen.
	return &nearScreen{Screen: NewScreen(ScreenConfig{Manifest: r.m, FS: fsys, File: r.file, Hidden: r.m.Dataset.HiddenFields}),
		reasonHash: r.labels.reasonHash}
}

func (s *nearScreen) add(c *caseRow) {
	if !s.on {
		return
	}
	lab := rowLabel{label: -1}
	if c.Label != nil {
		lab = rowLabel{label: int8(*c.Label), reason: s.reasonHash(c.reasonRaw)}
	}
	s.addLabeled(c.Line, c.ID, c.Item, lab, !c.Unreadable)
}

func (s *nearScreen) findings() ([]manifest.Finding, error) {
	return s.Findings()
}
