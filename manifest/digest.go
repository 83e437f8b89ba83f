package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/gradegate/gradegate/manifest/input"
)

// digestPrefix may precede a digest in the manifest, as in OCI references.
const digestPrefix = "sha256:"

// Digest returns the lowercase hex SHA-256 of everything r yields.
func Digest(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", fmt.Errorf("digest: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// DigestFile returns the lowercase hex SHA-256 of a file's bytes, read as a
// file of kind k through the input package. A file that
// cannot be read is an *Error naming it.
func DigestFile(fsys fs.FS, name string, k input.Kind, limit int64) (string, error) {
	f, err := input.Open(fsys, name, k, limit)
	if err != nil {
		return "", ReadError(name, 0, "", "cannot read", err)
	}
	defer f.Close()
	sum, err := Digest(f)
	if err != nil {
		return "", &Error{File: name, Msg: "cannot read: " + err.Error(), Err: err}
	}
	return sum, nil
}

// NormalizeDigest strips the optional "sha256:" prefix, so digests written
// either way compare equal.
func NormalizeDigest(s string) string {
	return strings.TrimPrefix(s, digestPrefix)
}

// ValidDigest reports whether s is 64 lowercase hex digits, optionally
// prefixed "sha256:".
func ValidDigest(s string) bool {
	s = NormalizeDigest(s)
	if len(s) != 2*sha256.Size {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
