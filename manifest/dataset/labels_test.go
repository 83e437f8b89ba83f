package dataset

import (
	"os"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/gradegate/gradegate/manifest"
)

const cancellationDir = "testdata/examples/cancellation"

// loadCancellation reads the cancellation example through its own
// manifest.
func loadCancellation(t *testing.T) (*manifest.Manifest, *Set, *LabelSummary) {
	t.Helper()
	fsys := os.DirFS(repoRoot)
	m, err := manifest.Load(fsys, cancellationDir+"/gradegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := Open(fsys, m)
	var cases []Case
	for {
		c, ok := r.Next()
		if !ok {
			break
		}
		cases = append(cases, c)
	}
	sum, err := r.Close()
	if err != nil {
		t.Fatal(err)
	}
	return m, &Set{Cases: cases, Intended: sum.Intended, Findings: sum.Findings}, sum.Labels
}

// TestCancellationLabelFindings holds the example to the finding each of
// its label rows is there to show.
func TestCancellationLabelFindings(t *testing.T) {
	_, set, _ := loadCancellation(t)
	type found struct {
		Code     string
		Severity manifest.Severity
		CaseID   string
	}
	var got []found
	for _, f := range set.Findings {
		if f.Code == "image_packages_missing" {
			continue
		}
		got = append(got, found{f.Code, f.Severity, f.CaseID})
	}
	want := []found{
		{CodeLabelWithoutReason, manifest.SeverityHold, "cancel-eligible-006"},
		{CodeStaleLabel, manifest.SeverityWarn, "cancel-shipped-013"},
		{CodeLabelWithoutReason, manifest.SeverityHold, "cancel-injection-007"},
		{CodeNearDuplicate, manifest.SeverityWarn, "cancel-eligible-006"},
		{CodeNearDuplicate, manifest.SeverityWarn, "cancel-shipped-012"},
		// The shipped pair differ in label too, but each states its own
		// reason: no conflict.
		{CodeNearDuplicateLabelConflict, manifest.SeverityHold, "cancel-eligible-006"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	for _, f := range set.Findings {
		if f.Code == CodeNearDuplicateLabelConflict {
			for _, part := range []string{`"cancel-eligible-005" (line 3) human_score 0, reason "Claims the cancellation without verifying ownership first."`,
				`"cancel-eligible-006" (line 4) human_score 1, no reason`} {
				if !strings.Contains(f.Message, part) {
					t.Errorf("conflict message %q does not name %s", f.Message, part)
				}
			}
		}
	}
}

func TestCancellationLabelSummary(t *testing.T) {
	_, set, sum := loadCancellation(t)
	ids := func(l *CaseList) []string {
		var out []string
		for _, c := range l.Cases {
			out = append(out, c.CaseID)
		}
		return out
	}
	if got := ids(&sum.Brittle); !cmp.Equal(got, []string{"cancel-injection-005"}) {
		t.Errorf("brittle = %v", got)
	}
	if d := sum.Brittle.Cases[0].Detail; d != "ana 1, ben 0" {
		t.Errorf("brittle detail = %q", d)
	}
	warn := map[string][]string{}
	for status, l := range sum.WarnOnly {
		warn[status] = ids(l)
	}
	wantWarn := map[string][]string{"disputed": {"cancel-shipped-014"}, "novel": {"cancel-injection-006"}, "pending_review": {"cancel-eligible-007"}}
	if diff := cmp.Diff(wantWarn, warn); diff != "" {
		t.Errorf("warn-only (-want +got):\n%s", diff)
	}
	if got := ids(&sum.Stale); !cmp.Equal(got, []string{"cancel-shipped-013"}) || !sum.Excluded {
		t.Errorf("stale = %v, excluded %v", got, sum.Excluded)
	}
	wantAgree := map[string]Agreement{
		"eligible_missing_auth": {Rows: 2, Table: [2][2]int{{1, 0}, {0, 1}}},
		"instruction_conflict":  {Rows: 3, Table: [2][2]int{{1, 0}, {1, 1}}},
	}
	gotAgree := map[string]Agreement{}
	for s, a := range sum.Agreement {
		gotAgree[s] = *a
	}
	if diff := cmp.Diff(wantAgree, gotAgree); diff != "" {
		t.Errorf("agreement (-want +got):\n%s", diff)
	}
	// The reason and the reviewers' labels give the label away: the
	// grader sees neither.
	for _, c := range set.Cases {
		for _, field := range []string{"human_score", "human_reason", "reviewer_labels"} {
			if strings.Contains(string(c.ItemForGrader()), `"`+field+`"`) {
				t.Errorf("%s: the grader's item holds %s: %s", c.ID, field, c.ItemForGrader())
			}
		}
	}
}

func TestReviewerLabels(t *testing.T) {
	tests := []struct {
		name    string
		item    string
		label   *int
		finding string // a finding's message part; "" for none
	}{
		{"agreeing reviewers give the label", `"reviewer_labels": [{"reviewer": "a", "score": 1}, {"reviewer": "b", "score": 1}]`, intp(1), ""},
		{"the adjudicated label stays", `"human_score": 0, "reviewer_labels": [{"reviewer": "a", "score": 1}, {"reviewer": "b", "score": 1}]`, intp(0), ""},
		{"disagreeing reviewers give none", `"reviewer_labels": [{"reviewer": "a", "score": 1}, {"reviewer": "b", "score": 0}]`, nil, ""},
		{"not a list", `"reviewer_labels": {"a": 1}`, nil, "must be a list of {reviewer, score, reason}, not an object"},
		{"boolean score", `"reviewer_labels": [{"reviewer": "a", "score": true}]`, nil, "[0].score must be 0 or 1, not true"},
		{"no reviewer", `"reviewer_labels": [{"score": 1}]`, nil, "[0].reviewer must be a non-empty string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{"s/cases.jsonl": {Data: []byte(`{"item": {"case_id": "c1", ` + tt.item + "}}\n")}}
			m := testManifest("s")
			m.Dataset.NearDuplicates.Enabled = new(bool)
			set, err := Load(fsys, m)
			if err != nil {
				t.Fatal(err)
			}
			c := set.Cases[0]
			if !cmp.Equal(c.Label, tt.label) {
				t.Errorf("label = %v, want %v", c.Label, tt.label)
			}
			i := slices.IndexFunc(set.Findings, func(f manifest.Finding) bool { return f.Code == CodeLabelDomain })
			switch {
			case tt.finding == "" && i >= 0:
				t.Errorf("unexpected finding %v", set.Findings[i])
			case tt.finding != "" && (i < 0 || !strings.Contains(set.Findings[i].Message, tt.finding)):
				t.Errorf("findings %v, want a label_domain with %q", set.Findings, tt.finding)
			}
		})
	}
}

