package manifest

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/gradegate/gradegate/manifest/input"
)

func TestDigest(t *testing.T) {
	// sha256 of "abc", FIPS 180-2 appendix B.1.
	const abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	got, err := Digest(strings.NewReader("abc"))
	if err != nil || got != abc {
		t.Errorf("Digest(abc) = %q, %v; want %q", got, err, abc)
	}
	fsys := fstest.MapFS{"d/cases.jsonl": {Data: []byte("abc")}}
	if got, err := DigestFile(fsys, "d/cases.jsonl", input.Dataset, 0); err != nil || got != abc {
		t.Errorf("DigestFile = %q, %v; want %q", got, err, abc)
	}
	_, err = DigestFile(fsys, "d/missing.jsonl", input.Dataset, 0)
	if !errors.Is(err, ErrInput) || !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "d/missing.jsonl: ") {
		t.Errorf("DigestFile(missing) = %v; want an input error naming the file", err)
	}
}

func TestValidDigest(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"hex", hexA, true},
		{"prefixed", "sha256:" + hexA, true},
		{"uppercase", strings.ToUpper(hexA), false},
		{"short", hexA[:63], false},
		{"long", hexA + "0", false},
		{"other algorithm", "sha512:" + hexA, false},
		{"not hex", strings.Replace(hexA, "9", "g", 1), false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ValidDigest(tt.in); got != tt.want {
				t.Errorf("ValidDigest(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
	if got := NormalizeDigest("sha256:" + hexA); got != hexA {
		t.Errorf("NormalizeDigest = %q", got)
	}
}
