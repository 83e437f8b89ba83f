package dataset

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	pathpkg "path"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gradegate/gradegate/manifest"
)

// The example suite lives at the module root; these tests read it through
// os.DirFS so that paths stay as the manifest writes them.
const (
	repoRoot   = "../.."
	exampleDir = "testdata/examples/order-summary"
	brokenDir  = "testdata/examples/broken"
)

// brokenGraders lists the deliberately broken graders and the canaries each
// must fail (so that the gate holds with canary_failed).
func brokenGraders() map[string][]string {
	return map[string][]string{
		"except-return-one": {"malformed-output", "no-output-text", "corrupt-fixture", "boolean-total-fixture", "blank-currency-fixture", "blank-status-fixture"},
		"constant": {"boolean-total-one-cent", "wrong-currency", "extra-key", "malformed-output", "no-output-text", "json-array-output",
			"corrupt-fixture", "boolean-total-fixture", "blank-currency-fixture", "blank-status-fixture"},
		"item-only": {"boolean-total-one-cent", "wrong-currency", "extra-key", "malformed-output", "no-output-text", "json-array-output",
			"boolean-total-fixture", "blank-currency-fixture", "blank-status-fixture"},
		"isinstance": {"boolean-total-one-cent"},
		"returns-bool": {"equivalent-serialization", "boolean-total-one-cent", "wrong-currency", "extra-key", "malformed-output",
			"no-output-text", "json-array-output", "boolean-total-fixture", "blank-currency-fixture", "blank-status-fixture"},
	}
}

// exampleManifest is testdata/examples/order-summary/gradegate.yaml as
// manifest.Parse would return it, for a suite in dir (the example's folder or
// a broken grader's, whose paths point back at the example).
func exampleManifest(dir, prefix string) *manifest.Manifest {
	m := testManifest(dir)
	m.Name = "order-summary"
	m.Dataset.Path = prefix + "cases.jsonl"
	m.Dataset.Schema = prefix + "item.schema.json"
	m.Dataset.IntendedCases = 36
	m.Dataset.NearDuplicates.Fields = []string{"request"}
	m.Samples = &manifest.FileRef{Path: prefix + "samples.jsonl"}
	m.Rubric = &manifest.Rubric{Version: "order-rubric-2", Path: prefix + "rubric.md"}
	m.Gate = manifest.Gate{
		MinPassRate: 0.85,
		Aggregation: "row",
		Slices: []manifest.SliceRule{
			{Name: "ineligible_shipped", Mandatory: true, MinPassRate: 0.85, MinCases: 3},
			{Name: "instruction_conflict", Mandatory: true, MinPassRate: 0.85},
			{Name: "happy_path", MinPassRate: 0.8},
			{Name: "currency_edge", MinPassRate: 0.8},
			{Name: "tone", MinPassRate: 0.8, WarnOnly: true},
		},
		RequireControls: true,
	}
	return m
}

// labelCounts counts cases and human labels.
type labelCounts struct{ Cases, Pos, Neg int }

