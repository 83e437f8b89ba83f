//go:build linux

package worker

import (
	"os"
	"syscall"
)

// fillStamp adds what only the system's stat has: the file's identity and
// its change time, which moves on every write, chmod and rename.
func fillStamp(s *fileStamp, fi os.FileInfo) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	s.Dev, s.Ino = uint64(st.Dev), uint64(st.Ino)
	s.Ctime = st.Ctim.Sec*1e9 + st.Ctim.Nsec
}

// openNoFollow opens path for reading, failing when its last element is a
// symbolic link.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
}

// ownedByUser reports whether the file belongs to the effective user.
func ownedByUser(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
