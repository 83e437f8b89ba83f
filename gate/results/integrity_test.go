package results

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
)

// TestIntegrity: the digest a results file records is the one its rows
// give when read back, whether the rows were kept in memory or spooled
// (fast and slow paths alike), and any edit to a row changes it.
func TestIntegrity(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	rows := []CaseResult{
		{CaseID: "a", Slices: []string{"s"}, Status: StatusPass, Class: grading.ClassOK, Score: f(1), Scores: map[string]float64{"score": 1}, Line: 1},
		{CaseID: "café", Slices: []string{}, Status: StatusFail, Class: grading.ClassOK, Score: f(0), Output: `say "hi"` + "\n", Line: 2},
		{CaseID: "e", Slices: []string{}, Status: StatusError, Class: grading.ClassGraderException,
			Error: &grading.CaseError{Class: grading.ClassGraderException, Type: "KeyError", Message: "'x'"}, Judge: json.RawMessage(`{"model": "m"}`), Line: 3},
	}
	read := func(t *testing.T, doc []byte) (*Results, *Integrity) {
		t.Helper()
		head, err := ReadResultsHeader(bytes.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		cr := NewCaseReader(bytes.NewReader(doc))
		for {
			_, ok, err := cr.Next()
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
		}
		return head, cr.Integrity()
	}
	var kept bytes.Buffer
	if err := (&Results{Schema: ResultsSchema, Cases: rows}).WriteJSON(&kept); err != nil {
		t.Fatal(err)
	}
	sp, err := NewSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	for _, c := range rows {
		if err := sp.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := sp.Flush(); err != nil {
		t.Fatal(err)
	}
	var spooled bytes.Buffer
	if err := (&Results{Schema: ResultsSchema, Cases: []CaseResult{}, Rows: &CaseRows{spool: sp}}).WriteJSON(&spooled); err != nil {
		t.Fatal(err)
	}
	var sums []string
	for name, doc := range map[string][]byte{"kept": kept.Bytes(), "spooled": spooled.Bytes()} {
		head, got := read(t, doc)
		if err := CheckIntegrity(name, head, got); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if head.Integrity == nil || head.Integrity.Rows != len(rows) {
			t.Fatalf("%s: integrity %+v, want %d rows", name, head.Integrity, len(rows))
		}
		sums = append(sums, head.Integrity.RowsSHA256)
		forged := bytes.Replace(doc, []byte(`"status": "fail"`), []byte(`"status": "pass"`), 1)
		head, got = read(t, forged)
		if err := CheckIntegrity(name, head, got); err == nil || !strings.Contains(err.Error(), "do not match") {
			t.Errorf("%s: a forged row: %v, want a mismatch", name, err)
		}
	}
	if sums[0] != sums[1] {
		t.Errorf("kept and spooled rows give %s and %s, want one digest", sums[0], sums[1])
	}
}