func TestNearDuplicateLabelConflict(t *testing.T) {
	const request = "Please cancel my order A-221 before it ships, I no longer need the desk lamp I bought last week."
	row := func(id string, label int, reason string) string {
		r := ""
		if reason != "" {
			r = `, "human_reason": "` + reason + `"`
		}
		return `{"item": {"case_id": "` + id + `", "request": "` + request + `", "human_score": ` + string(rune('0'+label)) + r + "}}\n"
	}
	tests := []struct {
		name     string
		rows     string
		controls bool
		want     string // part of the conflict's message; "" for no conflict
		severity manifest.Severity
	}{
		{"same labels", row("a", 1, "") + row("b", 1, ""), false, "", ""},
		{"different labels, one without a reason", row("a", 1, "Asks for the ownership check first.") + row("b", 0, ""), false,
			"1 labeled without a reason", manifest.SeverityWarn},
		{"different labels, the same reason", row("a", 1, "Asks for the ownership check first.") + row("b", 0, "asks for the  ownership check first."), true,
			"1 give a reason also given for the other label", manifest.SeverityHold},
		{"different labels, different reasons", row("a", 1, "Asks for the ownership check first.") + row("b", 0, "Cancels before any ownership check."), true, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{"s/cases.jsonl": {Data: []byte(tt.rows)}}
			m := testManifest("s")
			m.Gate.RequireControls = tt.controls
			set, err := Load(fsys, m)
			if err != nil {
				t.Fatal(err)
			}
			got := findingsWith(set.Findings, CodeNearDuplicateLabelConflict)
			switch {
			case tt.want == "" && len(got) > 0:
				t.Errorf("unexpected conflict %v", got)
			case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0].Message, tt.want) || got[0].Severity != tt.severity):
				t.Errorf("conflicts %v, want one of severity %s saying %q", got, tt.severity, tt.want)
			}
		})
	}
}