func TestExampleSuiteShape(t *testing.T) {
	fsys := os.DirFS(repoRoot)
	set, err := Load(fsys, exampleManifest(exampleDir, ""))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if len(set.Findings) != 0 {
		t.Errorf("the example has findings, want none: %+v", set.Findings)
	}
	if len(set.Cases) != 36 || set.Intended != 36 {
		t.Errorf("got %d cases, %d intended; want 36 and 36", len(set.Cases), set.Intended)
	}

	// Human labels agree with the strict grader (TestExampleGraders checks
	// that), so positives are the cases that pass and negatives those that
	// fail: every slice has failures, yet the suite passes.
	got := map[string]labelCounts{}
	for _, c := range set.Cases {
		if c.Sample == nil {
			t.Errorf("case %s has no sample", c.ID)
		}
		if c.Label == nil {
			t.Errorf("case %s has no human_score", c.ID)
			continue
		}
		for _, s := range append([]string{"(overall)"}, c.Slices...) {
			n := got[s]
			n.Cases++
			if *c.Label == 1 {
				n.Pos++
			} else {
				n.Neg++
			}
			got[s] = n
		}
	}
	want := map[string]labelCounts{
		"(overall)":            {36, 31, 5},
		"ineligible_shipped":   {8, 7, 1},
		"instruction_conflict": {7, 6, 1},
		"happy_path":           {10, 9, 1},
		"currency_edge":        {7, 6, 1},
		"tone":                 {5, 4, 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cases and labels per slice (-want +got):\n%s", diff)
	}
	m := exampleManifest(exampleDir, "")
	rules := append([]manifest.SliceRule{{Name: "(overall)", MinPassRate: m.Gate.MinPassRate}}, m.Gate.Slices...)
	for _, r := range rules {
		n := got[r.Name]
		if rate := float64(n.Pos) / float64(n.Cases); rate < r.MinPassRate {
			t.Errorf("slice %s: expected pass rate %.4f is below its minimum %.2f", r.Name, rate, r.MinPassRate)
		}
		if n.Cases < r.MinCases {
			t.Errorf("slice %s: %d cases, fewer than min_cases %d", r.Name, n.Cases, r.MinCases)
		}
		if r.Mandatory && (n.Pos == 0 || n.Neg == 0) {
			t.Errorf("mandatory slice %s lacks a label polarity: %+v", r.Name, n)
		}
	}

	// Each broken grader's manifest reaches the same dataset through
	// ../../order-summary/.
	for name := range brokenGraders() {
		b, err := Load(fsys, exampleManifest(pathpkg.Join(brokenDir, name), "../../order-summary/"))
		if err != nil {
			t.Errorf("broken/%s: %v", name, err)
			continue
		}
		if len(b.Cases) != len(set.Cases) || len(b.Findings) != 0 {
			t.Errorf("broken/%s: %d cases and findings %+v; want the example's", name, len(b.Cases), b.Findings)
		}
	}
}

func fileDigest(t *testing.T, fsys fs.FS, name string) string {
	t.Helper()
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// TestExampleManifests checks that the manifests pin the files' real digests
// and that each broken grader's manifest is the example's but for the grader
// digest and the paths back to the example.
func TestExampleManifests(t *testing.T) {
	fsys := os.DirFS(repoRoot)
	example, err := fs.ReadFile(fsys, exampleDir+"/gradegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pinned := func(yaml []byte, digest string) bool {
		return bytes.Contains(yaml, []byte(`sha256: "`+digest+`"`))
	}
	graderSum := fileDigest(t, fsys, exampleDir+"/grader.py")
	for _, f := range []string{"cases.jsonl", "samples.jsonl", "rubric.md", "grader.py"} {
		if sum := fileDigest(t, fsys, exampleDir+"/"+f); !pinned(example, sum) {
			t.Errorf("order-summary/gradegate.yaml does not pin %s at sha256 %s", f, sum)
		}
	}
	// The comment block above "version:" is free to differ.
	body := func(yaml []byte) string {
		_, after, _ := strings.Cut(string(yaml), "\nversion:")
		return after
	}
	for name := range brokenGraders() {
		dir := pathpkg.Join(brokenDir, name)
		yaml, err := fs.ReadFile(fsys, dir+"/gradegate.yaml")
		if err != nil {
			t.Error(err)
			continue
		}
		sum := fileDigest(t, fsys, dir+"/grader.py")
		if !pinned(yaml, sum) {
			t.Errorf("broken/%s/gradegate.yaml does not pin its grader.py at sha256 %s", name, sum)
		}
		normal := strings.ReplaceAll(body(yaml), "../../order-summary/", "")
		normal = strings.Replace(normal, sum, graderSum, 1)
		if diff := cmp.Diff(body(example), normal); diff != "" {
			t.Errorf("broken/%s/gradegate.yaml differs from the example beyond paths and the grader digest (-example +broken):\n%s", name, diff)
		}
	}
}

// exampleCanary mirrors one canary of the example's gradegate.yaml.
type exampleCanary struct {
	name         string
	sample, item string // JSON
	expect       float64
	expectError  bool
}

func exampleCanaries() []exampleCanary {
	const item = `{"expected_status": "approved", "expected_currency": "USD", "expected_total_cents": 2599}`
	return []exampleCanary{
		{"equivalent-serialization", `{"output_text": "{ \"total_cents\": 2599, \"currency\": \"USD\", \"status\": \"approved\" }"}`, item, 1, false},
		{"boolean-total-one-cent", `{"output_text": "{\"status\":\"approved\",\"currency\":\"USD\",\"total_cents\":true}"}`,
			`{"expected_status": "approved", "expected_currency": "USD", "expected_total_cents": 1}`, 0, false},
		{"wrong-currency", `{"output_text": "{\"status\":\"approved\",\"currency\":\"EUR\",\"total_cents\":2599}"}`, item, 0, false},
		{"extra-key", `{"output_text": "{\"status\":\"approved\",\"currency\":\"USD\",\"total_cents\":2599,\"note\":\"thanks!\"}"}`, item, 0, false},
		{"malformed-output", `{"output_text": "{\"status\":"}`, item, 0, false},
		{"no-output-text", `{"output_tools": []}`, item, 0, false},
		{"json-array-output", `{"output_text": "[2599, \"USD\", \"approved\"]"}`, item, 0, false},
		{"corrupt-fixture", `{"output_text": "{\"status\":\"approved\",\"currency\":\"USD\",\"total_cents\":2599}"}`,
			`{"expected_status": "approved", "expected_currency": "USD"}`, 0, true},
		{"boolean-total-fixture", `{"output_text": "{\"status\":\"approved\",\"currency\":\"USD\",\"total_cents\":1}"}`,
			`{"expected_status": "approved", "expected_currency": "USD", "expected_total_cents": true}`, 0, true},
		{"blank-currency-fixture", `{"output_text": "{\"status\":\"approved\",\"currency\":\"\",\"total_cents\":2599}"}`,
			`{"expected_status": "approved", "expected_currency": "", "expected_total_cents": 2599}`, 0, true},
		{"blank-status-fixture", `{"output_text": "{\"status\":\"\",\"currency\":\"USD\",\"total_cents\":2599}"}`,
			`{"expected_status": "", "expected_currency": "USD", "expected_total_cents": 2599}`, 0, true},
	}
}

// pyOutcome is one line of testdata/grade_calls.py's output.
type pyOutcome struct {
	Class string   `json:"class"`
	Score *float64 `json:"score"`
	Error *string  `json:"error"`
}

type pyCall struct {
	Grader string          `json:"grader"`
	Sample json.RawMessage `json:"sample"`
	Item   json.RawMessage `json:"item"`
}

// TestExampleGraders runs the example grader and every broken grader with
// Python itself: the example passes every positive canary, fails every
// negative, raises on the corrupt fixture and agrees with human_score on
// every case; each broken grader fails exactly its listed canaries.
func TestExampleGraders(t *testing.T) {
	if testing.Short() {
		t.Skip("runs python3")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH")
	}
	fsys := os.DirFS(repoRoot)
	example, err := fs.ReadFile(fsys, exampleDir+"/gradegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	canaries := exampleCanaries()
	if n := bytes.Count(example, []byte("\n  - name: ")); n != len(canaries) {
		t.Fatalf("gradegate.yaml has %d canaries, the test mirrors %d", n, len(canaries))
	}
	for _, c := range canaries {
		if !bytes.Contains(example, []byte("- name: "+c.name+"\n")) {
			t.Errorf("canary %s is not in gradegate.yaml", c.name)
		}
	}
	set, err := Load(fsys, exampleManifest(exampleDir, ""))
	if err != nil {
		t.Fatal(err)
	}

	graders := map[string]string{"order-summary": repoRoot + "/" + exampleDir + "/grader.py"}
	for name := range brokenGraders() {
		graders[name] = repoRoot + "/" + brokenDir + "/" + name + "/grader.py"
	}
	names := slices.Sorted(maps.Keys(graders))
	var calls []pyCall
	for _, g := range names {
		for _, c := range canaries {
			calls = append(calls, pyCall{g, json.RawMessage(c.sample), json.RawMessage(c.item)})
		}
	}
	for _, c := range set.Cases {
		calls = append(calls, pyCall{"order-summary", c.Sample, c.Item})
	}
	in, err := json.Marshal(map[string]any{"graders": graders, "calls": calls})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), python, "testdata/grade_calls.py")
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stderr = new(bytes.Buffer)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("grade_calls.py: %v\n%s", err, cmd.Stderr)
	}
	var outcomes []pyOutcome
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var o pyOutcome
		if err := dec.Decode(&o); err != nil {
			t.Fatal(err)
		}
		outcomes = append(outcomes, o)
	}
	if len(outcomes) != len(calls) {
		t.Fatalf("got %d outcomes for %d calls", len(outcomes), len(calls))
	}

	// A canary passes as the gate defines it: exact reward and polarity, or
	// a raise when expect_error.
	const passThreshold = 1.0
	canaryOK := func(c exampleCanary, o pyOutcome) bool {
		if c.expectError {
			return o.Class == "grader_exception"
		}
		return o.Class == "ok" && *o.Score == c.expect && (*o.Score >= passThreshold) == (c.expect >= passThreshold)
	}
	wantFailed := brokenGraders()
	wantFailed["order-summary"] = nil
	i := 0
	for _, g := range names {
		var failed []string
		for _, c := range canaries {
			if !canaryOK(c, outcomes[i]) {
				failed = append(failed, c.name)
			}
			i++
		}
		if diff := cmp.Diff(wantFailed[g], failed); diff != "" {
			t.Errorf("grader %s: failed canaries (-want +got):\n%s", g, diff)
		}
	}
	for _, c := range set.Cases {
		o := outcomes[i]
		i++
		if o.Class != "ok" {
			t.Errorf("case %s: %s (%v), want a score", c.ID, o.Class, *o.Error)
			continue
		}
		if pass := *o.Score >= passThreshold; pass != (*c.Label == 1) {
			t.Errorf("case %s: score %v disagrees with human_score %d", c.ID, *o.Score, *c.Label)
		}
	}
}
