package shadow

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/sandbox"
	"github.com/gradegate/gradegate/gate/worker"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// TestMain lets the test binary stand in for gradegate: re-executed as the
// sandbox launcher, package confine's init runs it as one, before
// TestMain.
func TestMain(m *testing.M) {
	// As main does: keep this process's environment from graders of the
	// same uid.
	if err := sandbox.Init(os.Args); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// The fake runner's "source" is a JSON object from task id to what grading
// that task gives: a number is an ok score, a string an error class.
// Tasks it does not name score 1. The source "load" does not load.
type fakeRunner map[string]any

func (f fakeRunner) Grade(_ context.Context, tasks []grading.Task) ([]grading.Outcome, error) {
	out := make([]grading.Outcome, len(tasks))
	for i, t := range tasks {
		v, ok := f[t.ID]
		if !ok {
			v = 1.0
		}
		switch v := v.(type) {
		case float64:
			out[i] = grading.Outcome{Class: grading.ClassOK, Score: &v}
		case string:
			out[i] = grading.Outcome{Class: grading.Class(v), Error: &grading.CaseError{Class: grading.Class(v), Type: "KeyError", Message: "boom", Line: 7}}
		}
	}
	return out, nil
}

func (fakeRunner) Sandbox() grading.Sandbox { return grading.Sandbox{UID: -1, Unsandboxed: true} }

func fakeFactory(_ context.Context, src []byte) (grading.Runner, func(), error) {
	if string(src) == "load" {
		return nil, nil, &worker.LoadError{Err: grading.CaseError{Class: grading.ClassGraderException, Type: "SyntaxError", Message: "invalid syntax", Line: 2}}
	}
	var f fakeRunner
	if err := json.Unmarshal(src, &f); err != nil {
		return nil, nil, err
	}
	return f, func() {}, nil
}

func f(v float64) *float64 { return &v }

func label(v int) *int { return &v }

func suite() (*manifest.Manifest, []dataset.Case) {
	m := &manifest.Manifest{
		Grader: manifest.Grader{PassThreshold: 1},
		Canaries: []manifest.Canary{
			{Name: "good", Expect: f(1)},
			{Name: "bad", Expect: f(0)},
		},
		Gate: manifest.Gate{Slices: []manifest.SliceRule{{Name: "zeta"}, {Name: "alpha"}}},
	}
	sample := json.RawMessage(`{"output_text": "x"}`)
	cases := []dataset.Case{
		{ID: "a1", Slices: []string{"alpha"}, Sample: sample, Label: label(1)},
		{ID: "a2", Slices: []string{"alpha", "zeta"}, Sample: sample},
		{ID: "z1", Slices: []string{"zeta"}, Sample: sample},
		{ID: "n1", Sample: sample},
		{ID: "nosample", Slices: []string{"alpha"}},
	}
	return m, cases
}

func TestRun(t *testing.T) {
	tests := []struct {
		name        string
		base, head  string
		changed     []Change
		overall     SliceRow
		bySlice     []SliceRow
		canaryDiffs []string
	}{
		{
			name: "same outcomes: nothing changed",
			base: `{"bad": 0}`, head: `{"bad": 0}`,
			changed: []Change{},
			overall: SliceRow{Cases: 4, BasePassRate: f(1), HeadPassRate: f(1)},
			bySlice: []SliceRow{
				{Slice: "zeta", Cases: 2, BasePassRate: f(1), HeadPassRate: f(1)},
				{Slice: "alpha", Cases: 2, BasePassRate: f(1), HeadPassRate: f(1)},
			},
		},
		{
			name: "a pass becomes a fail and a score moves above the threshold",
			base: `{"bad": 0, "z1": 0}`, head: `{"bad": 0, "a2": 0, "z1": 1.5}`,
			changed: []Change{
				{CaseID: "a2", Slices: []string{"alpha", "zeta"},
					Base: Grade{Status: StatusPass, Class: grading.ClassOK, Score: f(1)},
					Head: Grade{Status: StatusFail, Class: grading.ClassOK, Score: f(0)}},
				{CaseID: "z1", Slices: []string{"zeta"},
					Base: Grade{Status: StatusFail, Class: grading.ClassOK, Score: f(0)},
					Head: Grade{Status: StatusPass, Class: grading.ClassOK, Score: f(1.5)}},
			},
			overall: SliceRow{Cases: 4, Changed: 2, BasePassRate: f(0.75), HeadPassRate: f(0.75)},
			bySlice: []SliceRow{
				{Slice: "zeta", Cases: 2, Changed: 2, BasePassRate: f(0.5), HeadPassRate: f(0.5)},
				{Slice: "alpha", Cases: 2, Changed: 1, BasePassRate: f(1), HeadPassRate: f(0.5)},
			},
		},
		{
			name: "a case that starts to raise changes class and leaves the pass rate's denominator",
			base: `{"bad": 0}`, head: `{"bad": 0, "n1": "grader_exception"}`,
			changed: []Change{
				{CaseID: "n1", Slices: []string{},
					Base: Grade{Status: StatusPass, Class: grading.ClassOK, Score: f(1)},
					Head: Grade{Status: StatusError, Class: grading.ClassGraderException,
						Error: &grading.CaseError{Class: grading.ClassGraderException, Type: "KeyError", Message: "boom", Line: 7}}},
			},
			overall: SliceRow{Cases: 4, Changed: 1, BasePassRate: f(1), HeadPassRate: f(1)},
			bySlice: []SliceRow{
				{Slice: "zeta", Cases: 2, BasePassRate: f(1), HeadPassRate: f(1)},
				{Slice: "alpha", Cases: 2, BasePassRate: f(1), HeadPassRate: f(1)},
			},
		},
		{
			name: "same error class on both sides is no change",
			base: `{"bad": 0, "a1": "timeout"}`, head: `{"bad": 0, "a1": "timeout"}`,
			changed: []Change{},
			overall: SliceRow{Cases: 4, BasePassRate: f(1), HeadPassRate: f(1)},
			bySlice: []SliceRow{
				{Slice: "zeta", Cases: 2, BasePassRate: f(1), HeadPassRate: f(1)},
				{Slice: "alpha", Cases: 2, BasePassRate: f(1), HeadPassRate: f(1)},
			},
		},
		{
			name: "a head that breaks a canary and a base that does not load",
			base: "load", head: `{}`,
			changed: []Change{
				{CaseID: "a1", Slices: []string{"alpha"}, Base: loadGrade(), Head: passGrade()},
				{CaseID: "a2", Slices: []string{"alpha", "zeta"}, Base: loadGrade(), Head: passGrade()},
				{CaseID: "z1", Slices: []string{"zeta"}, Base: loadGrade(), Head: passGrade()},
				{CaseID: "n1", Slices: []string{}, Base: loadGrade(), Head: passGrade()},
			},
			overall: SliceRow{Cases: 4, Changed: 4, HeadPassRate: f(1)},
			bySlice: []SliceRow{
				{Slice: "zeta", Cases: 2, Changed: 2, HeadPassRate: f(1)},
				{Slice: "alpha", Cases: 2, Changed: 2, HeadPassRate: f(1)},
			},
			canaryDiffs: []string{"good", "bad"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, cases := suite()
			r, err := Run(context.Background(), []byte(tc.base), []byte(tc.head), m, cases, fakeFactory)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if diff := cmp.Diff(tc.changed, r.Changed); diff != "" {
				t.Errorf("changed (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.overall, r.Overall); diff != "" {
				t.Errorf("overall (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.bySlice, r.BySlice); diff != "" {
				t.Errorf("by_slice (-want +got):\n%s", diff)
			}
			var canaryDiffs []string
			for _, c := range r.Canaries {
				if c.Changed {
					canaryDiffs = append(canaryDiffs, c.Name)
				}
			}
			if diff := cmp.Diff(tc.canaryDiffs, canaryDiffs); diff != "" {
				t.Errorf("changed canaries (-want +got):\n%s", diff)
			}
			if want := len(tc.changed) > 0 || len(tc.canaryDiffs) > 0; r.AnyChanged() != want {
				t.Errorf("AnyChanged = %v, want %v", r.AnyChanged(), want)
			}
			if r.Base.SHA256 == "" || len(r.Base.SHA256) != 64 {
				t.Errorf("base sha256 %q", r.Base.SHA256)
			}
			for _, write := range []func(*bytes.Buffer) error{
				func(b *bytes.Buffer) error { return r.WriteText(b) },
				func(b *bytes.Buffer) error { return r.WriteMarkdown(b) },
			} {
				var b bytes.Buffer
				if err := write(&b); err != nil {
					t.Fatal(err)
				}
				for _, c := range tc.changed {
					if !strings.Contains(b.String(), c.CaseID) {
						t.Errorf("view does not name %s:\n%s", c.CaseID, b.String())
					}
				}
			}
		})
	}
}

func loadGrade() Grade {
	return Grade{Status: StatusError, Class: grading.ClassGraderException,
		Error: &grading.CaseError{Class: grading.ClassGraderException, Type: "SyntaxError", Message: "invalid syntax", Line: 2}}
}

func passGrade() Grade { return Grade{Status: StatusPass, Class: grading.ClassOK, Score: f(1)} }

func TestRunToolError(t *testing.T) {
	m, cases := suite()
	_, err := Run(context.Background(), []byte(`{}`), []byte(`not json`), m, cases, fakeFactory)
	if err == nil || !strings.Contains(err.Error(), "head") {
		t.Errorf("err = %v, want the head's runner failure", err)
	}
	short := func(context.Context, []byte) (grading.Runner, func(), error) { return shortRunner{}, func() {}, nil }
	if _, err := Run(context.Background(), []byte("a"), []byte("b"), m, cases, short); err == nil {
		t.Error("a runner that drops outcomes must fail the run")
	}
}

type shortRunner struct{}

func (shortRunner) Grade(context.Context, []grading.Task) ([]grading.Outcome, error) { return nil, nil }
func (shortRunner) Sandbox() grading.Sandbox                                         { return grading.Sandbox{} }

func TestReportJSON(t *testing.T) {
	m, cases := suite()
	r, err := Run(context.Background(), []byte(`{"bad": 0}`), []byte(`{"bad": 0, "z1": 0}`), m, cases, fakeFactory)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(got, &doc); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"schema", "base", "head", "changed", "by_slice"} {
		if _, ok := doc[key]; !ok {
			t.Errorf("no %q in %s", key, got)
		}
	}
	wantChanged := `[{"case_id":"z1","slices":["zeta"],"base":{"status":"pass","class":"ok","score":1},"head":{"status":"fail","class":"ok","score":0}}]`
	if string(doc["changed"]) != wantChanged {
		t.Errorf("changed = %s\nwant      %s", doc["changed"], wantChanged)
	}
	if !strings.HasPrefix(string(doc["by_slice"]), `[{"slice":"zeta","cases":2,"changed":1,"base_pass_rate":1,"head_pass_rate":0.5}`) {
		t.Errorf("by_slice = %s", doc["by_slice"])
	}
}

// TestRunWorkerPool shadows the example grader with the broken isinstance
// grader as the base, on real (unsandboxed) worker pools: only the canary
// whose fixture reaches the difference changes.
func TestRunWorkerPool(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Python worker pools")
	}
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Skipf("no python3: %v", err)
	}
	py, err := worker.ResolvePython(context.Background(), strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.New(sandbox.WithUnsandboxed(true), sandbox.WithLauncher(os.Args[0]))
	if err != nil {
		t.Fatal(err)
	}
	fsys := os.DirFS("../..")
	m, err := manifest.Load(fsys, "testdata/examples/order-summary/gradegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	set, err := dataset.Load(fsys, m)
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("../..", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	base := read("testdata/examples/broken/isinstance/grader.py")
	head := read("testdata/examples/order-summary/grader.py")
	pools := func(ctx context.Context, src []byte) (grading.Runner, func(), error) {
		p, err := worker.New(ctx, worker.Config{
			Source: src, SourceName: "grader.py", Metric: m.Grader.Metric, TimeoutSeconds: 10,
			MemoryMB: m.Grader.MemoryMB, Workers: 4, Python: py, Sandbox: sb,
		})
		if err != nil {
			return nil, nil, err
		}
		return p, func() {
			if err := p.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}, nil
	}
	r, err := Run(context.Background(), base, head, m, set.Cases, pools)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", b.String())
	var changed []string
	for _, c := range r.Canaries {
		if c.Changed {
			changed = append(changed, c.Name)
			if c.Base.Status != "fail" || c.Head.Status != "pass" {
				t.Errorf("%s: base %+v head %+v, want fail then pass", c.Name, c.Base, c.Head)
			}
		}
	}
	if diff := cmp.Diff([]string{"boolean-total-one-cent"}, changed); diff != "" {
		t.Errorf("changed canaries (-want +got):\n%s", diff)
	}
}
