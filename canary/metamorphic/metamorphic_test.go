package metamorphic

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gradegate/gradegate/manifest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func all(string) bool { return true }

// TestTransformsMatchManifest: every name the manifest accepts has one
// transform here, in the same order.
func TestTransformsMatchManifest(t *testing.T) {
	var names []string
	for _, tr := range Transforms() {
		names = append(names, tr.Name)
		if tr.Doc == "" || tr.Relation == "" {
			t.Errorf("%s: no doc or relation", tr.Name)
		}
	}
	if diff := cmp.Diff(manifest.MetamorphicTransforms(), names); diff != "" {
		t.Errorf("transform names differ from the manifest's (-manifest +here):\n%s", diff)
	}
}

// TestDeriveGolden writes every variant of a few bases, one a line, so a
// change to a transform shows as a diff.
func TestDeriveGolden(t *testing.T) {
	tests := []struct {
		name string
		base Base
	}{
		{"json-positive", Base{
			Polarity: Positive,
			Sample:   json.RawMessage(`{"output_text": "{ \"total_cents\": 2599, \"currency\": \"USD\", \"status\": \"approved\" }"}`),
			Item:     json.RawMessage(`{"expected_status":"approved","expected_currency":"USD","expected_total_cents":2599}`),
			Reads:    []string{"expected_status", "expected_currency", "expected_status", "expected_total_cents"},
		}},
		{"json-negative", Base{
			Polarity:  Negative,
			Sample:    json.RawMessage(`{"output_text":"{\"status\":\"approved\",\"currency\":\"EUR\",\"total_cents\":2599}"}`),
			Item:      json.RawMessage(`{"expected_currency":"USD"}`),
			Reference: `{"status":"approved","currency":"USD","total_cents":2599}`,
		}},
		{"text-positive", Base{
			Polarity: Positive,
			Sample:   json.RawMessage(`{"output_text":"Items can be returned within 30 days."}`),
			Item:     json.RawMessage(`{"question":"How long?","reference":"30 days"}`),
			Reads:    []string{"question", "reference"},
		}},
		{"text-negative", Base{
			Polarity:  Negative,
			Sample:    json.RawMessage(`{"output_text":"Within 12 months."}`),
			Item:      json.RawMessage(`{"question":"How long?","reference":"30 days"}`),
			Reference: "30 days",
		}},
		{"output-json-positive", Base{
			Polarity: Positive,
			Sample:   json.RawMessage(`{"output_json":{"a":1,"b":{"c":"ü"}},"model":"m"}`),
			Item:     json.RawMessage(`{}`),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			for _, v := range Derive(tt.base, all) {
				fmt.Fprintf(&b, "%s %s site=%q\n  sample %s\n  item   %s\n", v.Relation, v.Transform, v.Site, v.Sample, v.Item)
				if !json.Valid(v.Sample) || !json.Valid(v.Item) {
					t.Errorf("%s: a variant that is not JSON", v.Transform)
				}
			}
			golden := filepath.Join("testdata", tt.name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), b.String()); diff != "" {
				t.Errorf("variants differ from %s (-want +got):\n%s", golden, diff)
			}
		})
	}
}

// TestInvariantVariantsMeanTheSame: every invariant variant of a JSON answer
// decodes to the same value as the original.
func TestInvariantVariantsMeanTheSame(t *testing.T) {
	texts := []string{
		`{"b": [1, 2.5, {"z": null, "a": true}], "a": "x\"y<>&é😀"}`,
		`[{"k": "v"}, 3]`,
		"{\"nested\": {\"deep\": {\"x\": -1e3}}}\n",
	}
	for _, text := range texts {
		sample, _ := json.Marshal(map[string]string{"output_text": text})
		var want any
		if err := json.Unmarshal([]byte(text), &want); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, v := range Derive(Base{Polarity: Positive, Sample: sample}, all) {
			if v.Relation != Invariant {
				continue
			}
			n++
			var s struct {
				OutputText string `json:"output_text"`
			}
			if err := json.Unmarshal(v.Sample, &s); err != nil {
				t.Fatal(err)
			}
			var got any
			if err := json.Unmarshal([]byte(s.OutputText), &got); err != nil {
				t.Fatalf("%s: %v: %s", v.Transform, err, s.OutputText)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s changed the meaning of %s:\n%s", v.Transform, text, diff)
			}
			if s.OutputText == text {
				t.Errorf("%s: the variant equals the original", v.Transform)
			}
		}
		if n < 4 {
			t.Errorf("%s: %d invariant variants, want at least 4", text, n)
		}
	}
}

