package input

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Host is the machine's file system with paths as the user wrote them:
// relative to the working directory, absolute, or climbing with "..", which
// os.DirFS would refuse (a manifest in evals/x may well point at
// ../shared/cases.jsonl). It opens without blocking, so a FIFO that slipped
// past Stat cannot hang the read, and implements fs.StatFS, so Open checks a
// file's type without opening it.
type Host struct{}

// Open opens name for reading with O_NONBLOCK, which changes nothing for a
// regular file and keeps the open of a FIFO from waiting for a writer.
func (Host) Open(name string) (fs.File, error) {
	return os.OpenFile(filepath.FromSlash(name), os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// Stat follows symlinks, so a link is judged by what it points at.
func (Host) Stat(name string) (fs.FileInfo, error) {
	return os.Stat(filepath.FromSlash(name))
}
