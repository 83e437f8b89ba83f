package dataset

import (
	"io/fs"

	"github.com/gradegate/gradegate/manifest"
)

// nearScreen is the one place the reader calls the near-duplicate screen:
// add once per row, findings once at the end.
type nearScreen struct{ *Screen }

func newNearScreen(r *Reader, fsys fs.FS) *nearScreen {
	return &nearScreen{NewScreen(ScreenConfig{Manifest: r.m, FS: fsys, File: r.file, Hidden: r.m.Dataset.HiddenFields})}
}

func (s *nearScreen) add(c *caseRow) { s.Add(c.Line, c.ID, c.Item) }

func (s *nearScreen) findings() ([]manifest.Finding, error) { return s.Findings() }
