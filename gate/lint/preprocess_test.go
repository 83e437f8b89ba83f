package lint

import (
	"context"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/manifest"
)

func TestPreprocessSignature(t *testing.T) {
	py := needPython(t)
	row := &manifest.Preprocess{Contract: manifest.PreprocessRow}
	batch := &manifest.Preprocess{Contract: manifest.PreprocessBatch}
	for _, tc := range []struct {
		name   string
		source string
		pre    *manifest.Preprocess
		line   int
		msg    string // "" for no finding
	}{
		{"row", "def transform(row):\n    return row\n", row, 0, ""},
		{"batch", "def transform_batch(rows):\n    return rows\n", batch, 0, ""},
		{"defaults after the row", "def transform(row, strip=True):\n    return row\n", row, 0, ""},
		{"varargs", "def transform(*args):\n    return args[0]\n", row, 0, ""},
		{"imported", "from cleaners import transform\n", row, 0, ""},
		{"misspelt", "def transfrom(row):\n    return row\n", row, 0, "defines no transform(row) function"},
		{"the other contract's", "def transform(row):\n    return row\n", batch, 0, "defines no transform_batch(rows) function"},
		{"two parameters", "\ndef transform(row, item):\n    return row\n", row, 2, "transform(row, item) must be a plain function taking one positional parameter"},
		{"none", "def transform():\n    return {}\n", row, 1, "transform() must be"},
		{"async", "async def transform(row):\n    return row\n", row, 1, "must be a plain function"},
		{"syntax", "def transform(row)\n    return row\n", row, 1, "does not parse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Preprocess(context.Background(), py, []byte(tc.source), "evals/x/preprocess.py", tc.pre)
			if err != nil {
				t.Fatal(err)
			}
			if tc.msg == "" {
				if len(got) != 0 {
					t.Fatalf("findings %+v, want none", got)
				}
				return
			}
			if len(got) != 1 || got[0].Code != CodePreprocessSignature || got[0].Severity != manifest.SeverityHold ||
				got[0].Line != tc.line || got[0].File != "evals/x/preprocess.py" || !strings.Contains(got[0].Message, tc.msg) {
				t.Fatalf("findings %+v, want one hold preprocess_signature at line %d saying %q", got, tc.line, tc.msg)
			}
		})
	}
}
