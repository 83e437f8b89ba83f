package main

import (
	"io/fs"
	"os"
	"path/filepath"
)

// hostFS opens paths exactly as the user wrote them: relative to the working
// directory, absolute, or climbing with "..". os.DirFS would refuse the last
// two, and a manifest in evals/x may well point at ../shared/cases.jsonl.
// Messages then name files the way the user knows them.
type hostFS struct{}

func (hostFS) Open(name string) (fs.File, error) { return os.Open(filepath.FromSlash(name)) }
