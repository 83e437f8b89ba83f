package jsonschema

import (
	"os"
	"testing"
)

// compiledAtStart says whether a draft's meta-schema was compiled once the
// package had initialised, before any test ran (TestMain runs after every
// init function of the package and before the tests, whatever their order).
var compiledAtStart bool

func TestMain(m *testing.M) {
	compiledAtStart = Draft4.sch != nil || Draft6.sch != nil || Draft7.sch != nil || Draft2019.sch != nil || Draft2020.sch != nil
	os.Exit(m.Run())
}

// TestDraftsCompileLazily: no draft's meta-schema is compiled before the
// first Compile (the change this copy makes to upstream), and after it each
// is, so that schemas are still validated against their draft.
func TestDraftsCompileLazily(t *testing.T) {
	if compiledAtStart {
		t.Fatal("a draft's meta-schema was compiled by the package's initialisation: it compiles meta-schemas again before any Compile")
	}
	drafts := []*Draft{Draft4, Draft6, Draft7, Draft2019, Draft2020}
	c := NewCompiler()
	if err := c.AddResource("file:///s.json", map[string]any{"type": "integer"}); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("file:///s.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range drafts {
		if d.sch == nil {
			t.Errorf("%s is not compiled after the first Compile", d)
		}
		for name, v := range d.allVocabs {
			if v == nil {
				t.Errorf("%s: vocabulary %s is not compiled after the first Compile", d, name)
			}
		}
	}
	if err := sch.Validate(1.5); err == nil {
		t.Error("1.5 validated against {type: integer}")
	}
	// A schema that breaks its draft's meta-schema is still refused.
	c = NewCompiler()
	if err := c.AddResource("file:///bad.json", map[string]any{"type": 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compile("file:///bad.json"); err == nil {
		t.Error(`{"type": 3} compiled: it is not a valid schema under the meta-schema`)
	}
}