// TestBreakingVariantsBreak: no truncated or unbalanced variant is JSON, and
// every per-site variant changes the answer.
func TestBreakingVariantsBreak(t *testing.T) {
	sample := json.RawMessage(`{"output_text":"{\"a\":1,\"b\":[2,3]}"}`)
	for _, v := range Derive(Base{Polarity: Positive, Sample: sample}, all) {
		var s struct {
			OutputText string `json:"output_text"`
		}
		if err := json.Unmarshal(v.Sample, &s); err != nil {
			t.Fatal(err)
		}
		switch v.Transform {
		case manifest.TransformTruncated, manifest.TransformUnbalanced:
			if json.Valid([]byte(s.OutputText)) {
				t.Errorf("%s is still JSON: %s", v.Transform, s.OutputText)
			}
		case manifest.TransformNumberAsString, manifest.TransformNumberAsBool, manifest.TransformKeyDropped, manifest.TransformScalarAsObject:
			if s.OutputText == `{"a":1,"b":[2,3]}` {
				t.Errorf("%s at %s did not change the answer", v.Transform, v.Site)
			}
		}
	}
}

func TestDeriveRespectsSwitchesAndCaps(t *testing.T) {
	// Twenty numbers: each per-site transform stops at its cap, the base at
	// MaxPerBase.
	nums := make([]string, 20)
	for i := range nums {
		nums[i] = fmt.Sprint(i + 1)
	}
	text := "[" + strings.Join(nums, ",") + "]"
	sample, _ := json.Marshal(map[string]string{"output_text": text})
	vs := Derive(Base{Polarity: Positive, Sample: sample}, all)
	if len(vs) > MaxPerBase {
		t.Errorf("%d variants, want at most %d", len(vs), MaxPerBase)
	}
	per := map[string]int{}
	for _, v := range vs {
		per[v.Transform]++
	}
	for name, n := range per {
		if n > MaxSitesPerTransform {
			t.Errorf("%s: %d variants, want at most %d", name, n, MaxSitesPerTransform)
		}
	}
	off := func(name string) bool { return name != manifest.TransformRefusal }
	for _, v := range Derive(Base{Polarity: Positive, Sample: sample}, off) {
		if v.Transform == manifest.TransformRefusal {
			t.Error("a switched-off transform produced a variant")
		}
	}
	// A sample that is not an object yields nothing.
	if vs := Derive(Base{Polarity: Positive, Sample: json.RawMessage(`"x"`)}, all); len(vs) != 0 {
		t.Errorf("got %d variants of a non-object sample", len(vs))
	}
}

func TestRelationsByPolarity(t *testing.T) {
	sample := json.RawMessage(`{"output_text":"{\"a\":1}"}`)
	item := json.RawMessage(`{"k":1}`)
	rels := func(p Polarity) []Relation {
		var out []Relation
		for _, v := range Derive(Base{Polarity: p, Sample: sample, Item: item, Reads: []string{"k"}, Reference: "r"}, all) {
			if !slices.Contains(out, v.Relation) {
				out = append(out, v.Relation)
			}
		}
		return out
	}
	if diff := cmp.Diff([]Relation{Invariant, Breaking, FixtureBreaking}, rels(Positive)); diff != "" {
		t.Errorf("positive:\n%s", diff)
	}
	if diff := cmp.Diff([]Relation{Invariant, StillFailing}, rels(Negative)); diff != "" {
		t.Errorf("negative:\n%s", diff)
	}
}

func TestCheck(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	ok := func(v float64) Outcome { return Outcome{Class: "ok", Score: f(v)} }
	raised := Outcome{Class: "grader_exception"}
	tests := []struct {
		name      string
		rel       Relation
		tolerance float64
		base, v   Outcome
		want      bool
	}{
		{"invariant same", Invariant, 0, ok(1), ok(1), true},
		{"invariant differs", Invariant, 0, ok(1), ok(0), false},
		{"invariant within tolerance", Invariant, 0.5, ok(1), ok(0.6), true},
		{"invariant raised", Invariant, 0, ok(1), raised, false},
		{"invariant of an error base shows nothing", Invariant, 0, raised, ok(0), true},
		{"breaking fails", Breaking, 0, ok(1), ok(0), true},
		{"breaking raises", Breaking, 0, ok(1), raised, true},
		{"breaking passes", Breaking, 0, ok(1), ok(1), false},
		{"fixture passes", FixtureBreaking, 0, ok(1), ok(1), false},
		{"still failing passes", StillFailing, 0, ok(0), ok(1), false},
		{"still failing stays", StillFailing, 0, ok(0), ok(0.5), true},
		{"invalid return is not a pass", Breaking, 0, ok(1), Outcome{Class: "invalid_return"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := Check(tt.rel, 1, tt.tolerance, tt.base, tt.v)
			if got != tt.want {
				t.Errorf("Check = %v (%s), want %v", got, msg, tt.want)
			}
			if !got && msg == "" {
				t.Error("a violation without a message")
			}
		})
	}
}
