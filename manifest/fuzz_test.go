package manifest

import (
	"errors"
	"os"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the manifest decoder. Whatever the
// input, Parse returns a manifest or input errors, never panics, and bounds
// what aliases may expand to (the seed corpus holds alias bombs).
func FuzzParse(f *testing.F) {
	f.Add([]byte(minimal))
	f.Add([]byte(aliasBomb(3, 3)))
	f.Add([]byte(aliasBomb(9, 9)))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("version: 1\nname: \"\\u202e\\n::error::x\"\n"))
	if b, err := os.ReadFile("../testdata/examples/order-summary/gradegate.yaml"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data, "gradegate.yaml")
		if err != nil {
			if !errors.Is(err, ErrInput) {
				t.Fatalf("Parse error is not an input error: %v", err)
			}
			return
		}
		if m == nil {
			t.Fatal("Parse returned neither a manifest nor an error")
		}
	})
}
